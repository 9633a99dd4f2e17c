"""The ``trace_report`` tool of the ``trace`` profile: one test run in the sandboxed shell with every call of the
project's own code recorded, returned as a bounded report (JSON in ``data["report"]``, compact text as the output).

    trace_report(test="tests/test_cart.py::test_fresh_cart_is_empty")
    # trace of tests/test_cart.py::test_fresh_cart_is_empty: failed (exit 1); 5 project call(s), 0 cut
    # #3 make(owner='b') -> <shop.Cart object>  [shop/cart.py:11]
    #   #4 Cart.__init__(self=<shop.Cart object>, owner='b', items=[('x', 1)]) -> None  [shop/cart.py:2]
    #      self.items: None -> [('x', 1)]

The tracer (``env/sandbox/inside/calltrace.py``, standard library only) runs through ``runtime.shell`` exactly as a
``run_bash`` command would: the same isolation, limits and workspace. Its report is what the agent's own program
printed, so it is information for the agent, checked for shape here and never part of a reward.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from env.sandbox.runner import RefusedToRun
from env.sandbox.shell import ShellError
from env.tools.base import Tool, ToolContext, ToolError, ToolResult, register
from env.tools.shell import command_environment

TRACER = Path(__file__).resolve().parents[1] / "sandbox" / "inside" / "calltrace.py"
MARKER = "<<adbg-trace-report>>"
_END = "ADBG_TRACE_SOURCE_END"


class TraceArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    test: str = Field(min_length=1, max_length=500, pattern=r"^[^\s\x00]+$",
                      description="The test to trace: tests/test_x.py::test_name (or a test file)")
    max_calls: int = Field(40, ge=1, le=200, description="Calls kept in the report; the failing path is kept first")


class TraceCall(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: int
    function: str
    path: str
    line: int
    thread: str
    caller: int | None
    args: dict[str, str]
    returned: str | None = None
    raised: str | None = None
    locals_changed: dict[str, list[str | None]] = {}
    self_changed: dict[str, list[str | None]] = {}


class TraceReport(BaseModel):
    model_config = ConfigDict(extra="forbid")
    test: str
    exit_code: int
    calls: list[TraceCall]
    calls_made: int
    cut: int
    pytest: str


def parse_report(output: str) -> TraceReport | None:
    """The last report line the run printed, checked for shape; None when there is none or it does not parse. Only a
    marker at a line's start counts: the report's own ``pytest`` text may quote one (JSON-escaped, on the same line)."""
    at = ("\n" + output).rfind("\n" + MARKER)
    if at < 0:
        return None
    try:
        return TraceReport.model_validate(json.loads(output[at + len(MARKER) :].split("\n", 1)[0]))
    except (ValueError, ValidationError):
        return None


_OUTCOME = {0: "passed", 1: "failed", 2: "interrupted", 3: "internal error", 4: "usage error", 5: "no test collected"}


def render(report: TraceReport) -> str:
    """One line per call, indented under its caller, then what it changed."""
    outcome = _OUTCOME.get(report.exit_code, "ended")
    lines = [f"trace of {report.test}: {outcome} (exit {report.exit_code}); {report.calls_made} project call(s), {report.cut} cut"]
    kept = {call.id: call for call in report.calls}
    threads = {call.thread for call in report.calls}
    for call in report.calls:
        depth, up = 0, call.caller
        while up in kept and depth < 20:
            depth, up = depth + 1, kept[up].caller
        pad = "  " * depth
        args = ", ".join(f"{k}={v}" for k, v in call.args.items())
        end = f"raised {call.raised}" if call.raised else f"-> {call.returned}"
        where = f"{call.path}:{call.line}" + (f", {call.thread}" if len(threads) > 1 else "")
        lines.append(f"{pad}#{call.id} {call.function}({args}) {end}  [{where}]")
        for name, (old, new) in call.self_changed.items():
            lines.append(f"{pad}   self.{name}: {old} -> {new}")
        for name, (old, new) in call.locals_changed.items():
            lines.append(f"{pad}   {name}: {old} -> {new}")
    if report.cut:
        lines.append(f"({report.cut} call(s) not shown: the failing path is kept first, then the latest calls)")
    return "\n".join(lines)


@register
class TraceReportTool(Tool[TraceArgs]):
    name = "trace_report"
    description = (
        "Run one test in the sandbox and report the project's own calls on the way to its result: each call's "
        "function and place, arguments, return value or exception, caller, and what it changed in its locals and in "
        "self's attributes. Bounded: the failing path is kept first."
    )
    Args = TraceArgs

    def run(self, ctx: ToolContext, args: TraceArgs) -> ToolResult:
        source = TRACER.read_text(encoding="utf-8")
        command = f"python - {shlex.quote(args.test)} {args.max_calls} <<'{_END}'\n{source}\n{_END}\n"
        try:
            result = ctx.runtime.shell.run(ctx.workspace.root, command, env=command_environment(ctx))
        except RefusedToRun as exc:
            raise ToolError(f"trace_report: tests cannot run on this server: {exc}") from None
        except ShellError as exc:
            raise ToolError(f"trace_report: {exc}") from None
        report = parse_report(result.output)
        if result.timed_out:
            raise ToolError(f"trace_report: the traced run {result.note}; trace a smaller test")
        if report is None:
            tail = result.output.strip()[-600:]
            raise ToolError(f"trace_report: the traced run printed no report (exit status {result.exit_code}): {tail}")
        if report.exit_code in (4, 5):
            raise ToolError(f"trace_report: no test {args.test!r} ran: {report.pytest.strip().splitlines()[-1] if report.pytest.strip() else ''}")
        return ToolResult(output=render(report), data={"report": report.model_dump(exclude_defaults=True)})
