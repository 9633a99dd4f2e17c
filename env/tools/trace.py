"""The ``trace_report`` tool of the ``trace`` profile: one test run in the sandboxed shell with every call of the
project's own code recorded, returned as a bounded report (JSON in ``data["report"]``, compact text as the output).

    trace_report(test="tests/test_cart.py::test_fresh_cart_is_empty")
    # trace of tests/test_cart.py::test_fresh_cart_is_empty: failed (exit 1); 5 project call(s), 0 cut
    # #3 make(owner='b') -> <shop.Cart object>  [shop/cart.py:11]
    #   #4 Cart.__init__(self=<shop.Cart object>, owner='b', items=[('x', 1)]) -> None  [shop/cart.py:2]
    #      self.items: None -> [('x', 1)]

Two runs make a report, and neither is read from what the project's code prints:

* the outcome and the failure (``exit_code``, ``pytest``) come from the trusted side (``env.tools.traced_outcome``:
  the split verdict's run of the test, as ``run_tests`` runs it), its frames as ``path:line in function`` with a
  source line only where the view shows the file;
* the calls come from the tracer (``env/sandbox/inside/calltrace.py``, standard library only), run through
  ``runtime.shell`` as a ``run_bash`` command would be (same isolation, limits, workspace), which sends them as one
  JSON document on a pipe of their own (fd 3, ``ShellRunner.run(record=True)``). Whatever the run prints, on stdout,
  stderr or from a child, is never parsed. The calls are the traced process's own data (its code could alter them,
  as it computes the values they show): each is typed and bounded, must name a project file of the workspace, and
  is information for the agent, never part of a reward.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from env.project import is_test_path
from env.sandbox.runner import RefusedToRun
from env.sandbox.shell import ShellError
from env.tools.base import Tool, ToolContext, ToolError, ToolResult, register
from env.tools.reports import RaceTrace, TraceCall, TraceReport
from env.tools.shell import command_environment
from env.tools.traced_outcome import traced_outcome

TRACER = Path(__file__).resolve().parents[1] / "sandbox" / "inside" / "calltrace.py"
_END = "ADBG_TRACE_SOURCE_END"
MAX_CALLS = 200


class TraceArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    test: str | None = Field(None, min_length=1, max_length=500, pattern=r"^[^\s\x00]+$",
                             description="The test to trace: tests/test_x.py::test_name (or a test file; stress::Class is race=true)")
    race: bool = Field(False, description="Report the race check's failing interleaving instead (tasks with a concurrency check)")
    max_calls: int = Field(40, ge=1, le=MAX_CALLS, description="Calls kept in the report; the failing path is kept first")

    @model_validator(mode="after")
    def _something_to_trace(self) -> TraceArgs:
        if self.test is None and not self.race:
            raise ValueError("give the test to trace (test=tests/test_x.py::test_name), or race=true for the race check's failing interleaving")
        return self

    @property
    def wants_race(self) -> bool:
        return self.race or (self.test or "").startswith("stress::")


class TraceRecord(BaseModel):
    """What the tracer sends on its record pipe: the calls it kept, and how many it saw."""

    model_config = ConfigDict(extra="forbid")
    calls: list[TraceCall] = Field(max_length=MAX_CALLS)
    calls_made: int = Field(ge=0)
    cut: int = Field(ge=0)


def parse_record(record: bytes | None, project_files: set[str]) -> TraceRecord | str:
    """The tracer's record, checked for shape; or why it is not one (no record, bad JSON, a call in no project file)."""
    if not record:
        return "it sent no call record"
    try:
        parsed = TraceRecord.model_validate(json.loads(record.decode("utf-8")))
    except (ValueError, ValidationError):
        return "its call record is not valid"
    strays = sorted({call.path for call in parsed.calls if call.path not in project_files})
    if strays:
        return f"its call record names {len(strays)} path(s) that are not project files of the workspace"
    return parsed


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
    if report.cut and report.race is not None:
        lines.append(f"({report.cut} later call(s) not shown)")
    elif report.cut:
        lines.append(f"({report.cut} call(s) not shown: the failing path is kept first, then the latest calls)")
    if report.race is not None:
        lines.extend(_render_race(report.race))
    return "\n".join(lines)


def _render_race(race: RaceTrace) -> list[str]:
    """The interleaving, one step a line, each under its thread's column; then the conflicting accesses."""
    start = ", ".join(f"{k}={v}" for k, v in race.start.items())
    lines = [f"race: {race.scenario}" + (f"; the object starts with {start}" if start else ""),
             f"what went wrong: {race.problem}" if race.problem else "no interleaving the check ran went wrong; its last one:"]
    for step in race.steps:
        where = f"line {step.line} in {step.function}: " if step.line else ""
        code = f"  `{step.code}`" if step.code else ""
        held = f"  [holding {', '.join(step.locks)}]" if step.locks else ""
        lines.append(f"  {step.thread}: {where}{step.event}{held}{code}")
    if race.steps_cut:
        lines.append(f"  ({race.steps_cut} step(s) not shown: the conflicting ones are kept first)")
    lines.extend(f"conflict: {text}" for text in race.conflicts)
    return lines


@register
class TraceReportTool(Tool[TraceArgs]):
    name = "trace_report"
    description = (
        "Run one test in the sandbox and report the project's own calls on the way to its result: each call's "
        "function and place, arguments, return value or exception, caller, and what it changed in its locals and in "
        "self's attributes. Bounded: the failing path is kept first. On a task with a concurrency check (hard), "
        "race=true reports the check's failing interleaving instead: each thread's calls, every shared access, lock "
        "operation and switch in order, and the conflicting accesses."
    )
    Args = TraceArgs

    def run(self, ctx: ToolContext, args: TraceArgs) -> ToolResult:
        if args.wants_race:
            if ctx.race_trace is None:
                raise ToolError("trace_report: this task has no race check; race=true (or test=stress::...) reports the concurrency "
                                "check's failing interleaving on a task that has one (hard). Give a test to trace instead")
            race = ctx.race_trace(args.max_calls)
            return ToolResult(output=render(race), data={"report": race.model_dump(exclude_defaults=True)})
        assert args.test is not None
        outcome = traced_outcome(ctx, args.test)  # first: a test that does not exist is not traced
        if outcome.exit_code == 5:
            raise ToolError(f"trace_report: no test {args.test!r} ran: the task's tests hold no such test")
        record = _traced_calls(ctx, args.test, args.max_calls)
        report = TraceReport(test=args.test, exit_code=outcome.exit_code, calls=record.calls, calls_made=record.calls_made,
                             cut=record.cut, pytest=outcome.text)  # fmt: skip
        return ToolResult(output=render(report), data={"report": report.model_dump(exclude_defaults=True)})


def _traced_calls(ctx: ToolContext, test: str, max_calls: int) -> TraceRecord:
    """The traced run's record of calls, read from its record pipe only."""
    source = TRACER.read_text(encoding="utf-8")
    command = f"python - {shlex.quote(test)} {max_calls} <<'{_END}'\n{source}\n{_END}\n"
    try:
        result = ctx.runtime.shell.run(ctx.workspace.root, command, env=command_environment(ctx), record=True)
    except RefusedToRun as exc:
        raise ToolError(f"trace_report: tests cannot run on this server: {exc}") from None
    except ShellError as exc:
        raise ToolError(f"trace_report: {exc}") from None
    if result.timed_out:
        raise ToolError(f"trace_report: the traced run {result.note}; trace a smaller test")
    project = {p for p in ctx.workspace.files() if p.endswith(".py") and not is_test_path(p)}
    record = parse_record(result.record, project)
    if isinstance(record, str):
        # the run's own output only where every file may be seen: tracebacks in it quote source lines
        tail = "" if ctx.partial_view else ": " + result.output.strip()[-600:]
        raise ToolError(f"trace_report: the traced run failed (exit status {result.exit_code}): {record}{tail}")
    return record
