"""One episode on a procedural task: a repository episode seen through partial observability,
with noisy, drifting logs and the four-term grade.

    episode = PROCEDURAL.episode(runtime, catalog.get("proc-medium-test-0"), seed=1, episode_id="e1")
    episode.step(DebugAction(action_type="analyze_logs"))
    episode.step(DebugAction(action_type="open_file", path="svc/orders.py"))
    obs.visible_files, obs.logs, obs.test_results, obs.time_remaining     # and nothing else about the code

The logs come from a real run of the buggy service's failing tests (what raised, where) and the
task's call graph (which functions run on the failing path, what each logs); ``env.families.procedural.noise``
adds the noise and drift. Step rewards are the repository family's (test runs, resolution,
truncation): none depends on which file holds the bug.
"""

from __future__ import annotations

import random
import re
from typing import Any

from env import rewards
from env.families.procedural.grader import Act, ActKind, ProcFacts, grade_procedural
from env.families.procedural.noise import Emitter, ErrorFact, LogFacts, LogModel
from env.families.procedural.task import ProceduralTask
from env.families.procedural.tools import ProcContext, ProcView
from env.families.procedural.unopened import UnopenedLines, hidden_lines
from env.families.repo.episode import RepoEpisode
from env.families.repo.grader import RepoFacts, RepoGrade
from env.interface import Interface
from env.models import DebugAction, DebugObservation
from env.patches import Files
from env.runtime import Runtime
from env.verdict.repo_judge import run_tests

_FRAME = re.compile(r'File "[^"]*?/adbg-run-[^/"]+/(?P<file>[^"]+)", line \d+, in (?P<function>\S+)')
_KINDS: dict[str, ActKind] = {"open_file": "open", "edit_file": "edit", "replace_in_file": "edit", "create_file": "edit",
                              "run_tests_short": "test", "submit_short": "test", "analyze_logs": "logs"}


def _logger(file: str) -> str:
    return file.removesuffix(".py").replace("/", ".")


def failing_path(task: ProceduralTask) -> list[str]:
    """A chain of real callers ending at the faulty function, outermost first (file::function)."""
    callers: dict[str, list[str]] = {}
    for f in task.functions:
        for callee in f.calls:
            callers.setdefault(callee, []).append(f"{f.file}::{f.name}")
    chain = [task.fault]
    while True:
        options = sorted(c for c in callers.get(chain[-1], []) if c not in chain)
        if not options:
            return chain[::-1]
        chain.append(options[0])


def _error(excerpt: str, fallback: str) -> ErrorFact | None:
    lines = [line.strip()[1:].strip() for line in excerpt.splitlines() if line.strip().startswith("E ")]
    if not lines:
        return None
    head = lines[0]
    exc_type, _, message = head.partition(": ") if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Warning)?: ", head) else ("AssertionError", "", head)
    frames = _FRAME.findall(excerpt)
    where = f"{frames[-1][0]}::{frames[-1][1]}" if frames else fallback  # where it raised, else where the test called in
    return ErrorFact(exc_type=exc_type, message=message[:300], where=where)


def log_facts(runtime: Runtime, task: ProceduralTask) -> LogFacts:
    """What the logs are built from: one real run of the buggy service's failing tests, once per task. Kept on the
    task, not the runtime: a generated task the cache let go takes them with it (one entry per id would grow
    without bound over the 1.2 million ids)."""
    return task.memo("log-facts", lambda: _log_facts(runtime, task))


def _log_facts(runtime: Runtime, task: ProceduralTask) -> LogFacts:
    verdict = run_tests(runtime.sandbox, task, task.files, task.fail_to_pass, graded=False, hosts=runtime.verdict_hosts)
    by_name = {f"{f.file}::{f.name}": f for f in task.functions}
    path = failing_path(task)
    emitters = {name: Emitter(where=name, logger=_logger(f.file), messages=list(f.logs)) for name, f in by_name.items()}
    errors = [e for t in task.fail_to_pass if (e := _error(verdict.excerpts.get(t, ""), path[0])) is not None][:3]
    return LogFacts(
        path=[emitters[name] for name in path if name in emitters],
        others=[e for name, e in sorted(emitters.items()) if name not in path and e.messages],
        neighbours=task.neighbours(),
        errors=errors or [ErrorFact(exc_type="AssertionError", message="unexpected result", where=path[0])],
    )


class ProceduralEpisode(RepoEpisode):
    task: ProceduralTask

    def __init__(self, runtime: Runtime, task: ProceduralTask, seed: int, episode_id: str, interface: Interface):
        rng = random.Random(f"{task.id}:{seed}:logs")  # local: the same seed gives the same logs
        self.view = ProcView(logs=LogModel(log_facts(runtime, task), task.noise, task.drift, rng))
        self.gate: UnopenedLines | None = None  # the partial view's last gate, for the files opened so far
        super().__init__(runtime, task, seed, episode_id, interface)
        self.acts: list[Act] = []

    def _gate(self, files: Files) -> UnopenedLines:
        hidden = hidden_lines(self.task.files, self.view.opened, files or self.task.files)
        if self.gate is None or self.gate.hidden != hidden:  # compiled again only when the opened files changed
            self.gate = UnopenedLines.compiled(hidden)
        return self.gate

    def context(self) -> ProcContext:
        return ProcContext(self.task, self.workspace, self.runtime, self.view)

    def recorded(self, tool: str, args: dict[str, Any]) -> None:
        self.acts.append(Act(kind=_KINDS.get(tool, "other"), target=str(args.get("path", ""))))

    def grade(self, facts: RepoFacts) -> RepoGrade:
        proc = ProcFacts(
            resolved=facts.resolution == "FULL",
            improved=facts.improved,  # the min rule: fitting the visible tests alone is no improvement
            gave_up=facts.gave_up,
            changed=facts.changed,
            steps_used=facts.steps_used,
            max_steps=facts.max_steps,
            fault_file=self.task.fault_file,
            relevant_files=self.task.relevant_files(),
            actions=self.acts,
        )
        grade = grade_procedural(proc)
        return RepoGrade(score=grade.score, components=grade.components)

    def step(self, action: DebugAction) -> DebugObservation:
        observation = super().step(action)
        if not self.done:
            self.view.logs.tick()  # the runtime flutters between steps (probability δ)
        return observation

    def observe(
        self, reward: float, parts: rewards.Breakdown, error: str | None = None, query_result: str | None = None, tool_output: str | None = None,
    ) -> DebugObservation:
        obs = super().observe(reward, parts, error=error, query_result=query_result, tool_output=tool_output)
        files = self.workspace.files() if not self.done else {}
        obs.visible_files = {p: files[p] for p in sorted(self.view.opened) if p in files}
        gate = self._gate(files)  # what a tool carried from the project's code: no line of an unopened file
        obs.tool_output, obs.error, obs.query_result = (None if t is None else gate.scrub(t) for t in (obs.tool_output, obs.error, obs.query_result))
        obs.tool_result = {k: gate.scrub_data(v) for k, v in obs.tool_result.items()}
        obs.info = {k: gate.scrub_data(v) for k, v in obs.info.items()}  # info["error"] repeats the error
        obs.logs = list(self.view.shown_logs)
        obs.time_remaining = max(0, self.task.max_steps - self.step_number)
        return obs
