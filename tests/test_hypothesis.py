"""Hypothesis grading: the real cause pays, the red herring and keyword stuffing do not."""

import pytest

from env.graders.hypothesis import judge_hypothesis
from tests.helpers import GOOD_HYPOTHESIS, REGISTRY

RULES = {t.id: t.hypothesis for t in REGISTRY.all() if t.family == "classic"}


@pytest.mark.parametrize("task_id", ["easy", "medium", "hard"])
def test_a_precise_hypothesis_scores_full(task_id):
    assert judge_hypothesis(GOOD_HYPOTHESIS[task_id], RULES[task_id]).score == 1.0


def test_medium_blaming_only_authenticate_user_scores_zero():
    j = judge_hypothesis("The bug is in authenticate_user: it returns False for valid users.", RULES["medium"])
    assert j.score == 0.0
    assert j.follows_red_herring


def test_medium_blaming_validate_password_scores_zero():
    assert judge_hypothesis("validate_password compares the hashes wrongly", RULES["medium"]).score == 0.0


def test_medium_naming_hash_password_and_why_scores_one():
    j = judge_hypothesis("hash_password returns str(bytes(digest)), i.e. \"b'...'\", not the plain hex digest", RULES["medium"])
    assert (j.score, j.names_location, j.names_mechanism, j.follows_red_herring) == (1.0, True, True, False)


def test_medium_naming_hash_password_without_why_scores_half():
    assert judge_hypothesis("The problem is hash_password.", RULES["medium"]).score == 0.5


def test_medium_hedging_towards_the_red_herring_scores_zero():
    text = "hash_password adds a b' prefix, or maybe the bug is in authenticate_user"
    assert judge_hypothesis(text, RULES["medium"]).score == 0.0


def test_denying_the_red_herring_is_not_blaming_it():
    text = "authenticate_user is correct and only shows the symptom; hash_password wraps bytes in str()"
    assert judge_hypothesis(text, RULES["medium"]).score == 1.0


@pytest.mark.parametrize("task_id", ["easy", "medium", "hard"])
def test_keyword_stuffing_scores_no_more_than_a_wrong_hypothesis(task_id):
    stuffed = (
        "off-by-one in the loop condition, should be <=; hash_password wraps bytes b' prefix; "
        "race condition, lock not atomic, read-modify-write in increment and decrement; "
        "authenticate_user bug; overflow; encoding; timing"
    )
    wrong = "The recursion depth is exceeded because of a deadlock in the overflow check."
    assert judge_hypothesis(stuffed, RULES[task_id]).score == 0.0
    assert judge_hypothesis(stuffed, RULES[task_id]).score <= judge_hypothesis(wrong, RULES[task_id]).score


def test_hard_naming_only_the_mechanism_scores_half():
    assert judge_hypothesis("It is a race condition.", RULES["hard"]).score == 0.5


def test_empty_hypothesis_scores_zero():
    assert judge_hypothesis("", RULES["easy"]).score == 0.0
    assert judge_hypothesis(None, RULES["easy"]).score == 0.0


def test_easy_wrong_cause_scores_zero():
    assert judge_hypothesis("The mid computation is wrong and can overflow.", RULES["easy"]).score == 0.0
