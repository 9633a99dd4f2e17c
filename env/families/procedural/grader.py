"""The grade of a procedural episode: a pure function of the recorded actions (DebugOps-RX's four terms).

    grade_procedural(ProcFacts(resolved=True, steps_used=9, max_steps=30, fault_file="svc/orders.py",
                               relevant_files=["svc/orders.py", "svc/pricing.py"], actions=[...]))

score = 0.4 x correctness + 0.2 x efficiency + 0.2 x robustness + 0.2 x reasoning, each in [0, 1],
and exactly 0.0 when the agent changed no source file or gave up. Efficiency, robustness and
reasoning pay only when the trusted outcome improved (a FAIL_TO_PASS test passes at the end, a held-out one
too when the task holds some out, and no PASS_TO_PASS test broke): how an agent worked is worth nothing if it
fixed nothing, and fitting the visible tests alone fixes nothing. Unlike the classic and repository grades, which
multiply a gated term by the credit that gates it, this gate is all or nothing: the facts record no fraction of
the fix (correctness is 0 or 1, ``improved`` a yes or no).
With the actions in order
(``open`` a file, ``edit`` a file, ``test`` run, ``logs`` read, anything else):

- correctness: 1 if every FAIL_TO_PASS and PASS_TO_PASS test passes at the end, else 0;
- efficiency: the fraction of the time budget left, 1 − steps used / max steps (only when correct);
- robustness: 1 / (1 + wrong-file edits), a wrong-file edit being an edit of a source file the fix
  does not touch (thrashing through wrong files);
- reasoning: R = max(0, 0.5 · Exploration + 0.3 · TestUsage − 0.2 · Redundancy), where
  Exploration = the share of the relevant files (the faulty function's file and the files of its
  real callers and callees) opened before the first edit; TestUsage = ½ for running the tests
  before the first edit plus ½ for running them after the last edit; Redundancy = the share of
  actions that repeat the previous action on the same target with nothing changed in between
  (re-opening an open file, re-running tests or re-reading logs without an edit).

Paths are compared as the tools normalise them (``env.workspace.check_path``): ``./svc/a.py``, ``svc//a.py`` and
``svc/x/../a.py`` are ``svc/a.py``, so a fix's grade never depends on how its paths were spelled. An edit means an
edit of a source file: a test file (``env.project.is_test_path``: ``test_*.py``, ``*_test.py``, ``conftest.py``, or
any file under a ``tests``, ``test`` or ``testing`` directory) is no part of the project any run sees, since every
run, visible or held out, takes the task's own tests and the sandbox only the source files. So writing or changing
a test file, the agent's own regression test included, is never a wrong-file edit, nor the first or last edit the
reasoning terms look at; it only makes a re-open of that file no repeat.

The fault's location enters only this end-of-episode grade, never a step reward.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator

from env.project import is_test_path
from env.workspace import PathError, check_path

W_CORRECTNESS, W_EFFICIENCY, W_ROBUSTNESS, W_REASONING = 0.4, 0.2, 0.2, 0.2


ActKind = Literal["open", "edit", "test", "logs", "other"]


def normalised(path: str) -> str:
    """``path`` as the tools normalise it; one no tool accepts stays as given (it names no file, so it matches none)."""
    if not path:
        return path
    try:
        return check_path(path)
    except PathError:
        return path


class Act(BaseModel):
    kind: ActKind
    target: str = Field("", description="The path the action named, normalised as the tools normalise it")

    @field_validator("target")
    @classmethod
    def _normalised(cls, value: str) -> str:
        return normalised(value)

    @property
    def source_edit(self) -> bool:
        """An edit of the project's code: a test file is none (no run reads the agent's copy of one)."""
        return self.kind == "edit" and not is_test_path(self.target)


class ProcFacts(BaseModel):
    resolved: bool
    improved: bool = Field(description="F2P tests pass at the end (visible and held-out ones) and no P2P test broke")
    gave_up: bool = False
    changed: bool = Field(description="the agent's patch changes at least one source file")
    steps_used: int
    max_steps: int
    fault_file: str
    relevant_files: list[str]
    actions: list[Act]

    @field_validator("fault_file")
    @classmethod
    def _normalised_file(cls, value: str) -> str:
        return normalised(value)

    @field_validator("relevant_files")
    @classmethod
    def _normalised_files(cls, value: list[str]) -> list[str]:
        return [normalised(v) for v in value]


class ProcGrade(BaseModel):
    score: float
    components: dict[str, float]


def exploration(facts: ProcFacts) -> float:
    relevant = set(facts.relevant_files) | {facts.fault_file}
    opened: set[str] = set()
    for act in facts.actions:
        if act.source_edit:
            break
        if act.kind == "open":
            opened.add(act.target)
    return len(opened & relevant) / len(relevant)


def usage_of_tests(facts: ProcFacts) -> float:
    edits = [i for i, a in enumerate(facts.actions) if a.source_edit]
    if not edits:
        return 0.0
    kinds = [a.kind for a in facts.actions]
    return 0.5 * ("test" in kinds[: edits[0]]) + 0.5 * ("test" in kinds[edits[-1] + 1 :])


def redundancy(facts: ProcFacts) -> float:
    if not facts.actions:
        return 0.0
    repeats = 0
    seen: set[tuple[str, str]] = set()  # (kind, target) done since the last edit
    for act in facts.actions:
        if act.source_edit:
            seen.clear()
            continue
        if act.kind == "edit":  # a test file changed: its text is new, what any run or the logs show is not
            seen.discard(("open", act.target))
            continue
        key = (act.kind, act.target)
        if act.kind in ("open", "test", "logs") and key in seen:
            repeats += 1
        seen.add(key)
    return repeats / len(facts.actions)


def grade_procedural(facts: ProcFacts) -> ProcGrade:
    if not facts.changed or facts.gave_up or not (facts.improved or facts.resolved):
        return ProcGrade(score=0.0, components={"correctness": 0.0, "efficiency": 0.0, "robustness": 0.0, "reasoning": 0.0})
    correctness = 1.0 if facts.resolved else 0.0
    efficiency = max(0.0, 1 - facts.steps_used / facts.max_steps) if facts.resolved else 0.0
    wrong = sum(1 for a in facts.actions if a.source_edit and a.target != facts.fault_file)
    robustness = 1 / (1 + wrong)
    terms = {"exploration": exploration(facts), "test_usage": usage_of_tests(facts), "redundancy": redundancy(facts)}
    reasoning = max(0.0, 0.5 * terms["exploration"] + 0.3 * terms["test_usage"] - 0.2 * terms["redundancy"])
    score = W_CORRECTNESS * correctness + W_EFFICIENCY * efficiency + W_ROBUSTNESS * robustness + W_REASONING * reasoning
    components = {"correctness": correctness, "efficiency": efficiency, "robustness": robustness, "reasoning": reasoning}
    components.update({f"reasoning.{k}": v for k, v in terms.items()})
    return ProcGrade(score=round(min(1.0, max(0.0, score)), 6), components={k: round(v, 6) for k, v in components.items()})
