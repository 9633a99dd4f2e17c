"""The split's fused call and pull (issue 34 item 3): ``set(mi.factor(n))``, ``list(obj.items(x))``, a project call
whose result a consumer that takes every item (``list``, ``sorted``, ``set``, ``sum`` ...) takes right after, is one
request: the call, then, if its result is a generator or a builtin iterator, the consumer's first pull. Nothing runs
between the two calls but the consumer's iter() of the result, so the project's code runs as it would in process; a
result that is no generator crosses as before, and a consumer the test shadows with its own function pulls item by
item. So is ``list(obj)`` of a project iterable: iter(), the len() list and tuple ask next, and the first pull.
A method given a lambda written in its call, or plain arithmetic of two names or constants (``n + 1``, checked to be
on plain numbers as it runs), is read and called in one request. (The calls below are made
outside asserts: pytest's rewriting of an assert keeps each call's result in a local first, and that is no longer a
consumer's argument.)"""

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


def logged(*items):
    for n, item in enumerate(items):
        LOG.append(n)
        yield item


class Loud:
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


def failing():
    LOG.append("a")
    yield 1
    LOG.append("b")
    raise ValueError("after one")


def calling(function, n):
    for i in range(n):
        LOG.append(i)
        yield function(i)


def spread(n):
    """1, 2.5, n threes, an int too large for a float, 4, 5."""
    return logged(1, 2.5, *(3,) * n, 10**400, 4, 5)


def a_list(n):
    return list(range(n))


def refuses():
    raise KeyError("no")


class Traced:
    def __getattribute__(self, name):
        LOG.append("get " + name)
        return object.__getattribute__(self, name)

    def apply(self, function, x):
        LOG.append("apply")
        return function(x)

    def echo(self, x):
        LOG.append(("echo", x))
        return x


class Added:
    """Adding to it is project code: the log shows when."""

    def __add__(self, other):
        LOG.append("add")
        return other


class Calls:
    """Hashing it calls the test's function back."""

    def __init__(self, callback):
        self.callback = callback

    def __hash__(self):
        LOG.append("hash")
        self.callback()
        return 7


def with_callback(callback):
    LOG.append("a")
    yield 1
    LOG.append("b")
    yield Calls(callback)
    LOG.append("c")
    yield 2
    LOG.append("d")
    yield 3


class Tracked:
    """An iterable whose iter() and len() are logged: the log shows what the consumer asked, and when."""

    def __init__(self, n, size=None):
        self.n, self.size = n, size

    def __iter__(self):
        LOG.append("iter")
        return numbers(self.n)

    def __len__(self):
        LOG.append("len")
        if isinstance(self.size, Exception):
            raise self.size
        return self.n


class Source:
    def items(self, n):
        return numbers(n)

    def mapped(self, n):
        return map(str, range(n))
'''

TESTS = '''from lib import (
    Added, Source, Traced, Tracked, a_list, calling, failing, log, mixed, numbers, refuses, reset, spread, with_callback,
)


def test_a_list_of_a_call_takes_the_generator_whole():
    reset()
    got = list(numbers(1200))
    assert got == list(range(1200)) and log() == tuple(range(1200))


def test_each_consumer_and_a_method():
    source = Source()
    reset()
    got = (sorted(numbers(3)), tuple(numbers(2)), set(numbers(2)), frozenset(numbers(1)), sum(numbers(4)),
           max(numbers(3)), min(numbers(2)), list(source.items(2)), list(source.mapped(3)))
    assert got == ([0, 1, 2], (0, 1), {0, 1}, frozenset({0}), 6, 2, 0, [0, 1], ["0", "1", "2"])
    assert log() == (0, 1, 2, 0, 1, 0, 1, 0, 0, 1, 2, 3, 0, 1, 2, 0, 1, 0, 1)


def test_set_hashes_a_project_object_between_its_items():
    reset()
    got = set(mixed())
    assert len(got) == 3 and log() == ("a", "b", "hash", "c")


def test_the_tests_function_called_back_mid_consumer_takes_the_next_item():
    taken = []

    def take():
        taken.append(next(gen))

    reset()
    gen = with_callback(take)
    got = set(gen)  # hashing the second item calls take(), which takes the third from under set()
    assert len(got) == 3 and taken == [2] and log() == ("a", "b", "hash", "c", "d")


def test_an_exception_part_way_comes_after_the_items():
    reset()
    try:
        list(failing())
    except ValueError as exc:
        assert str(exc) == "after one"
    else:
        raise AssertionError("the generator raises")
    assert log() == ("a", "b")


def test_an_empty_generator_and_a_failing_call():
    got = list(numbers(0))
    assert got == []
    try:
        list(refuses())
    except KeyError:
        pass
    else:
        raise AssertionError("the call raises")


def test_a_result_that_is_no_generator():
    got = list(a_list(3))
    assert got == [0, 1, 2]


def test_the_projects_calls_to_the_test_interleave_as_they_would():
    calls = []

    def record(i):
        calls.append((i, log()))
        return -i

    reset()
    got = list(calling(record, 3))
    assert got == [0, -1, -2] and calls == [(0, (0,)), (1, (0, 1)), (2, (0, 1, 2))]


def test_a_sum_moves_to_floats_across_its_pulls_and_stops_where_it_fails():
    reset()
    try:
        sum(spread(600))
    except OverflowError:
        pass
    else:
        raise AssertionError("an int too large for a float met a float")
    assert log() == tuple(range(603))


def test_a_method_given_a_lambda_is_one_request():
    t = Traced()
    reset()
    got = t.apply(lambda v: v + 1, 2)  # making the lambda runs nothing: the read and the call stay together
    assert got == 3 and log() == ("get apply", "apply")


def test_a_project_iterable_is_iterated_sized_and_pulled_as_in_process():
    reset()
    whole = list(Tracked(3))
    assert whole == [0, 1, 2] and log() == ("iter", "len", 0, 1, 2)
    reset()
    got = (set(Tracked(2)), sum(Tracked(3)), tuple(Tracked(1)), sorted(Tracked(2)))
    assert got == ({0, 1}, 3, (0,), [0, 1])
    assert log() == ("iter", 0, 1, "iter", 0, 1, 2, "iter", "len", 0, "iter", "len", 0, 1)
    reset()
    assert len(Tracked(4)) == 4 and log() == ("len",)  # a len() of its own asks


def test_a_len_that_fails_as_in_process():
    reset()
    got = list(Tracked(2, TypeError("no size")))  # list() goes on without a size
    assert got == [0, 1] and log() == ("iter", "len", 0, 1)
    reset()
    try:
        list(Tracked(2, ValueError("bad size")))  # list() stops there: no item is taken
    except ValueError as exc:
        assert str(exc) == "bad size"
    else:
        raise AssertionError("len() raises")
    assert log() == ("iter", "len")


def test_a_method_given_plain_arithmetic_is_one_request():
    t = Traced()
    n, text = 2, "a"
    reset()
    got = (t.echo(n + 1), t.echo(n * 2.5), t.echo(text + "b"))
    assert got == (3, 5.0, "ab") and log() == ("get echo", ("echo", 3), "get echo", ("echo", 5.0), "get echo", ("echo", "ab"))


def test_arithmetic_that_runs_project_code_or_fails_comes_between_read_and_call():
    t, added, big, zero = Traced(), Added(), 10**400, 0
    reset()
    got = t.echo(added + 1)  # the project's __add__ runs after the read, before the call
    assert got == 1 and log() == ("get echo", "add", ("echo", 1))
    for fails, error in ((lambda: t.echo(big + 0.5), OverflowError), (lambda: t.echo(1 / zero), ZeroDivisionError)):
        reset()
        try:
            fails()
        except error:
            pass
        else:
            raise AssertionError("the arithmetic fails")
        assert log() == ("get echo",)  # read, as in process, though the call never comes


def mine(iterable):  # the test's own consumer: it looks at the project between two items
    it = iter(iterable)
    first = next(it)
    assert log() == (0,)
    second = next(it)
    assert log() == (0, 1)
    return [first, second]


def test_a_consumer_shadowed_by_the_tests_function_pulls_item_by_item():
    global list
    list = mine  # this module's global list, where the call below reads it
    try:
        reset()
        got = list(numbers(10))
    finally:
        del list
    assert got == [0, 1] and log() == (0, 1)
'''

NAMES = [
    "test_a_list_of_a_call_takes_the_generator_whole", "test_each_consumer_and_a_method",
    "test_set_hashes_a_project_object_between_its_items", "test_an_exception_part_way_comes_after_the_items",
    "test_an_empty_generator_and_a_failing_call", "test_a_result_that_is_no_generator",
    "test_the_projects_calls_to_the_test_interleave_as_they_would",
    "test_a_sum_moves_to_floats_across_its_pulls_and_stops_where_it_fails",
    "test_a_consumer_shadowed_by_the_tests_function_pulls_item_by_item", "test_a_method_given_a_lambda_is_one_request",
    "test_a_project_iterable_is_iterated_sized_and_pulled_as_in_process", "test_a_len_that_fails_as_in_process",
    "test_the_tests_function_called_back_mid_consumer_takes_the_next_item",
    "test_a_method_given_plain_arithmetic_is_one_request",
    "test_arithmetic_that_runs_project_code_or_fails_comes_between_read_and_call",
]  # fmt: skip


@pytest.fixture(scope="module")
def verdict(runtime, tmp_path_factory):
    return repo_fixture.split_verdict(runtime, tmp_path_factory.mktemp("feeding"), LIBRARY, "tests/test_feeding.py", TESTS, NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_fused_calls_as_in_process(verdict, name):
    repo_fixture.assert_passes_split(verdict, f"tests/test_feeding.py::{name}")


@pytest.mark.parametrize("name", NAMES)
def test_the_same_tests_pass_in_process(name, tmp_path, monkeypatch):
    """What plain pytest would see: with the library in process, each test passes."""
    repo_fixture.run_in_process(LIBRARY, TESTS, "test_feeding.py", name, tmp_path, monkeypatch)


def test_a_call_and_its_consumers_first_pull_are_one_request(verdict):
    ops = {name.split("::")[1]: count for name, count in verdict.ops.items()}
    # reset; the call with the first 512 items; two pulls (the last meets the end); log
    assert ops["test_a_list_of_a_call_takes_the_generator_whole"] == 1 + 1 + 2 + 1
    # Source(); reset; each of the nine consumers one request; log
    assert ops["test_each_consumer_and_a_method"] == 1 + 1 + 9 + 1
    # reset; the call with the pull that stops after the Loud object; its hash; one more pull to the end; log
    assert ops["test_set_hashes_a_project_object_between_its_items"] == 1 + 1 + 1 + 1 + 1
    # reset; the call with the pull that meets the exception; the next() that raises it; log
    assert ops["test_an_exception_part_way_comes_after_the_items"] == 1 + 1 + 1 + 1
    # numbers(0): one request; refuses(): one
    assert ops["test_an_empty_generator_and_a_failing_call"] == 2
    # the call: the project's list comes back current, never asked for again
    assert ops["test_a_result_that_is_no_generator"] == 1
    # reset; the call (the project calls the test's function three times, which calls log() each time)
    assert ops["test_the_projects_calls_to_the_test_interleave_as_they_would"] == 1 + 1 + 3
    # reset; the call with the ints pull stopping after 2.5; a floats pull of 512 items; one of 89 stopping after BIG; log
    assert ops["test_a_sum_moves_to_floats_across_its_pulls_and_stops_where_it_fails"] == 1 + 1 + 2 + 1
    # reset; Tracked(3); iter, len and the pull in one request; log; reset; four Tracked() and four requests; log;
    # reset; Tracked(4); its len(); log
    assert ops["test_a_project_iterable_is_iterated_sized_and_pulled_as_in_process"] == 1 + 2 + 1 + 1 + 8 + 1 + 1 + 2 + 1
    # reset; Tracked(); one request; log; reset; Tracked(); one request; the len() that raises what it met; log
    assert ops["test_a_len_that_fails_as_in_process"] == 1 + 2 + 1 + 1 + 2 + 1 + 1
    # Traced(); reset; three method calls of one request each; log
    assert ops["test_a_method_given_plain_arithmetic_is_one_request"] == 1 + 1 + 3 + 1
    # Traced(), Added(); reset; the read, the add, the call; log; twice: reset, the read, log
    assert ops["test_arithmetic_that_runs_project_code_or_fails_comes_between_read_and_call"] == 2 + 1 + 3 + 1 + 2 * 3
    # Traced(); reset; the method read and called in one request (the project calls the lambda back); log
    assert ops["test_a_method_given_a_lambda_is_one_request"] == 4
    # reset; the call; two next(); two log() in the test's list; log
    assert ops["test_a_consumer_shadowed_by_the_tests_function_pulls_item_by_item"] == 1 + 1 + 2 + 2 + 1
