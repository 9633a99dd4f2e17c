"""The episode grade on hand-built facts: every component and every correction of the reference."""

from env.families.classic.grader import AttemptFacts, EpisodeFacts, baseline_credit, best_attempt, grade_episode, held_out_credit


def facts(attempts, total=8, max_attempts=5, baseline=6, **kw):
    return EpisodeFacts(tests_total=total, baseline_passed=baseline, max_attempts=max_attempts, attempts=attempts, **kw)


def test_solved_on_first_attempt_with_a_correct_hypothesis():
    g = grade_episode(facts([AttemptFacts(tests_passed=8, solved=True, hypothesis_score=1.0)]))
    assert g.components == {"test_credit": 1.0, "efficiency": 0.8, "hypothesis": 1.0, "early_solve": 1.0}
    assert g.score == 0.96


def test_giving_up_at_once_scores_exactly_zero():
    g = grade_episode(facts([], gave_up=True))
    assert g.score == 0.0


def test_resubmitting_the_buggy_code_scores_zero_whatever_the_hypothesis():
    attempt = AttemptFacts(tests_passed=6, solved=False, same_as_buggy=True, hypothesis_score=1.0)
    assert grade_episode(facts([attempt, attempt])).score == 0.0


def test_unsolved_gets_no_efficiency_or_early_credit():
    # The bug passes 4 of 10; this attempt passes 7: 3 of the 6 failing tests fixed.
    g = grade_episode(facts([AttemptFacts(tests_passed=7, solved=False, hypothesis_score=0.5)], total=10, max_attempts=7, baseline=4))
    # The hypothesis (0.5) is paid times the credit (0.5); it was 0.5 and 0.375 before issue 46.
    assert g.components == {"test_credit": 0.5, "efficiency": 0.0, "hypothesis": 0.25, "early_solve": 0.0}
    assert g.score == 0.3375


def test_code_no_better_than_the_bug_earns_nothing_even_with_the_right_diagnosis():
    # A no-op edit of the bug passes what the bug passes: the hypothesis pays only with a fix.
    g = grade_episode(facts([AttemptFacts(tests_passed=6, solved=False, hypothesis_score=1.0)]))
    assert g.components == {"test_credit": 0.0, "efficiency": 0.0, "hypothesis": 0.0, "early_solve": 0.0}
    assert g.score == 0.0
    assert grade_episode(facts([AttemptFacts(tests_passed=6, solved=False, hypothesis_score=0.0)])).score == 0.0


def test_a_partial_fix_earns_its_share_of_the_diagnosis():
    # easy's shape: 8 tests (the bug passes 6), 13 held-out cases (the bug passes 6), 5 attempts. One of the two
    # failing tests fixed (1/2) and 4 of the 7 failing cases (4/7): credit 0.5, so a perfect diagnosis earns half
    # the hypothesis term (issue 46: it earned all of it, 0.45).
    partial = AttemptFacts(tests_passed=7, held_out_passed=10, solved=False, hypothesis_score=1.0)
    g = grade_episode(facts([partial], held_out_total=13, held_out_baseline=6))
    assert g.components == {"test_credit": 0.5, "efficiency": 0.0, "hypothesis": 0.5, "early_solve": 0.0}
    assert g.score == 0.375  # 0.60 x 0.5 + 0.15 x 1.0 x 0.5
    # The mean over graded attempts is what the credit scales: a second, wrong diagnosis halves it again.
    wrong = AttemptFacts(tests_passed=7, held_out_passed=10, solved=False, hypothesis_score=0.0)
    g = grade_episode(facts([partial, wrong], held_out_total=13, held_out_baseline=6))
    assert g.components["hypothesis"] == 0.25 and g.score == 0.3375


def test_breaking_a_passing_test_cancels_a_fixed_one():
    # easy: the bug passes 6 of 8; fixing both failing tests while breaking one passing test is 7 of 8.
    assert baseline_credit(7, 6, 8) == 0.5
    assert baseline_credit(5, 6, 8) == 0.0  # never below 0
    assert baseline_credit(8, 8, 8) == 0.0  # nothing failing to fix: the concurrency task's sequential tests


def test_late_solve_loses_early_bonus_and_some_efficiency():
    attempts = [AttemptFacts(tests_passed=6, solved=False), AttemptFacts(tests_passed=6, solved=False), AttemptFacts(tests_passed=10, solved=True, hypothesis_score=1.0)]
    g = grade_episode(facts(attempts, total=10, max_attempts=7, baseline=6))
    # ceil(7/3) = 3: the third attempt still counts as early.
    assert g.components == {"test_credit": 1.0, "efficiency": round(4 / 7, 6), "hypothesis": round(1 / 3, 6), "early_solve": 1.0}
    assert g.score == round(0.6 + 0.2 * round(4 / 7, 6) + 0.15 * round(1 / 3, 6) + 0.05, 6)


def test_buggy_resubmissions_do_not_dilute_or_count_for_pass_ratio():
    attempts = [AttemptFacts(tests_passed=6, solved=False, same_as_buggy=True), AttemptFacts(tests_passed=8, solved=False, hypothesis_score=0.0)]
    g = grade_episode(facts(attempts, total=10, max_attempts=7, baseline=6))
    assert g.components["test_credit"] == 0.5


def concurrency(attempts, grade_passed, index=None):
    return EpisodeFacts(
        tests_total=8, baseline_passed=8, max_attempts=10, concurrency=True, attempts=attempts, grade_attempt=index, grade_stress_passed=grade_passed
    )


def test_hard_buggy_like_submission_gets_no_sequential_credit():
    # Passes every sequential test but never the stress check: nothing for sequential or stress.
    attempt = AttemptFacts(tests_passed=8, solved=False, stress_passed=False, hypothesis_score=1.0)
    g = grade_episode(concurrency([attempt], False, 0))
    assert g.components == {"sequential": 0.0, "stress": 0.0, "hypothesis": 0.0, "efficiency": 0.0}
    assert g.score == 0.0


def test_hard_hypothesis_pays_only_when_the_graded_stress_check_passed():
    # Passed at submission, failed again at grading: no fix, so the right diagnosis earns nothing either.
    attempt = AttemptFacts(tests_passed=8, solved=True, stress_passed=True, hypothesis_score=1.0)
    assert grade_episode(concurrency([attempt], False, 0)).components["hypothesis"] == 0.0
    assert grade_episode(concurrency([attempt], True, 0)).components["hypothesis"] == 1.0


def test_a_table_of_the_visible_answers_earns_nothing():
    # easy: every visible test passes, but the 13 held-out cases fare as on the bug (6 of 13): no credit at all.
    lookup = AttemptFacts(tests_passed=8, held_out_passed=6, solved=False, hypothesis_score=1.0)
    g = grade_episode(facts([lookup], held_out_total=13, held_out_baseline=6))
    assert g.components == {"test_credit": 0.0, "efficiency": 0.0, "hypothesis": 0.0, "early_solve": 0.0}
    assert g.score == 0.0
    assert g.failure_modes["test_suite_overconfidence"] == 1.0


def test_credit_is_the_smaller_of_the_visible_and_held_out_credits():
    # Both visible failures fixed (1.0) but only 3 of the 7 held-out failures (3/7): credit 3/7.
    partial = AttemptFacts(tests_passed=8, held_out_passed=9, solved=False, hypothesis_score=1.0)
    g = grade_episode(facts([partial], held_out_total=13, held_out_baseline=6))
    # The hypothesis is paid times the credit: 3/7 of it (1.0 and 0.407143 before issue 46).
    assert g.components == {"test_credit": 0.428571, "efficiency": 0.0, "hypothesis": 0.428571, "early_solve": 0.0}
    assert g.score == 0.321428  # 0.75 x the rounded 0.428571
    # Every held-out case but a visible test still failing: the visible side bounds it.
    g = grade_episode(facts([AttemptFacts(tests_passed=7, held_out_passed=13, solved=False)], held_out_total=13, held_out_baseline=6))
    assert g.components["test_credit"] == 0.5


def test_solved_needs_every_held_out_case():
    gold = AttemptFacts(tests_passed=8, held_out_passed=13, solved=True, hypothesis_score=1.0)
    assert grade_episode(facts([gold], held_out_total=13, held_out_baseline=6)).score == 0.96


def test_held_out_credit_edges():
    assert held_out_credit(0, 0, 0) == 1.0  # no held-out cases: the visible tests decide
    assert held_out_credit(5, 5, 5) == 1.0  # the bug fails none: full unless one broke
    assert held_out_credit(4, 5, 5) == 0.0
    assert held_out_credit(4, 6, 13) == 0.0  # never below 0


def test_hard_fix_scores_full():
    attempt = AttemptFacts(tests_passed=8, solved=True, stress_passed=True, hypothesis_score=1.0)
    g = grade_episode(concurrency([attempt], True, 0))
    assert g.score == 1.0


def test_hard_stress_needs_the_full_check_at_submission_and_again_at_grading():
    lucky = AttemptFacts(tests_passed=8, solved=True, stress_passed=True, hypothesis_score=0.0)
    caught = grade_episode(concurrency([lucky], False, 0))
    assert caught.components == {"sequential": 1.0, "stress": 0.0, "hypothesis": 0.0, "efficiency": 1.0}
    assert caught.score == 0.5
    # A grade check cannot credit a submission that failed its own check.
    failed = AttemptFacts(tests_passed=8, solved=False, stress_passed=False, hypothesis_score=0.0)
    assert grade_episode(concurrency([failed], True, 0)).score == 0.0


def test_hard_efficiency_needs_a_solve_within_five_attempts():
    fail = AttemptFacts(tests_passed=8, solved=False, stress_passed=False)
    win = AttemptFacts(tests_passed=8, solved=True, stress_passed=True)
    assert grade_episode(concurrency([fail] * 5 + [win], True, 5)).components["efficiency"] == 0.0
    assert grade_episode(concurrency([fail] * 4 + [win], True, 4)).components["efficiency"] == 1.0


def test_best_attempt_prefers_solved_then_stress_then_count_then_latest():
    a = [AttemptFacts(tests_passed=8, solved=False, stress_passed=False), AttemptFacts(tests_passed=7, solved=False, stress_passed=True), AttemptFacts(tests_passed=5, solved=False, same_as_buggy=True)]
    assert best_attempt(a) == 1
    assert best_attempt([AttemptFacts(tests_passed=1, solved=False, same_as_buggy=True)]) is None


def test_failure_modes():
    attempts = [
        AttemptFacts(tests_passed=8, solved=False, stress_passed=False, follows_red_herring=True, no_progress=True),
        AttemptFacts(tests_passed=8, solved=False, stress_passed=False, repeated=True),
        AttemptFacts(tests_passed=8, solved=True, stress_passed=True),
        AttemptFacts(tests_passed=8, solved=True, stress_passed=True, wrong_claim=True),
    ]
    g = grade_episode(EpisodeFacts(tests_total=8, baseline_passed=8, max_attempts=10, concurrency=True, attempts=attempts, queries=4))
    assert g.failure_modes == {
        "red_herring_susceptibility": 0.5,
        "stagnation": 0.5,
        "exploration_ratio": 0.5,
        "test_suite_overconfidence": 0.5,
    }
