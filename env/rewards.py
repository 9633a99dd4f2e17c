"""Dense step rewards: pure functions of what a step did, as in the reference README's table.

    submission_reward(best_passed=6, passed=8, total=8, solved=True, timed_out=False)
    # -> {"progress": 0.0375, "solve_bonus": 0.5}

Progress is measured against the best trusted outcome so far in the episode (at first, the buggy
code's own), never against the previous step: a step pays only for passing more tests than any
earlier step did, so alternating a broken submission with the bug, or re-running tests, cannot
pump reward, and an episode whose outcome never beats the buggy baseline sums to <= 0.

| event                                   | reward                    |
|-----------------------------------------|---------------------------|
| a fix passes more tests than the best so far | +0.15 x gain / total |
| a fix passes fewer tests than the best so far | -0.10 x loss / total |
| a fix is no better (and does not solve) | -0.05                     |
| all tests pass (the task is solved)     | +0.50                     |
| the submitted code times out            | -0.10                     |
| submit_fix without a hypothesis         | -0.10, the code is not run|
| first query_context                     | 0.00                      |
| every later query_context               | -0.05                     |
| the episode is truncated at max_steps   | -0.20                     |
"""

from __future__ import annotations

PROGRESS_SCALE = 0.15
REGRESSION_SCALE = 0.10
STAGNATION = -0.05
SOLVE_BONUS = 0.50
TIMEOUT = -0.10
MISSING_HYPOTHESIS = -0.10
EXTRA_QUERY = -0.05
TRUNCATION = -0.20

Breakdown = dict[str, float]


def _r(value: float) -> float:
    return float(round(value, 6))  # keeps sums exact to the table's precision; float even for an empty sum


def submission_reward(best_passed: int, passed: int, total: int, solved: bool, timed_out: bool) -> Breakdown:
    """Reward of one executed submission, relative to the most tests any code of the episode passed."""
    if timed_out:
        return {"timeout": TIMEOUT}
    parts: Breakdown = {}
    delta = passed - best_passed
    if delta > 0:
        parts["progress"] = _r(PROGRESS_SCALE * delta / total)
    elif delta < 0:
        parts["regression"] = _r(-REGRESSION_SCALE * -delta / total)
    elif not solved:
        parts["stagnation"] = STAGNATION
    if solved:
        parts["solve_bonus"] = SOLVE_BONUS
    return parts


def missing_hypothesis_reward() -> Breakdown:
    return {"missing_hypothesis": MISSING_HYPOTHESIS}


def query_reward(queries_before: int) -> Breakdown:
    return {"query_cost": 0.0 if queries_before == 0 else EXTRA_QUERY}


def truncation_reward() -> Breakdown:
    return {"truncation": TRUNCATION}


def total(parts: Breakdown) -> float:
    return _r(sum(parts.values()))


# -- repository tasks ---------------------------------------------------------------------------
#
# | event (repository task)                                   | reward                          |
# |-----------------------------------------------------------|---------------------------------|
# | a clean run (every P2P test it may run ran, none broke)      | +0.30 x gain / number of F2P |
# | passes more FAIL_TO_PASS tests than any earlier clean run    |   tests (held-out included)  |
# | a PASS_TO_PASS test fails where its previous run passed      | -0.20 / number of P2P tests  |
# | submit, and the task is resolved (every F2P and P2P passes,  | +0.50                        |
# |   held-out ones included)                                    |                              |
# | the episode is truncated at max_steps                        | -0.20                        |
#
# Held-out tests: ``run_tests`` runs the visible tests only, so its progress counts visible F2P tests over the whole
# F2P list (an overfit's progress is the visible share); ``submit`` runs the held-out ones too (counted, never shown),
# so the rest of the progress and the resolved bonus need every held-out test. A clean run needs every visible P2P
# test, and on submit every held-out one. run_tests does not run the held-out tests, even to report a count: the
# project's code sees their inputs and decides their outcomes, so a count (or a reward) after each of many runs would
# carry the inputs out bit by bit; and it would double every run's cost.

F2P_PROGRESS = 0.30
P2P_REGRESSION = 0.20
RESOLVED_BONUS = 0.50


def test_run_reward(f2p_gain: int, total_f2p: int, newly_broken_p2p: int, total_p2p: int) -> Breakdown:
    """Reward of one test run: F2P tests passing beyond the best clean run so far (a run that broke no
    P2P test and ran them all: passing F2P tests by breaking P2P ones earns nothing), and P2P tests
    that broke since their last run."""
    parts: Breakdown = {}
    if f2p_gain > 0 and total_f2p:
        parts["f2p_progress"] = _r(F2P_PROGRESS * f2p_gain / total_f2p)
    if newly_broken_p2p and total_p2p:
        parts["p2p_regression"] = _r(-P2P_REGRESSION * newly_broken_p2p / total_p2p)
    return parts


def resolved_reward(resolved: bool) -> Breakdown:
    return {"resolved_bonus": RESOLVED_BONUS} if resolved else {}
