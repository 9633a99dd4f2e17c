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

The fault's location enters only this end-of-episode grade, never a step reward.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

W_CORRECTNESS, W_EFFICIENCY, W_ROBUSTNESS, W_REASONING = 0.4, 0.2, 0.2, 0.2


ActKind = Literal["open", "edit", "test", "logs", "other"]


class Act(BaseModel):
    kind: ActKind
    target: str = ""


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


class ProcGrade(BaseModel):
    score: float
    components: dict[str, float]


def exploration(facts: ProcFacts) -> float:
    relevant = set(facts.relevant_files) | {facts.fault_file}
    opened: set[str] = set()
    for act in facts.actions:
        if act.kind == "edit":
            break
        if act.kind == "open":
            opened.add(act.target)
    return len(opened & relevant) / len(relevant)


def usage_of_tests(facts: ProcFacts) -> float:
    kinds = [a.kind for a in facts.actions]
    if "edit" not in kinds:
        return 0.0
    first, last = kinds.index("edit"), len(kinds) - 1 - kinds[::-1].index("edit")
    return 0.5 * ("test" in kinds[:first]) + 0.5 * ("test" in kinds[last + 1 :])


def redundancy(facts: ProcFacts) -> float:
    if not facts.actions:
        return 0.0
    repeats = 0
    seen: set[tuple[str, str]] = set()  # (kind, target) done since the last edit
    for act in facts.actions:
        if act.kind == "edit":
            seen.clear()
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
    wrong = sum(1 for a in facts.actions if a.kind == "edit" and a.target != facts.fault_file)
    robustness = 1 / (1 + wrong)
    terms = {"exploration": exploration(facts), "test_usage": usage_of_tests(facts), "redundancy": redundancy(facts)}
    reasoning = max(0.0, 0.5 * terms["exploration"] + 0.3 * terms["test_usage"] - 0.2 * terms["redundancy"])
    score = W_CORRECTNESS * correctness + W_EFFICIENCY * efficiency + W_ROBUSTNESS * robustness + W_REASONING * reasoning
    components = {"correctness": correctness, "efficiency": efficiency, "robustness": robustness, "reasoning": reasoning}
    components.update({f"reasoning.{k}": v for k, v in terms.items()})
    return ProcGrade(score=round(min(1.0, max(0.0, score)), 6), components={k: round(v, 6) for k, v in components.items()})
