"""One episode's debugging session: a test or script running under the tracer in a sandbox child.

    session = DebugSession(runtime.debug_sandbox, project)
    session.start(test="tests/test_cart.py::test_total")   # stops at the test's first line
    session.add_break("shop/cart.py", 40, condition="qty > 3")
    session.resume("continue")                              # runs to the breakpoint
    session.inspect(frame=0); session.evaluate("self.items")
    session.on_edit("shop/cart.py", 20, 22, 5)              # breakpoints move; the session ends (code changed)
    session.restart()                                       # same target, breakpoints kept

Every command returns a :class:`DebugResult`: the text a human would see in pdb, and the same
facts as data (frame, stack, variables with type names and capped reprs). The program runs with
the sandbox's isolation and limits; each command has the run's wall-clock budget, and a program
that finishes, raises, hangs or runs out of budget ends the session with a message saying so.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from env import pyparse
from env.debugger import replies
from env.debugger.breakpoints import Breakpoint, shift_for_edit
from env.debugger.render import render_answer, render_ended, render_stop
from env.patches import Files
from env.sandbox.runner import RefusedToRun, RemoteError, RunAborted, Sandbox, SandboxRun

ANSWERS = {"inspect": replies.InspectAnswer, "eval": replies.EvalAnswer, "list": replies.ListAnswer}
MAX_CONDITION_CHARS = 500
MAX_EXPRESSION_CHARS = 2000
MAX_BREAKPOINTS = 50
NO_SESSION = "no debugging session is running; start one with debug_start (a test id or a script path)"


class DebugError(ValueError):
    """The agent's mistake, or a session that cannot do what was asked: the message says which."""


class DebugResult(BaseModel):
    text: str
    data: dict[str, Any] = {}


@dataclass
class Project:
    """What a session runs on: the files as they are now, import roots, environment, known tests."""

    files: Callable[[], Files]
    paths: list[str]
    environ: dict[str, str]
    tests: list[str]
    test_files: list[str] = field(default_factory=list)


def _clean(value: Any) -> Any:
    """Replies come from the sandbox: strings lose lone surrogates before they reach JSON."""
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    return value


def code_line(text: str, line: int) -> str | None:
    """Why ``line`` of ``text`` cannot hold a breakpoint, or None if it can."""
    lines = text.split("\n")
    if line > len(lines) or (line == len(lines) and not lines[-1]):
        return f"line {line} is past the end of the file ({len(lines) - (not lines[-1])} lines)"
    stripped = lines[line - 1].strip()
    if not stripped:
        return f"line {line} is blank"
    if stripped.startswith("#"):
        return f"line {line} is a comment"
    return None


class DebugSlots:
    """How many debugging sessions may hold a process at once, server-wide."""

    def __init__(self, limit: int):
        self.limit = limit
        self._free = threading.BoundedSemaphore(limit)

    def take(self) -> bool:
        return self._free.acquire(blocking=False)

    def give_back(self) -> None:
        self._free.release()


class DebugSession:
    def __init__(self, sandbox: Sandbox, project: Project, slots: DebugSlots | None = None):
        self.sandbox = sandbox
        self.project = project
        self.slots = slots or DebugSlots(1)
        self._holding = False
        self.breakpoints: list[Breakpoint] = []
        self.target: dict[str, str] | None = None
        self.stop_at_entry = True
        self.run: SandboxRun | None = None
        self.state: dict[str, Any] | None = None  # the latest stop
        self.ended: str = ""  # why the latest session ended
        self._offset = 0

    # -- lifecycle ------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.run is not None

    def start(self, test: str | None = None, script: str | None = None, stop_at_entry: bool = True) -> DebugResult:
        if (test is None) == (script is None):
            raise DebugError("debug_start: give exactly one of 'test' (a test id) or 'script' (a Python file in the repository)")
        files = self.project.files()
        if test is not None:
            target = {"kind": "test", "id": self._check_test(test, files)}
        else:
            if script not in files or not script.endswith(".py"):
                raise DebugError(f"debug_start: no Python file {script!r} in the repository (create it first, then debug it)")
            target = {"kind": "script", "path": script}
        self.close()
        self.target, self.stop_at_entry = target, stop_at_entry
        return self._launch(files)

    def restart(self) -> DebugResult:
        if self.target is None:
            raise DebugError("debug_restart: no session was started yet; use debug_start")
        self.close()
        return self._launch(self.project.files())

    def close(self) -> None:
        if self.run is not None:
            self.run.finish()
            self.run = None
        if self._holding:
            self._holding = False
            self.slots.give_back()
        self.state = None

    def _check_test(self, test: str, files: Files) -> str:
        if not isinstance(test, str) or not test.strip():
            raise DebugError("debug_start: 'test' must be a test id such as tests/test_x.py::test_name")
        if test in self.project.tests:
            return test
        if "::" in test and test.split("::")[0] in files and test.split("::")[0].endswith(".py"):
            return test  # a test of a file in the repository (one the agent wrote, too): pytest decides
        matches = [t for t in self.project.tests if t.endswith("::" + test)]
        if len(matches) == 1:  # a bare test name is enough when it is unique
            return matches[0]
        sample = ", ".join(self.project.tests[:8]) + (" ..." if len(self.project.tests) > 8 else "")
        raise DebugError(f"debug_start: unknown test {test!r}; the debuggable tests include: {sample}")

    def _launch(self, files: Files) -> DebugResult:
        assert self.target is not None
        self.ended = ""
        self._offset = 0
        breakpoints = [(b.path, b.line, b.condition, b.log_message) for b in self.breakpoints]
        if not self.slots.take():
            raise DebugError(
                f"the server is running its maximum of {self.slots.limit} debugging sessions; try again later "
                "(a session ends with its episode, or when it finishes)"
            )
        self._holding = True
        try:
            self.run = self.sandbox.start_debug(
                files, self.project.paths, self.project.environ, self.target, breakpoints, self.stop_at_entry
            )
        except RefusedToRun as exc:
            self.close()
            raise DebugError(f"the debugger cannot run here: {exc}") from None
        except BaseException:
            self.close()
            raise
        run = self.run
        if run.load_error is not None:
            return self._end({"ended": True, "reason": f"the session could not start: {run.load_error.exc_type}: {run.load_error.message}"})
        if run.result.aborted:
            return self._end({"ended": True, "reason": self._abort_reason()})
        return self._after(_clean(run.ready))

    # -- commands -----------------------------------------------------------------------------

    def _need_stop(self, name: str) -> SandboxRun:
        if self.run is None or self.state is None:
            detail = f" (the last one ended: {self.ended})" if self.ended else ""
            raise DebugError(f"{name}: {NO_SESSION}{detail}")
        return self.run

    def _send(self, run: SandboxRun, message: dict[str, Any]) -> Any:
        try:
            return _clean(run.command(message))
        except RunAborted:
            return {"ended": True, "reason": self._abort_reason()}
        except RemoteError as exc:  # not expected from the tracer; reported, never raised further
            return {"ended": True, "reason": f"the debugger failed: {exc}"}

    def resume(self, how: str, line: int | None = None) -> DebugResult:
        run = self._need_stop(f"debug_{how}")
        if how == "until" and line is not None and line <= 0:
            raise DebugError("debug_until: 'line' must be a positive line number")
        message: dict[str, Any] = {"op": "debug", "cmd": how}
        if line is not None:
            message["line"] = line
        return self._after(self._send(run, message))

    def where(self) -> DebugResult:
        self._need_stop("debug_where")
        assert self.state is not None
        return DebugResult(text=render_answer("where", {"stack": self.state["stack"]}), data={"stack": self.state["stack"], "frame": self.state["frame"]})

    def inspect(self, frame: int = 0, scope: str = "locals") -> DebugResult:
        run = self._need_stop("debug_inspect")
        return self._immediate(run, "inspect", {"frame": frame, "scope": scope})

    def evaluate(self, expression: str, frame: int = 0) -> DebugResult:
        run = self._need_stop("debug_eval")
        if len(expression) > MAX_EXPRESSION_CHARS:
            raise DebugError(f"debug_eval: the expression is {len(expression)} characters; the limit is {MAX_EXPRESSION_CHARS}")
        return self._immediate(run, "eval", {"expression": expression, "frame": frame})

    def listing(self, start: int | None = None, end: int | None = None) -> DebugResult:
        run = self._need_stop("debug_list")
        if start is not None and end is not None and end < start:
            raise DebugError(f"debug_list: end {end} is before start {start}")
        return self._immediate(run, "list", {"start": start, "end": end})

    def _immediate(self, run: SandboxRun, name: str, fields: dict[str, Any]) -> DebugResult:
        answer = self._send(run, {"op": "debug", "cmd": name, **fields})
        try:
            if isinstance(answer, dict) and answer.get("ended"):
                return self._end(replies.parse(replies.Ended, answer))
            if isinstance(answer, dict) and "error" in answer:
                raise DebugError(f"debug_{name}: {replies.parse(replies.ErrorAnswer, answer)['error']}")
            answer = replies.parse(ANSWERS[name], answer)
        except replies.MalformedReply as exc:
            return self._end({"ended": True, "reason": f"{exc}; the session ended"})
        output = self._output()
        text = render_answer(name, answer) + (f"\n--- program output ---\n{output}" if output else "")
        return DebugResult(text=text, data={**answer, "output": output})

    # -- breakpoints -----------------------------------------------------------------------------

    def add_break(self, path: str, line: int, condition: str | None = None, log_message: str | None = None) -> DebugResult:
        files = self.project.files()
        if path not in files:
            raise DebugError(f"debug_break: no file {path!r} in the repository")
        if not path.endswith(".py"):
            raise DebugError(f"debug_break: {path!r} is not a Python file")
        problem = code_line(files[path], line)
        if problem:
            raise DebugError(f"debug_break: {path}:{line} cannot hold a breakpoint: {problem}")
        if condition is not None:
            self._check_condition(condition)
        if log_message is not None:
            self._check_log_message(log_message)
        bp = Breakpoint(path=path, line=line, condition=condition or None, log_message=log_message or None)
        others = [b for b in self.breakpoints if (b.path, b.line) != (path, line)]
        if len(others) >= MAX_BREAKPOINTS:
            raise DebugError(f"debug_break: at most {MAX_BREAKPOINTS} breakpoints; clear some first")
        self.breakpoints = [*others, bp]
        if self.run is not None and self.state is not None:
            self._immediate_quiet({"cmd": "break", "path": path, "line": line, "condition": bp.condition, "log": bp.log_message})
        return DebugResult(text=f"Breakpoint set at {bp.label()}", data={"breakpoints": self._listed()})

    def clear_break(self, path: str | None = None, line: int | None = None) -> DebugResult:
        if path is None:
            removed, self.breakpoints = self.breakpoints, []
        else:
            removed = [b for b in self.breakpoints if b.path == path and (line is None or b.line == line)]
            if not removed:
                where = f"{path}:{line}" if line is not None else path
                raise DebugError(f"debug_clear: no breakpoint at {where}; breakpoints: {self._summary()}")
            self.breakpoints = [b for b in self.breakpoints if b not in removed]
        if self.run is not None and self.state is not None:
            for bp in removed:
                self._immediate_quiet({"cmd": "clear", "path": bp.path, "line": bp.line})
        return DebugResult(text=f"Cleared {len(removed)} breakpoint(s); remaining: {self._summary()}", data={"breakpoints": self._listed()})

    def _immediate_quiet(self, fields: dict[str, Any]) -> None:
        assert self.run is not None
        answer = self._send(self.run, {"op": "debug", **fields})
        try:
            if isinstance(answer, dict) and answer.get("ended"):
                self._end(replies.parse(replies.Ended, answer))
            elif isinstance(answer, dict) and "error" in answer:
                raise DebugError(f"debug_{fields['cmd']}: {replies.parse(replies.ErrorAnswer, answer)['error']}")
            else:
                replies.parse(replies.OkAnswer, answer)
        except replies.MalformedReply as exc:
            self._end({"ended": True, "reason": f"{exc}; the session ended"})

    def _check_condition(self, condition: str) -> None:
        if len(condition) > MAX_CONDITION_CHARS:
            raise DebugError(f"debug_break: the condition is {len(condition)} characters; the limit is {MAX_CONDITION_CHARS}")
        try:
            pyparse.parse(condition, mode="eval")
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            raise DebugError(f"debug_break: the condition is not a Python expression: {getattr(exc, 'msg', exc)}") from None

    def _check_log_message(self, message: str) -> None:
        if len(message) > MAX_CONDITION_CHARS:
            raise DebugError(f"debug_break: the log message is {len(message)} characters; the limit is {MAX_CONDITION_CHARS}")
        for expression in re.findall(r"\{([^{}]*)\}", re.sub(r"\{\{|\}\}", "", message)):
            try:
                pyparse.parse(expression, mode="eval")
            except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
                raise DebugError(
                    f"debug_break: {{{expression}}} in the log message is not a Python expression: {getattr(exc, 'msg', exc)}"
                ) from None

    def _listed(self) -> list[dict[str, Any]]:
        return [b.model_dump() for b in self.breakpoints]

    def _summary(self) -> str:
        return ", ".join(b.label() for b in self.breakpoints) or "none"

    def on_edit(self, path: str, old_start: int, old_end: int, new_count: int) -> str:
        """An edit tool changed ``path``: move breakpoints; a running session runs old code, so it ends."""
        self.breakpoints, dropped = shift_for_edit(self.breakpoints, path, old_start, old_end, new_count)
        notes = []
        if dropped:
            notes.append("Breakpoints inside the edited lines were removed: " + ", ".join(b.label() for b in dropped) + ".")
        if self.run is not None:
            self.close()
            self.ended = "the code changed"
            notes.append("The debugging session ended because the code changed; debug_restart runs it again on the new code"
                         f" (breakpoints: {self._summary()}).")
        return " ".join(notes)

    def code_changed(self) -> None:
        """The code was replaced wholesale (a classic submission): a running session ends, breakpoints stay."""
        if self.run is not None:
            self.close()
            self.ended = "the code changed"

    # -- replies --------------------------------------------------------------------------------

    def _output(self) -> str:
        if self.run is None:
            return ""
        text, self._offset = self.run.output_from(self._offset)
        return text

    def _after(self, reply: Any) -> DebugResult:
        try:
            if isinstance(reply, dict) and reply.get("ended"):
                return self._end(replies.parse(replies.Ended, reply))
            reply = replies.parse(replies.StopState, reply)
        except replies.MalformedReply as exc:
            return self._end({"ended": True, "reason": f"{exc}; the session ended"})
        self.state = reply
        output = self._output()
        return DebugResult(text=render_stop(reply, output, self.breakpoints), data={**reply, "output": output, "breakpoints": self._listed()})

    def _end(self, reply: dict[str, Any]) -> DebugResult:
        output = self._output()
        reason = str(reply.get("reason", "the program ended"))
        self.close()
        self.ended = reason
        data = {k: v for k, v in reply.items() if k in ("ended", "reason", "outcome", "status")}
        return DebugResult(text=render_ended(reason, output), data={**data, "ended": True, "output": output, "breakpoints": self._listed()})

    def _abort_reason(self) -> str:
        assert self.run is not None
        result = self.run.result
        limits = self.sandbox.limits
        if "CPU time limit" in result.aborted:
            return f"the program used up its CPU budget ({limits.cpu_seconds} s); the session ended"
        if result.timed_out:
            return f"the program did not stop or finish within {limits.wall_seconds:g} s (it may hang); the session ended"
        return f"the program's process stopped ({result.aborted}); the session ended"
