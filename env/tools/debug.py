"""Debugger tools (one per command), the restricted script runner, and the relay marker.

    debug_start {"test": "tests/test_cart.py::test_total"}     # stops at the test's first line
    debug_break {"path": "shop/cart.py", "line": 40, "condition": "qty > 3"}
    debug_continue {} / debug_step {} / debug_next {} / debug_return {} / debug_until {"line": 52}
    debug_where {} / debug_inspect {"frame": 1} / debug_eval {"expression": "len(items)"} / debug_list {}
    debug_restart {}                                            # same target, breakpoints kept

Each returns the pdb-like text as the tool's output and the same facts as data (frame, stack,
variables with type names and capped reprs). The session lives in ``ctx.debugger``.
"""

from __future__ import annotations

from typing import Literal, cast

from pydantic import BaseModel, ConfigDict, Field

from env.debugger.session import DebugError, DebugResult
from env.tools.base import ArgsT, NoArgs, Tool, ToolContext, ToolError, ToolResult, register
from env.tools.files import MAX_WRITE_CHARS
from env.workspace import PathError, check_path

SCRIPT_NAME = "_adbg_script.py"  # where inline code goes inside the run (never in the workspace)


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _result(result: DebugResult) -> ToolResult:
    return ToolResult(output=result.text, data=result.data)


def _path(path: str) -> str:
    try:
        return check_path(path)
    except PathError as exc:
        raise ToolError(str(exc)) from None


class _DebugTool(Tool[ArgsT]):
    def run(self, ctx: ToolContext, args: ArgsT) -> ToolResult:
        try:
            return _result(self.command(ctx, args))
        except DebugError as exc:
            raise ToolError(str(exc)) from None

    def command(self, ctx: ToolContext, args: ArgsT) -> DebugResult:
        raise NotImplementedError  # each command below defines it


class StartArgs(_Args):
    test: str | None = Field(None, max_length=500, description="A test id (tests/test_x.py::test_name, or a unique test name)")
    script: str | None = Field(None, max_length=255, description="Or a Python file in the repository to run as __main__")
    stop_at_entry: bool = Field(True, description="Stop at the first line of the test or script (else run to a breakpoint)")


@register
class DebugStart(_DebugTool[StartArgs]):
    name = "debug_start"
    description = (
        "Start a debugging session on a test or a script (ends any running session). It stops at the first line of "
        "the test or script, or at the first breakpoint with stop_at_entry=false."
    )
    Args = StartArgs

    def command(self, ctx: ToolContext, args: StartArgs) -> DebugResult:
        return ctx.debugger.start(test=args.test, script=_path(args.script) if args.script is not None else None, stop_at_entry=args.stop_at_entry)


class BreakArgs(_Args):
    path: str = Field(description="File relative to the repository root")
    line: int = Field(ge=1, description="Line number (a line holding code)")
    condition: str | None = Field(None, description="Stop only when this Python expression is true in that frame")
    log_message: str | None = Field(
        None, description="A logpoint: instead of stopping, write this message to the program's output; {expression} parts are evaluated in the frame",
    )


@register
class DebugBreak(_DebugTool[BreakArgs]):
    name = "debug_break"
    description = (
        "Set a breakpoint at path:line, optionally with a condition, or a logpoint (log_message: logs and goes on). "
        "Breakpoints survive edits (they move with the code) and restarts."
    )
    Args = BreakArgs

    def command(self, ctx: ToolContext, args: BreakArgs) -> DebugResult:
        return ctx.debugger.add_break(_path(args.path), args.line, args.condition, args.log_message)


class ClearArgs(_Args):
    path: str | None = Field(None, description="File of the breakpoint(s); omit to clear every breakpoint")
    line: int | None = Field(None, ge=1, description="Line of the breakpoint; omit to clear all in the file")


@register
class DebugClear(_DebugTool[ClearArgs]):
    name = "debug_clear"
    description = "Clear a breakpoint (path and line), every breakpoint in a file (path), or all of them (no arguments)."
    Args = ClearArgs

    def command(self, ctx: ToolContext, args: ClearArgs) -> DebugResult:
        if args.line is not None and args.path is None:
            raise DebugError("debug_clear: 'line' needs 'path'")
        return ctx.debugger.clear_break(_path(args.path) if args.path is not None else None, args.line)


def _resume(name: str, how: str, description: str) -> None:
    def command(self: _DebugTool[NoArgs], ctx: ToolContext, args: NoArgs) -> DebugResult:
        return ctx.debugger.resume(how)

    made = type(f"Debug{how.title()}", (_DebugTool,), {"name": name, "description": description, "command": command})
    register(cast("type[_DebugTool[NoArgs]]", made))  # type() says only that it made a class


_resume("debug_continue", "continue", "Run until the next breakpoint or the end of the program.")
_resume("debug_step", "step", "Run the current line, stopping at the first line of any function of the project it calls.")
_resume("debug_next", "next", "Run the current line, stepping over calls; stops at the next line of this function (or its caller).")
_resume("debug_return", "return", "Run until the current function returns; shows the value it returns.")


class UntilArgs(_Args):
    line: int | None = Field(None, ge=1, description="Stop at the first line >= this one in the current function (default: past the current line, e.g. out of a loop)")


@register
class DebugUntil(_DebugTool[UntilArgs]):
    name = "debug_until"
    description = "Run until a line past the current one (or past 'line') is reached in the current function, or it returns."
    Args = UntilArgs

    def command(self, ctx: ToolContext, args: UntilArgs) -> DebugResult:
        return ctx.debugger.resume("until", args.line)


@register
class DebugWhere(_DebugTool[NoArgs]):
    name = "debug_where"
    description = "Show the stack of the project's frames (frame 0 is the current one)."

    def command(self, ctx: ToolContext, args: NoArgs) -> DebugResult:
        return ctx.debugger.where()


class InspectArgs(_Args):
    frame: int = Field(0, ge=0, description="0 = the current frame, 1 = its caller ...")
    scope: Literal["locals", "globals"] = "locals"


@register
class DebugInspect(_DebugTool[InspectArgs]):
    name = "debug_inspect"
    description = "Show the local (or global) variables of a frame, each with its type and a short repr."
    Args = InspectArgs

    def command(self, ctx: ToolContext, args: InspectArgs) -> DebugResult:
        return ctx.debugger.inspect(args.frame, args.scope)


class EvalArgs(_Args):
    expression: str = Field(min_length=1, description="A Python expression (or a statement such as x = 1) evaluated in the frame")
    frame: int = Field(0, ge=0, description="0 = the current frame, 1 = its caller ...")


@register
class DebugEval(_DebugTool[EvalArgs]):
    name = "debug_eval"
    description = "Evaluate a Python expression in a frame of the stopped program and show its value and type."
    Args = EvalArgs

    def command(self, ctx: ToolContext, args: EvalArgs) -> DebugResult:
        return ctx.debugger.evaluate(args.expression, args.frame)


class ListArgs(_Args):
    start: int | None = Field(None, ge=1, description="First line (default: around the current line)")
    end: int | None = Field(None, ge=1, description="Last line")


@register
class DebugList(_DebugTool[ListArgs]):
    name = "debug_list"
    description = "List the source of the current file around the current line ('->' marks it, 'B' marks breakpoints)."
    Args = ListArgs

    def command(self, ctx: ToolContext, args: ListArgs) -> DebugResult:
        return ctx.debugger.listing(args.start, args.end)


@register
class DebugRestart(_DebugTool[NoArgs]):
    name = "debug_restart"
    description = "Start the last debugged test or script again on the current code, keeping the breakpoints."

    def command(self, ctx: ToolContext, args: NoArgs) -> DebugResult:
        return ctx.debugger.restart()


class ScriptArgs(_Args):
    path: str | None = Field(None, max_length=255, description="A Python file in the repository to run")
    code: str | None = Field(None, description="Or Python source to run (it sees the repository's files)")


@register
class RunScript(Tool[ScriptArgs]):
    name = "run_script"
    description = (
        "Run a Python script (a file of the repository, or inline code) in the sandbox, with the project importable. "
        "No shell, no network; files it writes are discarded. Shows its output and exit status."
    )
    Args = ScriptArgs

    def run(self, ctx: ToolContext, args: ScriptArgs) -> ToolResult:
        if (args.path is None) == (args.code is None):
            raise ToolError("run_script: give exactly one of 'path' (a Python file in the repository) or 'code'")
        files: dict[str, str | bytes] = dict(ctx.project.files())
        if args.code is not None:
            if len(args.code) > MAX_WRITE_CHARS or "\0" in args.code:
                raise ToolError(f"run_script: 'code' must be text of at most {MAX_WRITE_CHARS} characters without NUL")
            files[SCRIPT_NAME] = args.code
            target = SCRIPT_NAME
        else:
            target = _path(args.path or "")
            if target not in files or not target.endswith(".py"):
                raise ToolError(f"run_script: no Python file {args.path!r} in the repository")
        sandbox = ctx.runtime.debug_sandbox
        with sandbox.start_debug(files, ctx.project.paths, ctx.project.environ, {"kind": "script", "path": target}, [], False) as run:
            ready = run.ready if isinstance(run.ready, dict) else {}
            status = ready.get("reason") or (run.result.aborted and f"the script was stopped: {run.result.aborted}") or "the script did not start"
            if run.load_error is not None:
                status = f"the script could not start: {run.load_error.exc_type}: {run.load_error.message}"
        output = run.result.output.rstrip("\n")
        return ToolResult(
            output=(output + "\n" if output else "") + f"[{status}]",
            data={"status": ready.get("status"), "timed_out": run.result.timed_out, "output_truncated": run.result.output_truncated},
        )


@register
class NewRelay(Tool[NoArgs]):
    name = "new_relay"
    description = "Mark a relay boundary (your context was summarised and restarted): the edit gate, if on, locks again."

    def run(self, ctx: ToolContext, args: NoArgs) -> ToolResult:
        return ToolResult(output="A new relay has started.")
