"""The race family's sequential models and the check that a schedule is explained by some order of its calls: each
domain's exact semantics, and for each bug pattern of issue 49 an observation only a racy object gives (refused) beside
one a correct object gives in some interleaving (accepted)."""

from __future__ import annotations

import pytest

from env.families.race import linearize
from env.families.race.linearize import OTHER, Call, explain, plain
from env.families.race.models import DOMAINS, Model, ModelError, Result
from env.registry import DuplicateName


def run(model: Model, calls: list[tuple[str, tuple]]) -> list[Result]:
    state, results = model.initial, []
    for op, args in calls:
        state, result = model.step(state, op, args)
        results.append(result)
    return results


def test_eight_domains_registered_once():
    assert list(DOMAINS) == ["accounts", "inventory", "rate_limiter", "connection_pool", "cache", "id_allocator", "job_queue", "session_store"]
    with pytest.raises(DuplicateName):
        DOMAINS.add("cache", DOMAINS["cache"])


def test_each_domain_s_calls_one_at_a_time():
    accounts = run(DOMAINS["accounts"], [("deposit", (0, 50)), ("withdraw", (0, 80)), ("transfer", (0, 1, 20)), ("balance", (1,)), ("total", ())])
    assert accounts == [Result(50), Result(None, "ValueError"), Result(None), Result(20), Result(50)]
    inventory = run(DOMAINS["inventory"], [("reserve", (0, 1)), ("restock", (0, 3)), ("reserve", (0, 2)), ("available", (0,))])
    assert inventory == [Result(False), Result(3), Result(True), Result(1)]
    limiter = run(DOMAINS["rate_limiter"], [("try_acquire", ())] * 4 + [("refill", (5,)), ("tokens", ())])
    assert limiter == [Result(True)] * 3 + [Result(False), Result(3), Result(3)]
    pool = run(DOMAINS["connection_pool"], [("acquire", ()), ("acquire", ()), ("acquire", ()), ("release", (0,)), ("release", (0,)), ("acquire", ())])
    assert pool == [Result(0), Result(1), Result(None, "RuntimeError"), Result(None), Result(None, "ValueError"), Result(0)]
    cache = run(DOMAINS["cache"], [("get", (2,)), ("get", (2,)), ("invalidate", (2,)), ("invalidate", (2,)), ("get", (2,)), ("loads", ())])
    assert cache == [Result(21), Result(21), Result(True), Result(False), Result(21), Result(2)]
    ids = run(DOMAINS["id_allocator"], [("allocate", ()), ("allocate", ()), ("issued", ())])
    assert ids == [Result(0), Result(1), Result(2)]
    queue = run(DOMAINS["job_queue"], [("push", ("a",)), ("push", ("b",)), ("pop", ()), ("pop", ()), ("pop", ()), ("size", ())])
    assert queue == [Result(1), Result(2), Result("a"), Result("b"), Result(None, "IndexError"), Result(0)]
    sessions = run(DOMAINS["session_store"], [("login", ("ann",)), ("login", ("ann",)), ("logout", ("ann",)), ("logout", ("ann",)), ("active", ())])
    assert sessions == [Result(True), Result(False), Result(None), Result(None, "KeyError"), Result(0)]


def test_a_call_the_model_does_not_define_is_the_plan_s_error():
    with pytest.raises(ModelError, match=r"the cache model has no operation 'put'; it has get, invalidate, loads"):
        DOMAINS["cache"].step(DOMAINS["cache"].initial, "put", (1,))
    with pytest.raises(ModelError, match=r"accounts.deposit\(0,\)"):
        DOMAINS["accounts"].step(DOMAINS["accounts"].initial, "deposit", (0,))


def calls(*threads: list[tuple[str, tuple, object, str]]) -> list[list[Call]]:
    return [[Call(op, args, Result(value, error)) for op, args, value, error in thread] for thread in threads]  # type: ignore[arg-type]


def reads(*values: object) -> tuple[Result, ...]:
    return tuple(Result(v) for v in values)  # type: ignore[arg-type]


# (domain, setup, threads as observed, what the final reads returned (the model's ``reads``), explained): per pattern,
# what a racy object showed (False) and what a correct one may show in some interleaving (True).
CASES = [
    # lost update on compound state: both deposits read 50
    ("accounts", (("deposit", (0, 50)),), calls([("deposit", (0, 10), 60, "")], [("deposit", (0, 10), 60, "")]), reads(60, 0, 0), False),
    ("accounts", (("deposit", (0, 50)),), calls([("deposit", (0, 10), 70, "")], [("deposit", (0, 10), 60, "")]), reads(70, 0, 0), True),
    # an invariant across two fields: the transfer's debit and credit seen apart (total() in between)
    ("accounts", (("deposit", (0, 50)),), calls([("transfer", (0, 1, 20), None, "")], [("total", (), 30, "")]), reads(30, 20, 0), False),
    ("accounts", (("deposit", (0, 50)),), calls([("transfer", (0, 1, 20), None, "")], [("total", (), 50, "")]), reads(30, 20, 0), True),
    # check-then-act: both reservations saw the one unit
    ("inventory", (("restock", (0, 1)),), calls([("reserve", (0, 1), True, "")], [("reserve", (0, 1), True, "")]), reads(-1, 0), False),
    ("inventory", (("restock", (0, 1)),), calls([("reserve", (0, 1), True, "")], [("reserve", (0, 1), False, "")]), reads(0, 0), True),
    # atomicity across two calls: tokens checked, then taken
    ("rate_limiter", (("try_acquire", ()), ("try_acquire", ())), calls([("try_acquire", (), True, "")], [("try_acquire", (), True, "")]), reads(0), False),
    ("rate_limiter", (("try_acquire", ()), ("try_acquire", ())), calls([("try_acquire", (), False, "")], [("try_acquire", (), True, "")]), reads(0), True),
    # get-then-set on a dict: one connection handed out twice
    ("connection_pool", (), calls([("acquire", (), 0, "")], [("acquire", (), 0, "")]), reads(1), False),
    ("connection_pool", (), calls([("acquire", (), 1, "")], [("acquire", (), 0, "")]), reads(2), True),
    # double-checked lazy init: the value loaded twice
    ("cache", (), calls([("get", (4,), 41, "")], [("get", (4,), 41, "")]), reads(2), False),
    ("cache", (), calls([("get", (4,), 41, "")], [("get", (4,), 41, "")]), reads(1), True),
    # a duplicate id
    ("id_allocator", (), calls([("allocate", (), 0, "")], [("allocate", (), 0, "")]), reads(1), False),
    ("id_allocator", (), calls([("allocate", (), 1, "")], [("allocate", (), 0, "")]), reads(2), True),
    # publish before init / a missed pop: the one job taken twice, or a pop that raised while a job was there
    ("job_queue", (("push", ("a",)),), calls([("pop", (), "a", "")], [("pop", (), "a", "")]), reads(0), False),
    ("job_queue", (("push", ("a",)),), calls([("pop", (), "a", "")], [("pop", (), None, "IndexError")]), reads(0), True),
    ("job_queue", (), calls([("push", ("a",), 1, "")], [("pop", (), None, "IndexError")]), reads(1), True),
    # two sessions of one user
    ("session_store", (), calls([("login", ("ann",), True, "")], [("login", ("ann",), True, "")]), reads(1), False),
    ("session_store", (), calls([("login", ("ann",), True, "")], [("login", ("ann",), False, "")]), reads(1), True),
]


@pytest.mark.parametrize(("domain", "setup", "threads", "final", "explained"), CASES)
def test_a_schedule_is_explained_only_by_an_order_of_its_calls(domain, setup, threads, final, explained):
    found = explain(DOMAINS[domain], setup, threads, DOMAINS[domain].reads, final)
    assert found.ok is explained and not found.undecided
    if explained:  # the order found keeps each thread's own order and covers every call once
        assert sorted(found.order) == sorted((t, i) for t, thread in enumerate(threads) for i in range(len(thread)))


def test_why_a_schedule_is_not_explained():
    allocator, cache = DOMAINS["id_allocator"], DOMAINS["cache"]
    lost = explain(allocator, (), calls([("allocate", (), 0, "")], [("allocate", (), 0, "")]), allocator.reads, reads(1))
    assert lost.why == "no order of the calls gives the results they returned"
    ended = explain(cache, (), calls([("get", (4,), 41, "")], [("get", (4,), 41, "")]), cache.reads, reads(2))
    assert ended.why == "every order giving these results ends in another state than the one the final reads show"


def test_a_search_too_large_is_undecided_not_a_verdict(monkeypatch):
    monkeypatch.setattr(linearize, "MAX_STATES", 3)
    threads = calls(*[[("allocate", (), i, "")] for i in range(4)])
    found = explain(DOMAINS["id_allocator"], (), threads, DOMAINS["id_allocator"].reads, reads(4))
    assert (found.ok, found.undecided, found.why) == (False, True, "the scenario has more than 3 states to search")


def test_observed_values_become_the_models_plain_data():
    class Sneaky(int):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = int.__hash__

    assert plain([1, [True, None], "a"]) == (1, (True, None), "a")
    assert plain(Sneaky(3)) == OTHER and plain([Sneaky(3)]) == (OTHER,) and plain(1.5) == OTHER


def test_a_take_waits_for_a_job_and_no_order_places_it_before_one():
    queue = DOMAINS["job_queue"]
    assert queue.step(queue.initial, "take", ()) == (queue.initial, Result(None, "<blocks>"))
    # the waiting take ran after the push whatever the threads' order: explained; a take that raised is not
    waited = calls([("take", (), "a", "")], [("push", ("a",), 1, ""), ("pop", (), None, "IndexError"), ("push", ("b",), 1, "")])
    assert explain(queue, (), waited, queue.reads, reads(1)).ok
    raised = calls([("take", (), None, "IndexError")], [("push", ("a",), 1, ""), ("pop", (), "a", ""), ("push", ("b",), 1, "")])
    assert not explain(queue, (), raised, queue.reads, reads(1)).ok
