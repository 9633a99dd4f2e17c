"""The race family's generated classes: every (pattern, domain) combination's buggy class is caught by controlled
interleavings, its gold fix and another lock style pass them and the lock-discipline review, and its half-fix fails
the verdict (the review or the interleavings); the same pattern, domain and seed give the same task."""

from __future__ import annotations

import random

import pytest

from env.families.race.exploration import judge, plan_for
from env.families.race.generator import COMBINATIONS, GeneratorError, generate
from env.race_review import review


def test_the_combinations_cover_ten_patterns_over_eight_domains():
    assert len(COMBINATIONS) == 19
    assert {p for p, _ in COMBINATIONS} == {
        "lost_update", "check_then_act", "get_then_set", "double_checked_init", "two_field_invariant",
        "mutation_during_iteration", "publish_before_init", "lock_order_deadlock", "atomicity_across_calls", "missed_signal",
    }  # fmt: skip
    assert {d for _, d in COMBINATIONS} == {
        "accounts", "inventory", "rate_limiter", "connection_pool", "cache", "id_allocator", "job_queue", "session_store",
    }  # fmt: skip


def test_a_task_is_its_pattern_domain_and_seed():
    first, again, other = generate("check_then_act", "connection_pool", 3), generate("check_then_act", "connection_pool", 3), generate("check_then_act", "connection_pool", 4)
    assert first == again and first.id == "race-check-then-act-connection-pool-3"
    for pattern, domain in COMBINATIONS:  # the names differ per seed: no two tasks of a combination share their text
        assert len({generate(pattern, domain, seed).buggy for seed in range(40)}) == 40
    assert first.buggy != other.buggy and first.methods == ("acquire",)
    with pytest.raises(GeneratorError, match=r"no job_queue class plants 'lost_update' \(domains that do: accounts, inventory, rate_limiter, id_allocator\)"):
        generate("lost_update", "job_queue", 0)
    with pytest.raises(GeneratorError, match=r"^check_then_act x accounts has 60 namings: seeds 0 to 59$"):
        generate("check_then_act", "accounts", 60)


def explored(runtime, task, source: str, seed: int = 1):
    plan = plan_for(task.model, task.cls, random.Random(seed))
    with runtime.sandbox.start(source, task.module + ".py", task.module) as run:
        assert run.load_error is None, run.load_error
        return judge(task.model, plan, run.explore(plan), source)


@pytest.mark.parametrize(("pattern", "domain"), COMBINATIONS)
def test_each_combination_s_verdicts(runtime, pattern, domain):
    task = generate(pattern, domain, seed=(len(pattern) + len(domain)) % 40)
    caught = explored(runtime, task, task.buggy)
    assert not caught.passed and caught.message, "the interleavings must catch the bug whatever the review says"
    for correct in (task.gold, *task.alternatives):
        assert review(correct, task.cls) == ""
        outcome = explored(runtime, task, correct)
        assert outcome.passed, outcome.message
    assert task.half_fixes
    for half in task.half_fixes:
        assert review(half, task.cls) != "" or not explored(runtime, task, half).passed
