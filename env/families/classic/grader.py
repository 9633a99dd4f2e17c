"""Episode grade of the classic tasks: a pure function of the recorded attempts.

    grade_episode(EpisodeFacts(tests_total=8, baseline_passed=6, max_attempts=5, attempts=[...]))
    # -> Grade(score=0.96, components={...}, failure_modes={...})

Standard tasks: 0.60 test_credit + 0.20 efficiency + 0.15 hypothesis + 0.05 early_solve.
Concurrency task: 0.40 sequential + 0.30 stress + 0.20 hypothesis + 0.10 efficiency.

Every component pays only for trusted test outcomes better than the buggy code's own (its baseline),
and what decides them includes the episode's held-out cases (``held_out.py``: drawn from the server's
secret and the seed, never shown; the agent learns only how many failed):
- test_credit: the best attempt's min(visible credit, held-out credit), each (passing - passing on the
  bug) / failing on the bug, never below 0: a no-op, the bug with comments or an extra function, or any
  code no better than the bug earns nothing, breaking a test the bug passed cancels a fixed one, and a
  table of the visible tests' answers, which fixes no held-out case, earns nothing either;
- hypothesis: the mean hypothesis score of the graded attempts times the credit that gates it (test_credit,
  or on the concurrency task the graded stress verdict, 1 or 0): a diagnosis is worth only as much as the
  trusted outcome it improved, so a right diagnosis with nothing fixed earns nothing and one with half the
  failing tests fixed earns half;
- sequential (concurrency task, where the bug passes every sequential test): the share of
  sequential tests passed times the submission's own stress verdict (1 or 0), so only a submission
  that passed the full stress check counts;
- stress: 1.0 when the graded submission passed the full stress check when submitted and again
  at grading (the same check, never a weaker one), else 0;
- efficiency and early_solve: only for a solved task (every visible test and held-out case passing: test_credit 1).
A submission with the buggy code's AST is no submission, so giving up at once, submitting
nothing or resubmitting the bug scores exactly 0.0.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, Field


class AttemptFacts(BaseModel):
    """What one executed submission did (recorded by the episode)."""

    tests_passed: int
    held_out_passed: int = Field(0, description="Held-out cases passed (of EpisodeFacts.held_out_total)")
    solved: bool
    same_as_buggy: bool = False
    repeated: bool = Field(False, description="Same AST as an earlier attempt")
    no_progress: bool = Field(False, description="Passing count unchanged and not solved")
    timed_out: bool = False
    stress_passed: bool | None = None
    hypothesis_score: float = 0.0
    follows_red_herring: bool = False
    wrong_claim: bool = False


class EpisodeFacts(BaseModel):
    tests_total: int
    baseline_passed: int = Field(description="Tests the buggy code itself passes")
    max_attempts: int
    held_out_total: int = Field(0, description="The episode's held-out cases")
    held_out_baseline: int = Field(0, description="Held-out cases the buggy code itself passes")
    concurrency: bool = False
    attempts: list[AttemptFacts] = Field(default_factory=list)
    queries: int = 0
    gave_up: bool = False
    grade_attempt: int | None = Field(None, description="Index of the attempt the grade's stress check judged")
    grade_stress_passed: bool = Field(False, description="That attempt passed the full stress check again at grading")


class Grade(BaseModel):
    score: float
    components: dict[str, float]
    failure_modes: dict[str, float]


STANDARD_WEIGHTS = {"test_credit": 0.60, "efficiency": 0.20, "hypothesis": 0.15, "early_solve": 0.05}
CONCURRENCY_WEIGHTS = {"sequential": 0.40, "stress": 0.30, "hypothesis": 0.20, "efficiency": 0.10}
EARLY_FRACTION = 3  # solved within ceil(max_attempts / 3) attempts
CONCURRENCY_EFFICIENT_ATTEMPTS = 5


def best_attempt(attempts: list[AttemptFacts]) -> int | None:
    """The attempt the grade's stress check judges (latest among the best)."""
    graded = [i for i, a in enumerate(attempts) if not a.same_as_buggy]
    if not graded:
        return None
    return max(
        graded,
        key=lambda i: (attempts[i].solved, bool(attempts[i].stress_passed), attempts[i].tests_passed + attempts[i].held_out_passed, i),
    )


def baseline_credit(tests_passed: int, baseline_passed: int, tests_total: int) -> float:
    """The share of the tests the bug fails that now pass, less the tests it passed that now fail, >= 0."""
    failing = tests_total - baseline_passed
    if failing <= 0:
        return 0.0
    return max(0.0, (tests_passed - baseline_passed) / failing)


def held_out_credit(passed: int, baseline: int, total: int) -> float:
    """``baseline_credit`` over the held-out cases; 1.0 with none (the visible tests decide alone), and when the
    bug fails none of them, 1.0 only if none broke."""
    if total == 0:
        return 1.0
    if baseline >= total:
        return 1.0 if passed >= total else 0.0
    return baseline_credit(passed, baseline, total)


def test_credit(attempt: AttemptFacts, facts: EpisodeFacts) -> float:
    """An attempt's credit: the smaller of its visible and held-out credits, so fitting one side earns nothing."""
    visible = baseline_credit(attempt.tests_passed, facts.baseline_passed, facts.tests_total)
    return min(visible, held_out_credit(attempt.held_out_passed, facts.held_out_baseline, facts.held_out_total))


def failure_modes(facts: EpisodeFacts) -> dict[str, float]:
    """The reference README's four failure modes, each a fraction in [0, 1]."""
    n = len(facts.attempts)
    hypotheses = facts.attempts
    # Trusting the visible suite: every visible test passed, but the held-out cases or the stress check did not.
    overconfident = [
        a
        for a in facts.attempts
        if a.tests_passed == facts.tests_total and (a.stress_passed is False or a.held_out_passed < facts.held_out_total)
    ]
    return {
        "red_herring_susceptibility": round(sum(a.follows_red_herring or a.wrong_claim for a in hypotheses) / n, 4) if n else 0.0,
        "stagnation": round(sum(a.repeated or a.no_progress or a.same_as_buggy for a in facts.attempts) / n, 4) if n else 0.0,
        "exploration_ratio": round(facts.queries / (facts.queries + n), 4) if facts.queries + n else 0.0,
        "test_suite_overconfidence": round(len(overconfident) / n, 4) if n else 0.0,
    }


def grade_episode(facts: EpisodeFacts) -> Grade:
    graded = [a for a in facts.attempts if not a.same_as_buggy]
    modes = failure_modes(facts)
    if not graded:
        names = CONCURRENCY_WEIGHTS if facts.concurrency else STANDARD_WEIGHTS
        return Grade(score=0.0, components={k: 0.0 for k in names}, failure_modes=modes)
    mean_hypothesis = sum(a.hypothesis_score for a in graded) / len(graded)
    solved_at = next((i + 1 for i, a in enumerate(facts.attempts) if a.solved and not a.same_as_buggy), None)
    if facts.concurrency:
        index = facts.grade_attempt
        graded_passed = index is not None and bool(facts.attempts[index].stress_passed) and facts.grade_stress_passed
        stress = 1.0 if graded_passed else 0.0
        components = {
            # Each gated term times its gate: the stress verdicts are 1 or 0, so these products pay all or nothing.
            "sequential": max(a.tests_passed / facts.tests_total * float(bool(a.stress_passed)) for a in graded),
            "stress": stress,
            "hypothesis": mean_hypothesis * stress,
            "efficiency": 1.0 if solved_at is not None and solved_at <= CONCURRENCY_EFFICIENT_ATTEMPTS else 0.0,
        }
        weights = CONCURRENCY_WEIGHTS
    else:
        credit = max(test_credit(a, facts) for a in graded)
        components = {
            "test_credit": credit,
            "efficiency": max(0.0, (facts.max_attempts - solved_at) / facts.max_attempts) if solved_at else 0.0,
            "hypothesis": mean_hypothesis * credit,  # a partial fix earns its share of the diagnosis, not all of it
            "early_solve": 1.0 if solved_at and solved_at <= math.ceil(facts.max_attempts / EARLY_FRACTION) else 0.0,
        }
        weights = STANDARD_WEIGHTS
    components = {k: round(v, 6) for k, v in components.items()}
    score = round(sum(weights[k] * components[k] for k in weights), 6)
    return Grade(score=min(1.0, max(0.0, score)), components=components, failure_modes=modes)
