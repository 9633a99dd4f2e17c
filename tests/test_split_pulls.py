"""The split's batched pulls and fused method calls (issue 34 item 3): a project iterator that a consumer takes whole
(``list``, ``sorted``, ``set`` of plain data) crosses in batches; every other pull is one request, so the project's
code runs exactly when and as far as it would in process: side effects between items, consumers that stop early, test
code between items, exceptions part-way, project objects among the items. ``obj.method(x)`` whose arguments are local
names or constants is one request; with an argument that may run project code, the read and the call stay apart."""

from __future__ import annotations

import pytest

from tests import repo_fixture

LIBRARY = '''LOG = []


def numbers(n):
    for i in range(n):
        LOG.append(i)
        yield i


def log():
    return tuple(LOG)


def reset():
    del LOG[:]


class Loud:
    """Hashing it is project code: the log shows when the consumer hashed it."""

    def __hash__(self):
        LOG.append("hash")
        return 7


def mixed():
    LOG.append("a")
    yield 1
    LOG.append("b")
    yield Loud()
    LOG.append("c")
    yield 2


def unhashable():
    LOG.append("a")
    yield 1
    LOG.append("b")
    yield [2]
    LOG.append("c")  # set() stops at the list: never run
    yield 3


def numbers_then_text():
    LOG.append("a")
    yield 1
    LOG.append("b")
    yield 2.5
    LOG.append("c")
    yield "x"
    LOG.append("d")  # sum() and max() stop at "x": never run
    yield 3


def failing():
    LOG.append("a")
    yield 1
    LOG.append("b")
    raise ValueError("after one")


def calling(function, n):
    for i in range(n):
        LOG.append(i)
        yield function(i)


def dividing():
    LOG.append("a")
    yield 1
    LOG.append("b")
    yield 0
    LOG.append("c")  # 1 / 0 stops reduce(truediv, ...) first: never run
    yield 5


class Acc:
    """An accumulator of the project's: adding to it is project code, logged."""

    def __add__(self, other):
        LOG.append(("add", other))
        return self


class Sized:
    """An iterable whose __len__ is project code: list() asks it after iter(), before the first item."""

    def __iter__(self):
        return numbers(3)

    def __len__(self):
        LOG.append("len")
        return 3


class Traced:
    """Every attribute read is logged: the log shows when the test's reads and calls reached the project."""

    value = 5

    def __getattribute__(self, name):
        LOG.append("get " + name)
        return object.__getattribute__(self, name)

    def echo(self, x):
        LOG.append(("call", x))
        return x

    def named(self, name, obj):
        return name, obj


class Box:
    def __init__(self, items):
        self.items = items

    def __iter__(self):
        return iter(self.items)
'''

TESTS = '''import functools
import operator
from functools import reduce
from operator import mul

import lib
from lib import Acc, Box, Sized, Traced, calling, dividing, failing, log, mixed, numbers, numbers_then_text, reset, unhashable


def test_reduce_with_a_pure_function_takes_numbers_in_batches():
    reset()
    items = numbers(700)
    assert functools.reduce(operator.add, items) == 699 * 700 // 2
    prod = lambda x: reduce(mul, x, 1)  # more-itertools' own test of factor()
    assert prod(numbers(3)) == 0
    assert reduce(max, numbers(4), -1) == 3  # (pytest's rewriting reads numbers(4) into a local first)
    got = reduce(max, numbers(2), -1)  # an argument that calls: item by item, as any call site this cannot read
    assert got == 1
    assert log() == tuple(range(700)) + (0, 1, 2, 0, 1, 2, 3, 0, 1)


def test_reduce_stops_where_it_would():
    reset()
    try:
        reduce(operator.add, numbers_then_text())  # 1 + 2.5 + "x" fails: the generator goes no further
    except TypeError:
        pass
    else:
        raise AssertionError("text is no number")
    assert log() == ("a", "b", "c")
    reset()
    try:
        reduce(operator.truediv, dividing())  # not a reducer that cannot fail: item by item
    except ZeroDivisionError:
        pass
    else:
        raise AssertionError("1 / 0")
    assert log() == ("a", "b")


def test_reduce_onto_a_project_object_adds_between_items():
    reset()
    reduce(operator.add, numbers(3), Acc())  # Acc.__add__ is project code: it runs between the pulls
    assert log() == (0, ("add", 0), 1, ("add", 1), 2, ("add", 2))


def test_reduce_onto_a_project_object_in_a_local_adds_between_items():
    acc = Acc()
    reset()
    reduce(operator.add, numbers(3), acc)  # a start read from a local: batched only when it holds a number
    assert log() == (0, ("add", 0), 1, ("add", 1), 2, ("add", 2))
    reset()
    assert reduce(operator.add, numbers(3), acc) is not None  # the same, under pytest's assertion rewriting
    assert log() == (0, ("add", 0), 1, ("add", 1), 2, ("add", 2))


def test_list_asks_an_iterables_len_before_its_first_item():
    reset()
    got = list(Sized())
    assert got == [0, 1, 2] and log() == ("len", 0, 1, 2)
    reset()
    got = tuple(Sized())
    assert got == (0, 1, 2) and log() == ("len", 0, 1, 2)
    reset()
    assert sorted(Sized()) == [0, 1, 2] and log() == ("len", 0, 1, 2)
    reset()
    assert set(Sized()) == {0, 1, 2} and log() == (0, 1, 2)  # set() asks no length


def test_a_reduce_of_the_tests_own_is_not_functools():
    def reduce(function, items, initial):  # noqa: A001  (shadows functools.reduce: takes only the first item)
        return function(initial, next(iter(items)))

    reset()
    assert reduce(operator.add, numbers(100), 1) == 1
    assert log() == (0,)


def test_list_takes_every_item():
    reset()
    assert list(numbers(1200)) == list(range(1200))
    assert log() == tuple(range(1200))


def test_a_warm_call_site_batches_too():
    # run often enough for the interpreter to specialise the calls (3.11: the PRECALL of a builtin class calls it)
    for n in range(40):
        assert list(numbers(n % 3)) == list(range(n % 3))
        assert set(numbers(2)) == {0, 1}


def test_sorted_tuple_set_frozenset():
    reset()
    assert sorted(numbers(5)) == [0, 1, 2, 3, 4]
    assert tuple(numbers(3)) == (0, 1, 2)
    assert set(numbers(4)) == {0, 1, 2, 3}
    assert frozenset(numbers(2)) == frozenset({0, 1})
    assert log() == (0, 1, 2, 3, 4, 0, 1, 2, 0, 1, 2, 3, 0, 1)


def test_a_for_loop_runs_the_generator_one_item_at_a_time():
    reset()
    for i in numbers(5):
        assert log() == tuple(range(i + 1))


def test_next_runs_one_item():
    reset()
    g = numbers(5)
    assert next(g) == 0 and log() == (0,)
    assert list(g) == [1, 2, 3, 4]
    assert log() == (0, 1, 2, 3, 4)


def test_any_stops_where_it_would():
    reset()
    assert any(i == 2 for i in numbers(100))
    assert log() == (0, 1, 2)
    reset()
    assert any(numbers(100))  # 0 is falsy, 1 is not
    assert log() == (0, 1)


def test_test_code_between_items_sees_the_project_as_it_would():
    reset()
    seen = list(map(lambda i: (i, log()), numbers(3)))
    assert seen == [(0, (0,)), (1, (0, 1)), (2, (0, 1, 2))]
    reset()
    total = functools.reduce(lambda a, b: a + b + len(log()), numbers(3))
    assert total == 0 + 1 + 2 + 2 + 3


def test_set_hashes_a_project_object_between_its_items():
    reset()
    assert len(set(mixed())) == 3
    assert log() == ("a", "b", "hash", "c")


def test_set_stops_at_an_unhashable_item():
    reset()
    try:
        set(unhashable())
    except TypeError:
        pass
    else:
        raise AssertionError("a list is not hashable")
    assert log() == ("a", "b")


def test_sum_min_max_take_numbers():
    reset()
    assert sum(numbers(700)) == 699 * 700 // 2
    assert max(numbers(3)) == 2 and min(numbers(2)) == 0
    assert log() == tuple(range(700)) + (0, 1, 2, 0, 1)


def test_sum_and_max_stop_at_an_item_that_is_no_number():
    for consumer in (sum, max):
        reset()
        try:
            consumer(numbers_then_text())
        except TypeError:
            pass
        else:
            raise AssertionError("text is no number")
        assert log() == ("a", "b", "c")


def test_an_exception_part_way_comes_after_the_items():
    reset()
    got = []
    try:
        got.extend(failing())
    except ValueError as exc:
        assert str(exc) == "after one"
    assert got == [1] and log() == ("a", "b")
    reset()
    try:
        list(failing())
    except ValueError as exc:
        assert str(exc) == "after one"
    else:
        raise AssertionError("the generator raises")
    assert log() == ("a", "b")


def test_the_projects_calls_to_the_test_interleave_as_they_would():
    calls = []

    def record(i):
        calls.append((i, log()))
        return -i

    reset()
    assert list(calling(record, 3)) == [0, -1, -2]
    assert calls == [(0, (0,)), (1, (0, 1)), (2, (0, 1, 2))]


def test_a_method_call_reads_then_calls():
    t = Traced()
    reset()
    got = t.echo(1)  # outside an assert: pytest rewrites one to read the method apart from its call
    assert got == 1
    assert log() == ("get echo", ("call", 1))


def test_an_argument_read_from_the_project_comes_between_read_and_call():
    t, other = Traced(), Traced()
    reset()
    got = t.echo(other.value)
    assert got == 5
    assert log() == ("get echo", "get value", ("call", 5))


def test_a_method_read_apart_from_its_call():
    t = Traced()
    reset()
    method = t.echo
    assert log() == ("get echo",)
    assert method(2) == 2
    assert log() == ("get echo", ("call", 2))


def test_keyword_arguments_of_any_name_and_a_missing_method():
    t = Traced()
    assert t.named(name="n", obj="o") == ("n", "o")
    try:
        t.missing(1)
    except AttributeError as exc:
        assert str(exc) == "'Traced' object has no attribute 'missing'"
    else:
        raise AssertionError("no such method")


def test_a_module_function():
    lib.reset()
    got = lib.log()
    assert got == ()


def test_a_project_iterable():
    assert list(Box([3, 1, 2])) == [3, 1, 2]
    assert sorted(Box([3, 1, 2])) == [1, 2, 3]
'''

NAMES = [
    "test_list_takes_every_item", "test_a_warm_call_site_batches_too", "test_sorted_tuple_set_frozenset", "test_a_for_loop_runs_the_generator_one_item_at_a_time",
    "test_next_runs_one_item", "test_any_stops_where_it_would", "test_test_code_between_items_sees_the_project_as_it_would",
    "test_set_hashes_a_project_object_between_its_items", "test_set_stops_at_an_unhashable_item",
    "test_sum_min_max_take_numbers", "test_sum_and_max_stop_at_an_item_that_is_no_number",
    "test_an_exception_part_way_comes_after_the_items", "test_the_projects_calls_to_the_test_interleave_as_they_would",
    "test_a_project_iterable", "test_a_method_call_reads_then_calls",
    "test_an_argument_read_from_the_project_comes_between_read_and_call", "test_a_method_read_apart_from_its_call",
    "test_keyword_arguments_of_any_name_and_a_missing_method", "test_a_module_function",
    "test_reduce_with_a_pure_function_takes_numbers_in_batches", "test_reduce_stops_where_it_would",
    "test_reduce_onto_a_project_object_adds_between_items", "test_a_reduce_of_the_tests_own_is_not_functools",
    "test_reduce_onto_a_project_object_in_a_local_adds_between_items",
    "test_list_asks_an_iterables_len_before_its_first_item",
]  # fmt: skip


@pytest.fixture(scope="module")
def verdict(runtime, tmp_path_factory):
    return repo_fixture.split_verdict(runtime, tmp_path_factory.mktemp("pulls"), LIBRARY, "tests/test_pulls.py", TESTS, NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_pulls_as_in_process(verdict, name):
    repo_fixture.assert_passes_split(verdict, f"tests/test_pulls.py::{name}")


def test_a_whole_list_crosses_in_batches(verdict):
    # reset, the call, three pulls of at most 512 items (the last meets the end, raised here without a request), log
    assert verdict.ops["tests/test_pulls.py::test_list_takes_every_item"] == 6


def test_a_warm_call_site_batches_as_a_cold_one(verdict):
    # per round: each call and one pull meeting the end (its StopIteration raised here)
    assert verdict.ops["tests/test_pulls.py::test_a_warm_call_site_batches_too"] == 40 * 4


def test_sum_takes_numbers_in_batches(verdict):
    # reset, then per consumer the call and its pulls (sum: two of at most 512 items, the last meeting the end; max,
    # min: one); log
    assert verdict.ops["tests/test_pulls.py::test_sum_min_max_take_numbers"] == 1 + 3 + 2 + 2 + 1


def test_a_for_loop_asks_for_every_item(verdict):
    # reset, the call, six next() (the sixth raises StopIteration), and a log() per item
    assert verdict.ops["tests/test_pulls.py::test_a_for_loop_runs_the_generator_one_item_at_a_time"] == 13


def test_a_call_back_costs_no_request_of_its_own(verdict):
    # reset, the call, one pull meeting the end (the project calls the test's function three times, which calls log()
    # each time): the arguments of a call back cross as a tuple, never a list to refresh
    assert verdict.ops["tests/test_pulls.py::test_the_projects_calls_to_the_test_interleave_as_they_would"] == 6


def test_a_method_call_is_one_request(verdict):
    # Traced(), reset, t.echo(1) as one request, log
    assert verdict.ops["tests/test_pulls.py::test_a_method_call_reads_then_calls"] == 4
    # Traced() twice, reset, t.echo read, other.value read, the call, log
    assert verdict.ops["tests/test_pulls.py::test_an_argument_read_from_the_project_comes_between_read_and_call"] == 7
    # lib.reset() and lib.log(): one request each
    assert verdict.ops["tests/test_pulls.py::test_a_module_function"] == 2


def test_reduce_takes_numbers_in_batches(verdict):
    # reset; reduce(add): the call, two pulls (512, then the rest meeting the end); prod(): the call, one pull;
    # reduce(max, ...) in the assert: the call, one pull; outside it: the call, three next(); log
    assert verdict.ops["tests/test_pulls.py::test_reduce_with_a_pure_function_takes_numbers_in_batches"] == 1 + 3 + 2 + 2 + 4 + 1
    # onto the project's accumulator, item by item: reset, Acc(), the call, four next() (the fourth meets the end),
    # three additions, log
    assert verdict.ops["tests/test_pulls.py::test_reduce_onto_a_project_object_adds_between_items"] == 1 + 1 + 1 + 4 + 3 + 1
