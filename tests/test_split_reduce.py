"""The split's batched pulls for arithmetic consumers (issue 34 item 3): ``functools.reduce`` of the operator module's
``add``/``mul``/``sub`` or of a lambda written in the call that only adds, subtracts or multiplies its two parameters,
``sum`` and ``math.prod``, take a project generator in batches while its items are plain numbers. Everything else
pulls item by item, so the project's code runs exactly when and as far as it would in process: a reduce whose
function is the test's own (it may look at the project between items, or raise part-way), a consumer or operator
shadowed by a test's function of the same name, an int too large for a float meeting a float (the consumer fails
there: the generator must not have run past it)."""

from __future__ import annotations

import pytest

from tests import repo_fixture

LIBRARY = '''LOG = []


def numbers(n, start=0):
    for i in range(start, start + n):
        LOG.append(i)
        yield i


def log():
    return tuple(LOG)


def reset():
    del LOG[:]


def logged(*items):
    """Each item after logging its position: the log shows how far the consumer made the generator run."""
    for n, item in enumerate(items):
        LOG.append(n)
        yield item


def factor(n):
    for p in range(2, n + 1):
        while n % p == 0:
            LOG.append(p)
            yield p
            n //= p
'''

TESTS = '''import functools
import math
import operator
from functools import reduce
from operator import add, mul

import lib
from lib import factor, log, logged, numbers, reset

BIG = 10**400  # no float holds it: adding it to a float fails


def test_reduce_of_an_operator_takes_numbers_in_batches():
    reset()
    # outside the asserts: pytest's rewriting of one reads every argument into a local first (no longer the call's own)
    gen = numbers(700, 1)
    total = reduce(add, gen)
    gen = numbers(5, 1)
    multiplied = reduce(mul, gen, 1)
    gen = numbers(3)
    difference = functools.reduce(operator.sub, gen, 10)
    assert (total, multiplied, difference) == (700 * 701 // 2, 120, 7)
    assert log() == tuple(range(1, 701)) + (1, 2, 3, 4, 5, 0, 1, 2)


def test_reduce_of_a_pure_lambda_takes_numbers_in_batches():
    reset()
    gen = numbers(6, 1)
    multiplied = reduce(lambda a, b: a * b, gen)
    gen = numbers(4)
    total = reduce(lambda x, y: y + x, gen, 0.5)
    assert (multiplied, total) == (720, 6.5)
    assert log() == (1, 2, 3, 4, 5, 6, 0, 1, 2, 3)


def test_a_product_of_factors_as_more_itertools_checks_it():
    prod = lambda x: reduce(mul, x, 1)
    assert all(prod(factor(n)) == n for n in range(1, 60))


def test_a_reduce_of_the_tests_function_sees_the_project_between_items():
    reset()
    seen = []

    def step(a, b):
        seen.append(log())
        return a + b

    gen = numbers(4)
    assert reduce(step, gen) == 6
    assert seen == [(0, 1), (0, 1, 2), (0, 1, 2, 3)]
    reset()
    gen = numbers(3)
    assert reduce(lambda a, b: a + b + len(log()), gen) == 0 + 1 + 2 + 2 + 3


def test_a_reduce_whose_function_raises_midway_stops_the_generator_there():
    reset()

    def step(a, b):
        if b == 2:
            raise ValueError("two")
        return a + b

    gen = numbers(10)
    try:
        reduce(step, gen)
    except ValueError:
        pass
    else:
        raise AssertionError("step raises at 2")
    assert log() == (0, 1, 2)
    reset()
    gen = logged(1, 0, 5, 6)
    try:
        reduce(lambda a, b: a / b, gen)  # division fails: not a lambda batched
    except ZeroDivisionError:
        pass
    else:
        raise AssertionError("1 / 0")
    assert log() == (0, 1)


def product(gen):
    return reduce(mul, gen, 1)  # reduce and mul as this module's globals are when it runs


def test_a_reduce_shadowed_by_the_tests_function_pulls_item_by_item():
    global reduce

    def mine(function, iterable, start):
        it = iter(iterable)
        first = next(it)
        assert log() == (0,)
        second = next(it)
        assert log() == (0, 1)
        return function(function(start, first), second)

    saved, reduce = reduce, mine
    try:
        reset()
        assert product(numbers(10)) == 0
        assert log() == (0, 1)
    finally:
        reduce = saved


def test_an_operator_shadowed_by_the_tests_function_is_called_between_items():
    global mul
    seen = []

    def mine(a, b):
        seen.append(log())
        return a * b

    assert product(numbers(3, 1)) == 6  # once as the operator, so the call site is known
    saved, mul = mul, mine
    try:
        reset()
        assert product(numbers(3, 1)) == 6
        assert seen == [(1,), (1, 2), (1, 2, 3)]
    finally:
        mul = saved


def by_sum(g):
    return sum(g)


def by_prod(g):
    return math.prod(g)


def by_add(g):
    return reduce(add, g)


def by_mul(g):
    return reduce(mul, g, 1)


def by_lambda(g):
    return reduce(lambda a, b: a + b, g)


def test_an_int_too_large_for_a_float_stops_the_generator_where_the_consumer_fails():
    for consume in (by_sum, by_prod, by_add, by_mul, by_lambda):
        for items in ((BIG, 0.5, 1, 2), (0.5, BIG, 1, 2), (1, 2.5, 3, BIG, 4, 5)):
            reset()
            try:
                consume(logged(*items))
            except OverflowError:
                pass
            else:
                raise AssertionError("an int too large for a float met a float")
            assert log() == tuple(range(items.index(BIG) + 1 if items[0] != BIG else 2)), (consume, items, log())


def test_each_consumer_takes_plain_numbers_in_batches():
    for consume in (by_sum, by_prod, by_add, by_mul, by_lambda):
        assert consume(numbers(600, 1)) > 0


def test_sum_and_prod_of_mixed_numbers():
    reset()
    assert sum(logged(1, 2.5, True, 4)) == 8.5
    assert math.prod(logged(2, 0.5, 3)) == 3.0
    assert sum(logged(BIG, 1, 2)) == BIG + 3
    assert log() == (0, 1, 2, 3, 0, 1, 2, 0, 1, 2)


def test_items_that_are_no_numbers_go_one_at_a_time():
    reset()
    gen = logged("a", "b", "c")
    assert reduce(add, gen) == "abc"
    assert log() == (0, 1, 2)
'''

NAMES = [
    "test_reduce_of_an_operator_takes_numbers_in_batches", "test_reduce_of_a_pure_lambda_takes_numbers_in_batches",
    "test_a_product_of_factors_as_more_itertools_checks_it",
    "test_a_reduce_of_the_tests_function_sees_the_project_between_items",
    "test_a_reduce_whose_function_raises_midway_stops_the_generator_there",
    "test_a_reduce_shadowed_by_the_tests_function_pulls_item_by_item",
    "test_an_operator_shadowed_by_the_tests_function_is_called_between_items",
    "test_an_int_too_large_for_a_float_stops_the_generator_where_the_consumer_fails",
    "test_each_consumer_takes_plain_numbers_in_batches",
    "test_sum_and_prod_of_mixed_numbers", "test_items_that_are_no_numbers_go_one_at_a_time",
]  # fmt: skip


@pytest.fixture(scope="module")
def verdict(runtime, tmp_path_factory):
    return repo_fixture.split_verdict(runtime, tmp_path_factory.mktemp("reduce"), LIBRARY, "tests/test_reduce.py", TESTS, NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_reduce_as_in_process(verdict, name):
    repo_fixture.assert_passes_split(verdict, f"tests/test_reduce.py::{name}")


@pytest.mark.parametrize("name", NAMES)
def test_the_same_tests_pass_in_process(name, tmp_path, monkeypatch):
    """The tests above are what plain pytest would see: run with the library in process, each passes."""
    repo_fixture.run_in_process(LIBRARY, TESTS, "test_reduce.py", name, tmp_path, monkeypatch)


def test_a_reduce_of_an_operator_crosses_in_batches(verdict):
    # reset; per reduce its generator call and its pulls (add: two of at most 512 items, the last meeting the end;
    # mul, sub: one); log
    assert verdict.ops["tests/test_reduce.py::test_reduce_of_an_operator_takes_numbers_in_batches"] == 1 + 3 + 2 + 2 + 1
    # reset; per reduce the call and one pull; log
    assert verdict.ops["tests/test_reduce.py::test_reduce_of_a_pure_lambda_takes_numbers_in_batches"] == 1 + 2 + 2 + 1
    # per n: the call, one pull
    assert verdict.ops["tests/test_reduce.py::test_a_product_of_factors_as_more_itertools_checks_it"] == 59 * 2


def test_sum_prod_and_reduce_cross_in_batches(verdict):
    # per consumer: the generator's call, two pulls (512 items, then 88 and the end)
    assert verdict.ops["tests/test_reduce.py::test_each_consumer_takes_plain_numbers_in_batches"] == 5 * 3


def test_a_reduce_of_the_tests_own_function_asks_for_every_item(verdict):
    # reset; the call; five next() (the fifth ends it); a log() in each of the three steps; reset, the call, four
    # next(), a log() in each of two steps
    assert verdict.ops["tests/test_reduce.py::test_a_reduce_of_the_tests_function_sees_the_project_between_items"] == 1 + 1 + 5 + 3 + 1 + 1 + 4 + 2
