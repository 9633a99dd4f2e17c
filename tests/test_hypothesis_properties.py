"""Property tests: texts stuffed or hedged with a task's own vocabulary never beat a wrong hypothesis."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from env.contract import TaskFilter
from env.graders.hypothesis import GoldClaim, judge_hypothesis
from tests.helpers import CATALOG

TASKS = {t.id: t for t in CATALOG.select(TaskFilter(family="classic"))}
# Plain words and the symbols the rules use ("<=", "b'", "str("): nothing that is itself a hedge ("?", "/").
ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789 _-<=()'\""
WRONG_HYPOTHESIS = {
    "easy": "The mid computation overflows.",
    "medium": "There is a race on the lock.",
    "hard": "An off-by-one in the peak check is the bug.",
}
SEPARATORS = [", ", "; ", ". ", " and ", "\n", ": ", " - "]
PREFIXES = ["", "not sure: ", "no idea: ", "none of these is certain: ", "could be any of: ", "the bug is one of these: "]
BLAME = ["the bug is in {}", "{} is broken", "fix {}", "{} compares the values wrongly", "{} is the culprit"]
HEDGES = [
    "{a} or {b}",
    "either {a} or {b}",
    "{a}, maybe {b}",
    "{a}; perhaps {b}",
    "{a}, possibly {b}",
    "{a}. It might be {b}",
    "{a}, could be {b}",
    "{a}? {b}",
    "not sure: {a}; {b}",
    "one of: {a}; {b}",
    "{a}, probably {b}",
    "unclear whether {a} or {b}",
    "I don't know: {a}, {b}",
    "{b}, or else {a}",
]
SETTINGS = settings(
    max_examples=75, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow]
)


def phrases(patterns: list[str]) -> st.SearchStrategy[str]:
    """Short printable texts matching one of the patterns."""
    return (
        st.sampled_from(patterns)
        .flatmap(lambda p: st.from_regex(p, fullmatch=True, alphabet=ALPHABET))
        .map(lambda s: " ".join(s.split()))
        .filter(lambda s: 0 < len(s) <= 30)
    )


def gold_claim(task_id: str) -> GoldClaim:
    task = TASKS[task_id]
    return GoldClaim(locations=task.gold_locations, mechanisms=task.mechanism)


def right_fields(task_id: str) -> dict:
    claim = gold_claim(task_id)
    return {"suspect": claim.locations[0].function, "mechanism": claim.mechanisms[0], "gold": claim}


def wrong_phrases(task_id: str) -> st.SearchStrategy[str]:
    """A phrase the grader reads, on its own, as a wrong cause: what a stuffed text must not launder."""
    rules = TASKS[task_id].hypothesis
    return phrases(rules.wrong).filter(lambda s: judge_hypothesis(s, rules).wrong_claim)


def blamed_symptoms(task_id: str) -> st.SearchStrategy[str]:
    rules = TASKS[task_id].hypothesis
    return st.tuples(st.sampled_from(BLAME), phrases(rules.symptom)).map(lambda t: t[0].format(t[1]))


def right_phrases(task_id: str) -> st.SearchStrategy[str]:
    rules = TASKS[task_id].hypothesis
    return phrases(rules.location + rules.mechanism)


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_the_reference_wrong_hypothesis_scores_zero(task_id):
    assert judge_hypothesis(WRONG_HYPOTHESIS[task_id], TASKS[task_id].hypothesis).score == 0.0


@pytest.mark.parametrize("task_id", sorted(TASKS))
@SETTINGS
@given(data=st.data())
def test_stuffed_texts_score_no_more_than_a_wrong_hypothesis(task_id, data):
    rules = TASKS[task_id].hypothesis
    right = data.draw(st.lists(right_phrases(task_id), min_size=1, max_size=4), label="right")
    bad = data.draw(st.lists(st.one_of(wrong_phrases(task_id), blamed_symptoms(task_id)), min_size=1, max_size=2), label="bad")
    items = data.draw(st.permutations(right + bad), label="order")
    separators = data.draw(st.lists(st.sampled_from(SEPARATORS), min_size=len(items), max_size=len(items)), label="separators")
    prefix = data.draw(st.sampled_from(PREFIXES), label="prefix")
    text = prefix + "".join(item + sep for item, sep in zip(items, separators, strict=True)).rstrip()
    ceiling = judge_hypothesis(WRONG_HYPOTHESIS[task_id], rules).score
    assert judge_hypothesis(text, rules).score <= ceiling == 0.0
    assert judge_hypothesis(text, rules, **right_fields(task_id)).score == 0.0


@pytest.mark.parametrize("task_id", sorted(TASKS))
@SETTINGS
@given(data=st.data())
def test_a_hedged_list_of_only_right_causes_scores_zero(task_id, data):
    rules = TASKS[task_id].hypothesis
    items = data.draw(st.lists(right_phrases(task_id), min_size=2, max_size=5), label="items")
    separators = data.draw(st.lists(st.sampled_from(SEPARATORS), min_size=len(items), max_size=len(items)), label="separators")
    prefix = data.draw(st.sampled_from([p for p in PREFIXES if p]), label="prefix")
    text = prefix + "".join(item + sep for item, sep in zip(items, separators, strict=True)).rstrip()
    assert judge_hypothesis(text, rules).score == 0.0
    assert judge_hypothesis(text, rules, **right_fields(task_id)).score == 0.0


@pytest.mark.parametrize("task_id", sorted(TASKS))
@SETTINGS
@given(data=st.data())
def test_hedged_texts_score_no_more_than_a_wrong_hypothesis(task_id, data):
    task = TASKS[task_id]
    rules = task.hypothesis
    claim = data.draw(
        st.one_of(
            st.just(task.gold_hypothesis.rstrip(".")),
            st.tuples(phrases(rules.location), phrases(rules.mechanism)).map(" ".join),
        ),
        label="claim",
    )
    alternative = data.draw(
        st.one_of(phrases(rules.location + rules.mechanism + rules.symptom + rules.wrong), st.just("the database")), label="alternative"
    )
    template = data.draw(st.sampled_from(HEDGES), label="template")
    a, b = (claim, alternative) if data.draw(st.booleans(), label="claim first") else (alternative, claim)
    text = template.format(a=a, b=b)
    judgement = judge_hypothesis(text, rules)
    assert judgement.hedged
    assert judgement.score <= judge_hypothesis(WRONG_HYPOTHESIS[task_id], rules).score == 0.0
    assert judge_hypothesis(text, rules, **right_fields(task_id)).score == 0.0


@pytest.mark.parametrize("task_id", sorted(TASKS))
@SETTINGS
@given(data=st.data())
def test_a_denial_does_not_launder_a_wrong_cause_beside_it(task_id, data):
    rules = TASKS[task_id].hypothesis
    denied = data.draw(phrases(rules.symptom), label="denied")
    wrong = data.draw(wrong_phrases(task_id), label="wrong")
    right = data.draw(right_phrases(task_id), label="right")
    joiner = data.draw(st.sampled_from([", but ", "; ", ", and ", ": "]), label="joiner")
    text = f"{denied} is fine{joiner}{wrong}, {right}"
    assert judge_hypothesis(text, rules).score == 0.0
    assert judge_hypothesis(text, rules, **right_fields(task_id)).score == 0.0


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_the_right_fields_alone_score_full(task_id):
    assert judge_hypothesis("", TASKS[task_id].hypothesis, **right_fields(task_id)).score == 1.0


# -- one claim, and only this bug's: the gold location with a wrong cause, and other tasks' vocabulary ----------

JOINS = ["{l} {c}", "{l}: it {c}", "{c} in {l}", "the bug is that {l} {c}", "{l} {c}, so the tests fail"]
CROSS = ["{l} {c}", "{c} in {l}", "{l} {c}, causing the failure", "{l}: {c}"]


def own(task_id: str, part: str) -> list[str]:
    return getattr(TASKS[task_id].hypothesis.phrases, part)


def foreign(task_id: str, part: str) -> list[str]:
    return [p for other in sorted(TASKS) if other != task_id for p in own(other, part)]


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_every_way_to_name_the_gold_location_and_mechanism_scores_full(task_id):
    rules = TASKS[task_id].hypothesis
    for location in own(task_id, "location"):
        for mechanism in own(task_id, "mechanism"):
            assert judge_hypothesis(f"{location} {mechanism}", rules).score == 1.0, (location, mechanism)


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_each_listed_wrong_cause_is_read_as_a_wrong_claim(task_id):
    rules = TASKS[task_id].hypothesis
    assert len(own(task_id, "wrong")) >= 8
    for cause in own(task_id, "wrong"):
        assert judge_hypothesis(f"it {cause}", rules).wrong_claim, cause


@pytest.mark.parametrize("task_id", sorted(TASKS))
@SETTINGS
@given(data=st.data())
def test_the_gold_location_with_a_wrong_cause_scores_zero(task_id, data):
    rules = TASKS[task_id].hypothesis
    location = data.draw(st.sampled_from(own(task_id, "location")), label="location")
    cause = data.draw(st.sampled_from(own(task_id, "wrong")), label="cause")
    template = data.draw(st.sampled_from(JOINS), label="template")
    text = template.format(l=location, c=cause)
    assert judge_hypothesis(text, rules).score == 0.0
    # naming the gold mechanism as well does not launder the wrong cause
    mechanism = data.draw(st.sampled_from(own(task_id, "mechanism")), label="mechanism")
    assert judge_hypothesis(f"{text}, and {location} {mechanism}", rules).score == 0.0
    assert judge_hypothesis(text, rules, **right_fields(task_id)).score == 0.0


@pytest.mark.parametrize("task_id", sorted(TASKS))
@SETTINGS
@given(data=st.data())
def test_cross_task_texts_score_zero(task_id, data):
    rules = TASKS[task_id].hypothesis
    template = data.draw(st.sampled_from(CROSS), label="template")
    # this task's location with another task's mechanism, and another task's location with this task's mechanism
    mixed = [
        template.format(l=data.draw(st.sampled_from(own(task_id, "location"))), c=data.draw(st.sampled_from(foreign(task_id, "mechanism")))),
        template.format(l=data.draw(st.sampled_from(foreign(task_id, "location"))), c=data.draw(st.sampled_from(own(task_id, "mechanism")))),
    ]
    # both tasks' location and mechanism in one sentence: "The loop in increment skips the last element, causing a lost update."
    other = data.draw(st.sampled_from([t for t in sorted(TASKS) if t != task_id]), label="other")
    first, second = data.draw(st.permutations([task_id, other]), label="order")
    mixed.append(
        f"{data.draw(st.sampled_from(own(first, 'location')))} in {data.draw(st.sampled_from(own(second, 'location')))} "
        f"{data.draw(st.sampled_from(own(first, 'mechanism')))}, causing it to {data.draw(st.sampled_from(own(second, 'mechanism')))}"
    )
    for text in mixed:
        assert judge_hypothesis(text, rules).score == 0.0, text


@pytest.mark.parametrize(
    ("task_id", "text"),
    [
        ("easy", "the loop's mid rounding skips the last element"),
        ("medium", "hash_password uses an MD5 digest instead of SHA-256"),
        ("hard", "decrement raises ValueError at zero instead of clamping, a lost update"),
        ("easy", "The loop in increment skips the last element, causing a lost update."),
        ("hard", "The loop in increment skips the last element, causing a lost update."),
    ],
)
def test_the_reviewed_wrong_diagnoses_score_zero(task_id, text):
    assert judge_hypothesis(text, TASKS[task_id].hypothesis).score == 0.0


def test_a_location_and_a_word_of_the_code_is_no_mechanism():
    # "digest" is what the code computes, not what is wrong with it: the location alone is half.
    assert judge_hypothesis("hash_password digest", TASKS["medium"].hypothesis).score == 0.5
