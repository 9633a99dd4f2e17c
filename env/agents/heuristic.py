"""The heuristic baseline: a scripted debugger with no gold knowledge.

Classic and race tasks: submit the most plausible small edits of the module (flipped comparisons, unwrapped
conversions, swapped arithmetic, constants off by one; in a module using threads first a method under its lock,
nested locks swapped, a wait in a loop: env.agents.locking) with a hypothesis naming the edit.

Repository tasks: run the tests; read the failing tests' tracebacks and imports to find the project
files involved (procedural tasks: the logs' error and trace lines, since tracebacks are not shown), listing
an imported package's folders when the search for definitions was cut short and reading a long file on in
its next lines; try the same small edits there and the wider ones (a condition negated, two arguments
swapped, a value never returned), nearest the traceback lines first, then in the functions the failing
tests' own lines call, keeping an edit only if more failing tests pass and no passing test breaks; submit
when everything passes or the step budget runs out.
"""

from __future__ import annotations

import random
import re
from typing import Any

from env.agents.base import Action, Agent, Observation, register
from env.agents.locking import lock_edits
from env.agents.mutations import Mutation, mutations
from env.tool_schemas import submits_a_module

# a traceback frame in a workspace file: paths the agent sees are relative to the workspace (the server shows no host
# path), so an absolute one is the standard library's or an installed package's
_FRAME = re.compile(r'File "([^"/<][^"]*\.py)", line (\d+)')
_SHORT_FRAME = re.compile(r"^([^\s:/<][^\s:]*\.py):(\d+): in ", re.M)  # pytest's --tb=short frame line
_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))", re.M)
_NUMBERED = re.compile(r"^\s*\d+ \| ?(.*)$")
_LOG_PLACE = re.compile(r"\[([^\]\s:]+\.py)::([\w.<>]+)\]")
_UNOPENED = re.compile(r"^also matching, in files you have not opened: (.+)$", re.M)
_CUT = re.compile(r"^\[\d+ more matches not shown")
_PART = re.compile(r"^\[lines (\d+)-(\d+) of (\d+)\]$", re.M)
_CALLED = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
READ_LINES = 2_400  # a long file is read on, a view at a time, up to this line
KEEP_FOR_TRIALS = 14  # steps left when reading stops: each trial is an edit and a test run


def _is_test(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py" or "tests/" in f"/{path}"


def unnumber(text: str) -> str:
    """view_file's output back to the file's text."""
    lines = [m.group(1) for m in map(_NUMBERED.match, text.splitlines()) if m]
    return "\n".join(lines) + "\n" if lines else ""


@register("heuristic")
class HeuristicAgent(Agent):
    def begin(self, task: dict[str, Any], observation: Observation, rng: random.Random) -> None:
        super().begin(task, observation, rng)
        self.candidates: list[Mutation] = []
        self.whole_module = submits_a_module(task["tools"])  # a classic task: submit the corrected module
        if self.whole_module:
            source = observation.get("buggy_code", "")
            # a module using threads: its methods under their locks first, then the small edits
            self.candidates = (lock_edits(source) if "threading" in source else []) + mutations(source)
            return
        self.phase = "baseline"
        # The tests, then a map of which files exist (every line with a def or class names its file).
        self.queue: list[Action] = [{"action_type": "run_tests"}, {"action_type": "search", "pattern": r"^\s*(def|class) ", "regex": True, "max_results": 200}]
        if "analyze_logs" in task["profiles"]["default"]["actions"]:  # no tracebacks there: the logs say where things went wrong
            self.queue.insert(0, {"action_type": "analyze_logs"})
        self.suspects: set[str] = set()  # function names the logs point at
        self.existing: set[str] | None = None
        self.targets: set[str] = set()
        self.keep_passing: set[str] = set()
        self.best_fixed = 0
        self.to_read: list[str] = []
        self.read: set[str] = set()
        self.partial = False  # the search for definitions was cut short: packages are listed instead
        self.listed: set[str] = set()
        self.to_list: list[str] = []
        self.listing: str | None = None
        self.more: list[tuple[str, int]] = []  # long files' next views
        self.pending_start = 1
        self.test_hot: dict[str, set[int]] = {}  # the failing tests' own traceback lines
        self.known: set[str] = set()  # files known to exist whatever the search showed
        self.contents: dict[str, str] = {}
        self.hot: dict[str, set[int]] = {}
        self.trials: list[tuple[str, Mutation]] = []
        self.current: tuple[str, Mutation] | None = None
        self.pending: str | None = None
        self.dirty: str | None = None  # a file holding a tried edit that was not kept

    # -- classic ------------------------------------------------------------------------------

    def act(self, observation: Observation) -> Action:
        if not self.whole_module:
            return self._repo(observation)
        if not self.candidates:
            return {"action_type": "give_up", "final_diagnosis": "no small edit fixed the tests"}
        m = self.candidates.pop(0)
        where = f"in {m.function}, line {m.line}" if m.function else f"at line {m.line}"
        return {"action_type": "submit_fix", "fixed_code": m.source, "hypothesis": f"The bug is {where}: {m.description}."}

    # -- repository ---------------------------------------------------------------------------

    def _repo(self, obs: Observation) -> Action:
        self._learn(obs)
        steps_left = obs.get("max_steps", 30) - obs.get("step_number", 0)
        if self.queue:
            return self.queue.pop(0)
        if steps_left <= 2 or (self.targets and self.best_fixed == len(self.targets)):
            return self._finish()
        reading = steps_left > KEEP_FOR_TRIALS or not self.contents
        if self.to_list and reading:
            self.listing = self.to_list.pop(0)
            return {"action_type": "list_dir", "path": self.listing}
        if self.more and reading:
            path, start = self.more.pop(0)
            self.pending, self.pending_start = path, start
            return {"action_type": "view_file", "path": path, "start_line": start}
        if self.to_read and (reading or not self.trials):
            path = self.to_read.pop(0)
            self.pending, self.pending_start = path, 1
            return {"action_type": "view_file", "path": path}
        if not self.trials:
            self.trials = self._plan()
        if self.trials and steps_left >= 4:
            path, mutation = self.trials[0]
            if self.dirty is not None and self.dirty != path:
                return self._restore()
            self.trials.pop(0)
            self.current = (path, mutation)
            self.dirty = None
            self.queue.append({"action_type": "run_tests"})
            return self._rewrite(path, mutation.source)
        return self._finish()

    def _finish(self) -> Action:
        return self._restore() if self.dirty is not None else {"action_type": "submit"}

    def _restore(self) -> Action:
        path, self.dirty = self.dirty, None
        assert path is not None
        return self._rewrite(path, self.contents[path])

    def _rewrite(self, path: str, text: str) -> Action:
        # Every tried edit keeps the line count, so the kept text's count covers the whole file.
        lines = self.contents[path].count("\n")
        return {"action_type": "edit", "path": path, "start_line": 1, "end_line": max(lines, 0), "new_text": text}

    def _learn(self, obs: Observation) -> None:
        results = obs.get("test_results") or {}
        output = obs.get("tool_output") or ""
        if self.pending is not None:
            if not obs.get("error"):
                self._read(self.pending, self.pending_start, output)
            self.pending = None
        if self.listing is not None:
            if not obs.get("error"):
                self._listed(self.listing, output)
            self.listing = None
        places = _LOG_PLACE.findall(output)
        if places:  # analyze_logs: error lines first, then the path the failing run took
            errors = [m for line in output.splitlines() if " ERROR " in line for m in _LOG_PLACE.findall(line)]
            for path, function in errors + places:
                self.suspects.add(function.split(".")[-1])
                self._want(path)
        unopened = _UNOPENED.search(output)
        if self.existing is None and (re.match(r"^[^\s:]+:\d+: ", output) or unopened):
            self.existing = {line.split(":", 1)[0] for line in output.splitlines() if re.match(r"^[^\s:]+:\d+: ", line)}
            self.partial = any(_CUT.match(line) for line in output.splitlines())
            if unopened:  # a procedural search names the files it may not show
                self.existing |= {item.rsplit(" (", 1)[0] for item in unopened.group(1).split(", ")}
            self.to_read = [p for p in self.to_read if p in self.existing or p in self.known]
        if results and self.phase == "baseline":
            self.phase = "search"
            self.targets = {t for t, s in results.items() if s not in ("PASSED", "SKIPPED", "XFAIL")}
            self.keep_passing = {t for t, s in results.items() if s == "PASSED"}
            for path, line in _FRAME.findall(output) + _SHORT_FRAME.findall(output):
                if _is_test(path):  # the tests are the evidence, not where the bug is: what their lines call is
                    self.test_hot.setdefault(path, set()).add(int(line))
                    continue
                self.hot.setdefault(path, set()).add(int(line))
                self._want(path, known=True)
            for test in sorted(self.targets):
                self._want(test.split("::")[0], known=True)
            return
        if self.current is not None and "Edited" not in output and results:
            path, mutation = self.current
            fixed = sum(1 for t in self.targets if results.get(t) == "PASSED")
            broken = any(results.get(t) not in (None, "PASSED") for t in self.keep_passing)
            if fixed > self.best_fixed and not broken:
                self.best_fixed = fixed
                self.contents[path] = mutation.source  # keep it; later edits build on it
                self.trials = []  # re-plan from the improved code
            else:
                self.dirty = path  # restored before the next file is touched, or before submitting
            self.current = None

    def _read(self, path: str, start: int, output: str) -> None:
        text = unnumber(output)
        first = start == 1 or path not in self.contents
        self.contents[path] = text if first else self.contents[path] + text
        if first:
            self._imports(path, text)
        part = _PART.search(output)
        if part is None:
            return
        end, total = int(part.group(2)), int(part.group(3))
        # a project file is read on (up to READ_LINES); a test file up to its failing lines
        wanted = max(self.test_hot.get(path, {0})) if _is_test(path) else min(total, READ_LINES)
        if end < wanted:
            self.more.append((path, end + 1))

    def _listed(self, folder: str, output: str) -> None:
        for entry in output.splitlines():
            path = f"{folder}/{entry}".rstrip("/")
            if entry.endswith("/"):
                if not _is_test(path + "/x.py") and path not in self.listed:
                    self.listed.add(path)
                    self.to_list.append(path)
            elif entry.endswith(".py") and not _is_test(path):
                assert self.existing is not None
                self.existing.add(path)
                self._want(path)

    def _want(self, path: str, known: bool = False) -> None:
        """Read ``path`` later; unless it is ``known`` to exist (a test id's file, a traceback's), only if the search
        for definitions showed it."""
        if known:
            self.known.add(path)
        elif self.existing is not None and path not in self.existing:
            return
        if path not in self.read:
            self.read.add(path)
            self.to_read.append(path)

    def _imports(self, path: str, text: str) -> None:
        if not path.split("/")[-1].startswith("test"):
            return
        for a, b in _IMPORT.findall(text):
            module = (a or b).replace(".", "/")
            for root in ("", "src/"):
                self._want(f"{root}{module}.py")
                # A package: every file of it that defines something.
                for path in sorted(self.existing or ()):
                    if path.startswith(f"{root}{module}/"):
                        self._want(path)
                # ... and where the search was cut short, its folder's listing finds the files the search did not show
                top = f"{root}{module.split('/')[0]}"
                if self.partial and top not in self.listed and any(p.startswith(top + "/") for p in self.existing or ()):
                    self.listed.add(top)
                    self.to_list.append(top)

    def _plan(self) -> list[tuple[str, Mutation]]:
        # Names used on the traceback's lines: a function called there is as suspect as the line itself.
        called = set(getattr(self, "suspects", ()))
        for path, lines in self.hot.items():
            source = self.contents.get(path, "").splitlines()
            for line in lines:  # the line and the few before it (the condition that led to a raise)
                for text in source[max(0, line - 4) : line]:
                    called.update(_CALLED.findall(text))
        # What the failing tests' own lines call: where an assertion on a returned value failed, the only lead.
        tested: set[str] = set()
        for path, lines in self.test_hot.items():
            source = self.contents.get(path, "").splitlines()
            for line in lines:
                for text in source[max(0, line - 3) : line]:
                    tested.update(_CALLED.findall(text))
        trials = []
        for path, text in self.contents.items():
            if path.split("/")[-1].startswith("test") or not text:
                continue
            hot = self.hot.get(path, set())
            for m in mutations(text, extended=True):
                distance = 0 if m.function in called else min((abs(m.line - h) for h in hot), default=1000)
                if distance >= 1000 and m.function in tested:
                    distance = 500
                trials.append((distance, m.kind, path, m))
        trials.sort(key=lambda t: (t[0], t[1]))
        return [(path, m) for _, _, path, m in trials]


@register("heuristic-trace")
class HeuristicTraceAgent(HeuristicAgent):
    """The heuristic, localising with ``trace_report`` before it edits (issue 38's ablation): after the first test
    run it traces one failing test and takes as suspects the functions on the failing path (every call that raised
    and its callers) or, when nothing raised (an assertion on a returned value), the test's latest calls into the
    project and what they called; when the test run's traceback already named project lines, the trace only adds the
    files it passed through. Without ``trace_report`` in the episode's actions it plays as the heuristic."""

    def _learn(self, obs: Observation) -> None:
        baseline = not self.whole_module and getattr(self, "phase", "") == "baseline"
        super()._learn(obs)
        report = (obs.get("tool_result") or {}).get("report")
        if isinstance(report, dict):
            self._suspect(report.get("calls") or [])
        elif baseline and self.phase == "search" and self.targets and "trace_report" in (obs.get("available_actions") or ()):
            self.queue.insert(0, {"action_type": "trace_report", "test": sorted(self.targets)[0]})

    def _suspect(self, calls: list[dict[str, Any]]) -> None:
        by_id = {call.get("id"): call for call in calls}
        localised = bool(self.hot)  # the test run's traceback already named project lines: the trace only adds files
        chosen = [call for call in calls if call.get("raised")]
        if not chosen:  # nothing raised: the latest top-level calls the test made, and their callees
            tops = [call["id"] for call in calls if call.get("caller") is None][-3:]
            chosen = [call for call in calls if call.get("id") in tops or call.get("caller") in tops]
        for call in chosen:
            step: dict[str, Any] | None = call
            while step is not None:
                path, function = str(step.get("path", "")), str(step.get("function", ""))
                if path and not _is_test(path):
                    if not localised:
                        self.suspects.add(function.split(".")[-1])
                        self.hot.setdefault(path, set()).add(int(step.get("line") or 0))
                    self._want(path)
                step = by_id.get(step.get("caller"))
