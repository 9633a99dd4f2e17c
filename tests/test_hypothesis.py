"""Hypothesis grading: the real cause pays, the red herring and keyword stuffing do not."""

import pytest

from env.contract import TaskFilter
from env.graders.hypothesis import GoldClaim, judge_hypothesis, suspect_matches
from env.patches import Location
from tests.helpers import CATALOG, GOOD_HYPOTHESIS

RULES = {t.id: t.hypothesis for t in CATALOG.select(TaskFilter(family="classic"))}


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


# -- one claim: stuffing, hedging and denials ------------------------------------------------------

MEASURED_ATTACKS = [
    ("medium", "not sure where: authenticate_user is wrong, validate_password is wrong, a race, a lock problem, hash_password wraps bytes"),
    (
        "hard",
        "no idea: race condition, not atomic, interleaving, lost update, read-modify-write in increment and decrement, "
        "lock released between the read and the write, off-by-one, hash, bytes, overflow, initialisation, deadlock",
    ),
]


@pytest.mark.parametrize(("task_id", "text"), MEASURED_ATTACKS)
def test_the_measured_stuffing_attacks_score_zero(task_id, text):
    j = judge_hypothesis(text, RULES[task_id])
    assert (j.score, j.hedged) == (0.0, True)


@pytest.mark.parametrize(
    ("task_id", "causes"),
    [
        ("easy", "off-by-one in the while loop condition, left <= right, the last element is never checked"),
        ("medium", "hash_password wraps bytes, the b'' prefix, str(), the digest"),
        ("hard", "race condition, not atomic, lost update, read-modify-write in increment and decrement"),
    ],
)
def test_no_idea_before_a_list_of_only_right_causes_still_scores_zero(task_id, causes):
    j = judge_hypothesis(f"no idea: {causes}", RULES[task_id])
    assert (j.score, j.hedged, j.wrong_claim) == (0.0, True, False)


HEDGES = [
    ("or", "hash_password wraps bytes or adds a prefix"),
    ("either", "hash_password either wraps the digest in bytes"),
    ("maybe", "maybe hash_password wraps bytes"),
    ("perhaps", "perhaps hash_password wraps bytes"),
    ("possibly", "hash_password possibly wraps bytes"),
    ("might", "hash_password might wrap bytes"),
    ("could be", "it could be hash_password wrapping bytes"),
    ("not sure", "not sure, hash_password wraps bytes"),
    ("unsure", "unsure: hash_password wraps bytes"),
    ("no idea", "no idea really; hash_password wraps bytes"),
    ("don't know", "I don't know why, hash_password wraps bytes"),
    ("unclear", "unclear, hash_password wraps bytes"),
    ("one of", "it is one of these: hash_password wraps bytes"),
    ("somewhere", "somewhere in hash_password the digest is wrapped in bytes"),
    ("probably", "hash_password probably wraps bytes"),
    ("slash", "hash_password wraps bytes/str"),
    ("question mark", "hash_password wraps bytes?"),
    ("enumeration", "1. hash_password wraps bytes\n2. the digest gets a prefix"),
    ("several causes", "several causes: hash_password wraps bytes"),
    ("another cause", "hash_password wraps bytes; another bug adds a prefix"),
    ("keyword list", "hash_password, bytes, prefix, str("),
]


@pytest.mark.parametrize(("marker", "text"), HEDGES, ids=[m for m, _ in HEDGES])
def test_each_hedge_marker_zeroes_a_right_claim(marker, text):
    j = judge_hypothesis(text, RULES["medium"])
    assert (j.score, j.hedged, j.names_location, j.names_mechanism) == (0.0, True, True, True)


def test_the_same_claim_without_hedging_scores_full():
    assert judge_hypothesis("hash_password wraps bytes", RULES["medium"]).score == 1.0
    assert judge_hypothesis("src/auth.py: hash_password wraps bytes", RULES["medium"]).score == 1.0  # a path is no alternative


@pytest.mark.parametrize(
    "text",
    [
        "authenticate_user is fine, but a race in validate_password",
        "authenticate_user is fine, and there is a race; hash_password wraps bytes",
        "not sure where: authenticate_user is fine, a lock problem",
        "the lock is fine; authenticate_user is broken",
    ],
)
def test_a_denial_exempts_only_what_it_denies(text):
    assert judge_hypothesis(text, RULES["medium"]).score == 0.0


@pytest.mark.parametrize(
    "text",
    [
        "authenticate_user is fine: hash_password wraps bytes",
        "authenticate_user works; hash_password wraps bytes",
        "validate_password is a red herring: hash_password wraps bytes",
        "it is not a race condition: hash_password wraps bytes",
        "no race and no lock problem: hash_password wraps bytes",
        "The bug is in hash_password, not in authenticate_user: it wraps bytes",
        "The bug is in hash_password, not authenticate_user: it wraps bytes",
        "neither a race nor a timing problem: hash_password wraps bytes",
    ],
)
def test_denying_a_wrong_cause_or_the_symptom_claims_nothing(text):
    assert judge_hypothesis(text, RULES["medium"]).score == 1.0


def test_a_denied_location_earns_no_credit():
    j = judge_hypothesis("hash_password is fine: the digest is wrapped in bytes", RULES["medium"])
    assert (j.score, j.names_location, j.names_mechanism) == (0.5, False, True)


@pytest.mark.parametrize(
    "text",
    [
        "hash_password's b'' prefix makes authenticate_user fail",
        "hash_password's prefix causes authenticate_user to reject valid passwords",
        "authenticate_user fails because hash_password wraps bytes",
        "hash_password wraps bytes, so validate_password compares the wrong strings",
        "the failure surfaces in authenticate_user; hash_password wraps bytes",
        "The bug is in hash_password, which authenticate_user calls: it wraps bytes",
    ],
)
def test_a_causal_chain_ending_at_the_symptom_is_one_claim(text):
    j = judge_hypothesis(text, RULES["medium"])
    assert (j.score, j.follows_red_herring) == (1.0, False)


@pytest.mark.parametrize(
    "text",
    [
        "authenticate_user is broken",
        "fix validate_password",
        "hash_password wraps bytes, but the bug is in authenticate_user",
        "hash_password wraps bytes the bug is in authenticate_user",
        "hash_password wraps bytes, so the bug is in validate_password",
        "The culprit: authenticate_user. hash_password wraps bytes",
        "hash_password wraps bytes; the culprit is not hash_password but authenticate_user",
    ],
)
def test_blaming_the_symptom_scores_zero_even_beside_the_right_cause(text):
    j = judge_hypothesis(text, RULES["medium"])
    assert (j.score, j.follows_red_herring) == (0.0, True)


@pytest.mark.parametrize("separator", [", ", " - ", " and "])
def test_a_blame_word_binds_within_its_own_phrase(separator):
    j = judge_hypothesis(f"get_count compares the values wrongly{separator}increment", RULES["hard"])
    assert (j.score, j.follows_red_herring) == (0.0, True)
    assert judge_hypothesis(f"increment is wrong{separator}get_count fails", RULES["hard"]).score == 0.5


def test_heuristic_agent_hypotheses_keep_their_scores():
    assert (
        judge_hypothesis(
            "The bug is in hash_password, line 7: the `str(...)` conversion corrupts the value; use its argument as is.", RULES["medium"]
        ).score
        == 1.0
    )
    assert (
        judge_hypothesis(
            "The bug is in binary_search, line 4: comparison `<` should be `<=` (off by one at the boundary).", RULES["easy"]
        ).score
        == 1.0
    )
    assert judge_hypothesis("The bug is in increment, line 15: `+` should be `-`.", RULES["hard"]).score == 0.5
    j = judge_hypothesis(
        "The bug is in validate_password, line 14: comparison `==` should be `!=` (off by one at the boundary).", RULES["medium"]
    )
    assert (j.score, j.follows_red_herring, j.wrong_claim) == (0.0, True, True)


@pytest.mark.parametrize("task", CATALOG.select(TaskFilter(family="classic")), ids=lambda t: t.id)
def test_the_gold_hypothesis_scores_full(task):
    j = judge_hypothesis(task.gold_hypothesis, task.hypothesis)
    assert (j.score, j.hedged, j.structured, j.suspect_ok, j.mechanism_ok) == (1.0, False, False, None, None)


# -- structured fields -----------------------------------------------------------------------------

MEDIUM_GOLD = GoldClaim(locations=[Location(file="auth.py", function="hash_password", start=6, end=7)], mechanisms=["wrong_representation"])


def judge_medium(text, suspect=None, mechanism=None, gold=MEDIUM_GOLD):
    return judge_hypothesis(text, RULES["medium"], suspect=suspect, mechanism=mechanism, gold=gold)


def test_right_fields_alone_score_full():
    j = judge_medium("", suspect="hash_password", mechanism="wrong_representation")
    assert (j.score, j.structured, j.suspect_ok, j.mechanism_ok, j.names_location, j.names_mechanism) == (1.0, True, True, True, True, True)
    assert judge_medium(None, suspect="auth.py:7", mechanism="wrong_representation").score == 1.0


@pytest.mark.parametrize(("line", "ok"), [(3, False), (4, True), (6, True), (7, True), (9, True), (10, False)])
def test_a_file_line_suspect_counts_within_two_lines_of_the_gold_change(line, ok):
    j = judge_medium("", suspect=f"auth.py:{line}")
    assert (j.suspect_ok, j.score) == (ok, 0.5 if ok else 0.0)


def test_the_mechanism_field_is_scored_by_equality():
    j = judge_medium("", mechanism="wrong_representation")
    assert (j.score, j.mechanism_ok, j.names_mechanism) == (0.5, True, True)
    j = judge_medium("", mechanism="race_condition")
    assert (j.score, j.mechanism_ok, j.names_mechanism, j.wrong_claim) == (0.0, False, False, False)


def test_fields_replace_the_texts_location_and_mechanism():
    j = judge_medium("hash_password wraps bytes", suspect="auth.py:20")
    assert (j.score, j.names_location, j.names_mechanism, j.suspect_ok, j.mechanism_ok) == (0.5, False, True, False, None)
    j = judge_medium("hash_password wraps bytes", mechanism="wrong_value")
    assert (j.score, j.names_location, j.names_mechanism) == (0.5, True, False)
    j = judge_medium("the stored hash never matches", suspect="auth.hash_password", mechanism="wrong_representation")
    assert (j.score, j.names_location, j.names_mechanism) == (1.0, True, True)


@pytest.mark.parametrize(
    "text",
    [
        "a race condition on the stored digest",
        "hash_password wraps bytes, or maybe authenticate_user",
        "no idea: hash_password, bytes, prefix",
        "authenticate_user is broken",
    ],
)
def test_right_fields_do_not_rescue_a_wrong_hedged_or_blaming_text(text):
    assert judge_medium(text, suspect="hash_password", mechanism="wrong_representation").score == 0.0


def test_a_suspect_naming_the_symptom_follows_the_red_herring():
    j = judge_medium("", suspect="authenticate_user", mechanism="wrong_representation")
    assert (j.score, j.suspect_ok, j.follows_red_herring) == (0.0, False, True)


def test_fields_without_a_gold_claim_do_not_match():
    j = judge_medium("", suspect="hash_password", mechanism="wrong_representation", gold=None)
    assert (j.score, j.suspect_ok, j.mechanism_ok, j.structured) == (0.0, False, False, True)


# -- suspect_matches -------------------------------------------------------------------------------

CART = [Location(file="src/shop/cart.py", function="Cart.add", start=10, end=12)]
MODULE_LEVEL = [Location(file="binary_search.py", function="binary_search", start=4, end=4)]


@pytest.mark.parametrize(
    ("suspect", "gold", "expected"),
    [
        ("Cart.add", CART, True),
        ("add", CART, True),
        ("  add()  ", CART, True),
        ("cart.Cart.add", CART, True),
        ("src/shop/cart.py::Cart.add", CART, True),
        ("cart.py::add", CART, True),
        ("Other.add", CART, False),
        ("cart.add", CART, False),
        ("Add", CART, False),
        ("binary_search", MODULE_LEVEL, True),
        ("binary_search.binary_search", MODULE_LEVEL, True),
        ("search", MODULE_LEVEL, False),
        ("src/shop/cart.py:8", CART, True),
        ("src/shop/cart.py:14", CART, True),
        ("src/shop/cart.py:15", CART, False),
        ("src/shop/cart.py:7", CART, False),
        ("cart.py:11", CART, True),
        ("shop/cart.py:11", CART, True),
        ("./src/shop/cart.py:11", CART, True),
        ("other/cart.py:11", CART, False),
        ("art.py:11", CART, False),
        ("binary_search.py:4", MODULE_LEVEL, True),
        ("src/pkg/binary_search.py:4", MODULE_LEVEL, True),
        ("binary_search.py:7", MODULE_LEVEL, False),
        ("", CART, False),
        ("   ", CART, False),
        ("Cart.add", [], False),
    ],
)
def test_suspect_matches(suspect, gold, expected):
    assert suspect_matches(suspect, gold) is expected


def test_plain_words_of_a_race_explanation_are_not_hedging():
    # "one of the threads" describes the race; "increment/decrement" names one place (both halves are the location).
    text = "Race condition in increment/decrement: one of the threads reads the count, the other writes, and an update is lost."
    assert judge_hypothesis(text, RULES["hard"]).score == 1.0
    assert judge_hypothesis("It is one of these: a race in increment, or a lost update.", RULES["hard"]).score == 0.0
    assert judge_hypothesis("A race/lock problem in increment.", RULES["hard"]).score == 0.0
