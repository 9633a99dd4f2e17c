"""trace_report's race report (``trace_report(race=true)``, or ``test="stress::ConnectionCounter"``) for a task with
a concurrency check: the check's controlled interleavings run on the workbench's module, and the first schedule a
correct object could not give is replayed with its story recorded, then reported in trace_report's structure with
threads added: each thread's calls (what they returned, what they changed on the object), every shared access, lock
operation and switch in the order they ran, and the conflicting accesses (a thread's write based on a value another
thread overwrote in between).

The scenarios come from the server's secret under a purpose of their own ("trace"), so a report never shows the
verdict's scenarios. It is information for the agent, like every trace: it pays nothing and changes no grade.
"""

from __future__ import annotations

import ast
import random
from typing import Any

from env.families.classic.concurrency import THREAD_NAMES, ConcurrencyCheck
from env.families.classic.judge import start_run
from env.families.classic.task import TaskSpec
from env.pyparse import parse
from env.sandbox.runner import RemoteError, RunAborted, Sandbox
from env.tools.base import ToolError
from env.tools.reports import RaceStep, RaceTrace, TraceCall, TraceReport

MAX_STEPS = 160  # steps of the interleaving kept in a report (the conflicting ones first)
_VERBS = {"r": "reads", "w": "writes", "lock": "acquires", "release": "releases"}


def race_report(task: TaskSpec, source: str, sandbox: Sandbox, rng: random.Random, policy_enabled: bool, max_calls: int) -> TraceReport:
    """The report, or ToolError saying why the check could not run on ``source``."""
    check = task.concurrency
    assert check is not None
    plan = check.plan(rng)
    started = start_run(task, source, sandbox, policy_enabled)
    if isinstance(started, str):
        raise ToolError(f"trace_report: the race check cannot run this module: {started}")
    with started as run:
        if run.load_error is not None or run.result.aborted:
            why = run.load_error.traceback_text.rstrip() if run.load_error else run.result.aborted
            raise ToolError(f"trace_report: your module failed to load:\n{why}")
        try:
            reply = run.explore(plan)
            chosen, found = _first_failing(check, plan, reply)
            replay = {k: chosen[k] for k in ("scenario", "first", "preempt_at", "priorities", "changes", "from_api") if k in chosen}
            replayed = run.explore({**{k: plan[k] for k in ("cls", "scenarios", "model") if k in plan}, "replay": replay})
        except RemoteError as exc:
            raise ToolError(f"trace_report: the race check could not run: the code raised\n{exc.traceback_text}".rstrip()) from None
        except RunAborted as exc:
            raise ToolError(f"trace_report: the race check could not finish: {exc}") from None
    outcome = check.judge_exploration(plan, reply, source)
    observation = _one(replayed)
    scenario = plan["scenarios"][chosen["scenario"]]
    again = check.problem(observation, scenario)
    if found and again != found:
        found = f"{found} (the replay ran differently: {again or 'no problem this time'}; the code does not behave the same way twice)"
    return _report(check, task, source, scenario, observation, found, outcome.message, max_calls)


def _first_failing(check: ConcurrencyCheck, plan: dict[str, Any], reply: Any) -> tuple[dict[str, Any], str]:
    """The first observation a correct object could not give, and what is wrong with it; else the last one and ""."""
    if isinstance(reply, dict) and isinstance(reply.get("refused"), str) and reply["refused"]:
        raise ToolError(f"trace_report: the race check cannot run here: {reply['refused'][:300]}")
    if not isinstance(reply, dict) or not isinstance(reply.get("schedules"), list) or not reply["schedules"]:
        raise ToolError("trace_report: the race check returned no observations")
    if reply.get("tampered"):
        raise ToolError("trace_report: the code tried to change how it is traced: " + ", ".join(map(str, reply["tampered"]))[:200])
    for observation in reply["schedules"]:
        index = observation.get("scenario") if isinstance(observation, dict) else None
        if type(index) is not int or not 0 <= index < len(plan["scenarios"]):
            raise ToolError("trace_report: the race check returned a malformed observation")
        found = check.problem(observation, plan["scenarios"][index])
        if found:
            return observation, found
    return reply["schedules"][-1], ""


def _one(reply: Any) -> dict[str, Any]:
    if not (isinstance(reply, dict) and isinstance(reply.get("schedules"), list) and len(reply["schedules"]) == 1):
        raise ToolError("trace_report: the race check's replay returned no observation")
    if reply.get("tampered"):
        raise ToolError("trace_report: the code tried to change how it is traced: " + ", ".join(map(str, reply["tampered"]))[:200])
    observation = reply["schedules"][0]
    if not isinstance(observation, dict) or not isinstance(observation.get("record"), list):
        raise ToolError("trace_report: the race check's replay returned no observation")
    return observation


def _method_lines(source: str, cls: str) -> dict[str, int]:
    try:
        tree = parse(source)
    except SyntaxError:
        return {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            return {f.name: f.lineno for f in node.body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)}
    return {}


def _thread(index: Any) -> str:
    return f"thread {THREAD_NAMES[index]}" if type(index) is int and 0 <= index < len(THREAD_NAMES) else "thread ?"


def _text(value: Any) -> str:
    return repr(value) if type(value) in (int, bool, type(None)) else str(value)[:60]


class _Story:
    """The replay's record read into calls and steps."""

    def __init__(self, task: TaskSpec, source: str, record: list[Any]):
        assert task.stress is not None
        self.lines = source.splitlines()
        self.cls = task.stress.cls
        self.defs = _method_lines(source, self.cls)
        self.filename = task.filename
        self.calls: list[TraceCall] = []
        self.steps: list[RaceStep] = []
        self.open: dict[int, tuple[TraceCall, dict[str, Any]]] = {}
        self.locks = {name for entry in record if isinstance(entry, list) and entry[:1] == ["point"] for name in _locks(entry)}
        for entry in record:
            if isinstance(entry, list) and entry:
                self._read(entry)

    def _code(self, line: Any) -> str:
        return self.lines[line - 1].strip()[:100] if type(line) is int and 0 < line <= len(self.lines) else ""

    def _read(self, entry: list[Any]) -> None:
        kind = entry[0]
        if kind == "call" and len(entry) == 4 and isinstance(entry[3], dict):
            _, who, name, before = entry
            call = TraceCall(
                id=len(self.calls) + 1, function=f"{self.cls}.{name}", path=self.filename, line=self.defs.get(str(name), 0),
                thread=_thread(who), caller=None, args={"self": f"<{self.cls} object>"},
            )
            self.calls.append(call)
            self.open[who] = (call, before)
            self.steps.append(RaceStep(thread=_thread(who), event=f"calls {name}()"))
        elif kind == "return" and len(entry) == 5 and isinstance(entry[3], list) and isinstance(entry[4], dict):
            _, who, name, outcome, after = entry
            call, before = self.open.pop(who, (None, {}))
            value, error = (outcome + [None, None, ""])[1:3]
            end = f"raised {str(error).removeprefix('other: ')}" if error else f"returned {_text(value)}"
            if call is not None:
                call.raised = str(error).removeprefix("other: ") if error else None
                call.returned = None if error else _text(value)
                call.self_changed = {k: [_text(before.get(k)), _text(after.get(k))] for k in sorted(set(before) | set(after)) if before.get(k) != after.get(k)}
            self.steps.append(RaceStep(thread=_thread(who), event=f"{name}() {end}"))
        elif kind == "point" and len(entry) == 7:
            _, who, line, function, access, name, held = entry
            if access == "r" and name in {lock.rpartition(".")[2] for lock in self.locks}:
                return  # reading the attribute that holds a lock, just before using it: not shared state
            verb = _VERBS.get(str(access))
            if verb is None:
                return
            what = str(name) if access in ("lock", "release") else ("." + str(name) if not str(name).startswith("global ") else str(name))
            self.steps.append(RaceStep(thread=_thread(who), event=f"{verb} {what}", line=line if type(line) is int else 0,
                                       function=str(function), code=self._code(line), locks=[str(h) for h in held if isinstance(h, str)]))
        elif kind == "switch" and len(entry) == 6:
            _, who, line, function, note, nxt = entry
            if note == "finished":
                event = f"finished; {_thread(nxt)} runs"
            else:
                event = f"paused{f' ({note})' if note else ''}; {_thread(nxt)} runs"
            self.steps.append(RaceStep(thread=_thread(who), event=event, line=line if type(line) is int else 0, function=str(function), code=self._code(line)))


def _locks(entry: list[Any]) -> list[str]:
    names = [str(h) for h in entry[6]] if isinstance(entry[6], list) else []
    return names + ([str(entry[5])] if entry[4] in ("lock", "release") and entry[5] else [])


def conflicts(steps: list[RaceStep]) -> tuple[list[str], set[int]]:
    """Each write based on a read another thread's write overwrote in between (a lost update, or a check acted on
    after it went stale), as text; and the indexes of the steps involved."""
    found: list[str] = []
    involved: set[int] = set()
    last_read: dict[tuple[str, str], int] = {}  # (thread, what) -> its latest read's step
    for index, step in enumerate(steps):
        verb, _, what = step.event.partition(" ")
        if verb == "reads":
            last_read[(step.thread, what)] = index
        elif verb == "writes":
            read = last_read.pop((step.thread, what), None)
            if read is not None:
                between = [j for j in range(read + 1, index) if steps[j].event == f"writes {what}" and steps[j].thread != step.thread]
                if between:
                    other = steps[between[-1]]
                    found.append(
                        f"{step.thread} read {what} at line {steps[read].line} ({steps[read].code}); {other.thread} wrote {what} at "
                        f"line {other.line} ({other.code}); then {step.thread} wrote {what} at line {step.line} ({step.code}) from the "
                        f"value it had read: {other.thread}'s write is lost"
                    )
                    involved |= {read, between[-1], index}
    return found, involved


def _kept(steps: list[RaceStep], involved: set[int]) -> list[RaceStep]:
    """At most MAX_STEPS steps, in order: the conflicting ones and their neighbourhood first, then from the start."""
    if len(steps) <= MAX_STEPS:
        return steps
    keep = {j for i in involved for j in range(max(0, i - 3), min(len(steps), i + 4))}
    for index in range(len(steps)):
        if len(keep) >= MAX_STEPS:
            break
        keep.add(index)
    return [steps[i] for i in sorted(keep)[:MAX_STEPS]]


def _report(check: ConcurrencyCheck, task: TaskSpec, source: str, scenario: dict[str, Any], observation: dict[str, Any], found: str, message: str, max_calls: int) -> TraceReport:
    story = _Story(task, source, observation["record"])
    found_conflicts, involved = conflicts(story.steps)
    steps = _kept(story.steps, involved)
    start = observation.get("start") if isinstance(observation.get("start"), dict) else {}
    race = RaceTrace(
        scenario=check.describe(scenario),
        problem=found,
        start={str(k): _text(v) for k, v in start.items()},
        steps=steps,
        steps_cut=len(story.steps) - len(steps),
        conflicts=found_conflicts,
    )
    assert task.stress is not None
    return TraceReport(
        test=f"stress::{task.stress.cls}",
        exit_code=1 if found else 0,
        calls=story.calls[:max_calls],
        calls_made=len(story.calls),
        cut=max(0, len(story.calls) - max_calls),
        pytest=message,
        race=race,
    )
