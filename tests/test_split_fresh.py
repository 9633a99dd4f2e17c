"""Round trips the split saves without changing what the test sees (issue 34 item 3): a project list, dict or set
that came back from an operation is read from its copy until the next operation (nothing of the project's ran in
between), a pull that meets a bare StopIteration ends the consumer without another request, and the project's
builtin iterators (``map``, ``zip`` ...) are their own iter() without asking. And what must still be asked: a copy
after any later operation, a list a generator reuses after yielding it, a list the project's own thread changes, a
list inside a tuple, a list subclass, an iterator that yields again after it stopped. The child records warnings
with one log set up once: a filter the project sets still lasts only for its operation."""

from __future__ import annotations

import pytest

from tests import repo_fixture

LIBRARY = '''import datetime
import threading
import time
import warnings

SHARED = []


def shared():
    return SHARED


def grow(n):
    SHARED.append(n)


def reset():
    del SHARED[:]


def holder():
    return (SHARED, {"k": SHARED})


def reused():
    buf = []
    for i in range(3):
        buf.append(i)
        yield buf
    buf.clear()  # after the last item: list() sees three empty lists in process


def later(delay):
    """A list the project's own thread fills after the call returned."""
    items = []

    def fill():
        time.sleep(delay)
        items.append("done")

    threading.Thread(target=fill).start()
    return items


class Sneaky(list):
    """A list subclass: the project's object, never a plain copy."""

    def bump(self):
        self.append(len(self))


def sneaky():
    return Sneaky([0])


class Again:
    """An iterator that yields again after it stopped: each list() of it asks it anew."""

    def __init__(self):
        self.calls = 0

    def __iter__(self):
        return self

    def __next__(self):
        self.calls += 1
        if self.calls in (3, 6):
            raise StopIteration
        return self.calls


def mapped(n):
    return map(abs, range(n))


def with_value():
    yield 1
    return "value"


def silence():
    warnings.simplefilter("ignore")


def strict():
    warnings.simplefilter("error")
    warnings.warn("strict")


def warn(text):
    warnings.warn(text, UserWarning)


class Zone(datetime.tzinfo):
    def __init__(self, hours):
        self.hours = hours

    def utcoffset(self, when):
        return datetime.timedelta(hours=self.hours)

    def __reduce__(self):
        return Zone, (self.hours,)


def document():
    return {"items": SHARED, "when": datetime.datetime(1979, 5, 24, 7, 32, tzinfo=Zone(-8))}
'''

TESTS = '''import time

import pytest

import lib
from lib import Again, document, grow, holder, later, mapped, reset, reused, shared, sneaky, with_value


def test_a_copy_reads_without_asking():
    reset()
    s = shared()
    assert s == [] and len(s) == 0 and list(s) == [] and not s


def test_a_copy_follows_the_project_after_an_operation():
    reset()
    s = shared()
    grow(1)
    assert s == [1]
    grow(2)
    assert len(s) == 2 and list(s) == [1, 2]
    s.append(3)  # written through: the project's list, then the copy
    assert lib.SHARED == [1, 2, 3] and s == [1, 2, 3]


def test_a_list_inside_a_tuple_and_a_dict():
    reset()
    t = holder()
    grow(5)
    assert t[0] == [5] and t[1]["k"] == [5]


def test_a_generator_reusing_its_list():
    assert list(reused()) == [[], [], []]
    g = reused()
    first = next(g)
    assert first == [0]
    next(g)
    assert first == [0, 1]


def test_a_project_thread_changes_a_copy():
    items = later(0.3)
    assert items == []
    deadline = time.monotonic() + 20
    while items != ["done"] and time.monotonic() < deadline:
        time.sleep(0.02)
    assert items == ["done"]


def test_a_list_subclass_stays_the_projects():
    s = sneaky()
    assert s == [0]
    s.bump()
    assert s == [0, 1]


def test_an_iterator_that_yields_after_it_stopped():
    it = Again()
    assert list(it) == [1, 2]
    assert list(it) == [4, 5]
    assert next(it) == 7


def test_a_return_value_ends_a_list():
    assert list(with_value()) == [1]
    g = with_value()
    assert next(g) == 1
    with pytest.raises(StopIteration) as stop:
        next(g)
    assert stop.value.value == "value"


def test_a_builtin_iterator_is_its_own_iterator():
    m = mapped(3)
    assert iter(m) is m
    with pytest.raises(TypeError, match="'map' has no len"):
        len(m)
    assert list(m) == [0, 1, 2]
    assert list(m) == []


def test_a_projects_warning_filters_last_one_operation():
    lib.silence()
    with pytest.warns(UserWarning, match="heard"):
        lib.warn("heard")
    with pytest.raises(UserWarning, match="strict"):
        lib.strict()
    with pytest.warns(UserWarning, match="again"):
        lib.warn("again")


def test_copies_of_a_project_container_are_plain():
    import copy

    reset()
    grow(1)
    doc = document()
    deep = copy.deepcopy(doc)  # toml's test_deepcopy_timezone: a datetime with the project's tzinfo inside
    assert type(deep) is dict and type(deep["items"]) is list and deep["items"] == [1]
    assert deep["when"].utcoffset().total_seconds() == -8 * 3600
    shallow = copy.copy(doc["items"])
    shallow.append(2)
    assert type(shallow) is list and lib.SHARED == [1]
'''

NAMES = [
    "test_a_copy_reads_without_asking", "test_a_copy_follows_the_project_after_an_operation",
    "test_a_list_inside_a_tuple_and_a_dict", "test_a_generator_reusing_its_list", "test_a_project_thread_changes_a_copy",
    "test_a_list_subclass_stays_the_projects", "test_an_iterator_that_yields_after_it_stopped",
    "test_a_return_value_ends_a_list", "test_a_builtin_iterator_is_its_own_iterator",
    "test_a_projects_warning_filters_last_one_operation", "test_copies_of_a_project_container_are_plain",
]  # fmt: skip


@pytest.fixture(scope="module")
def verdict(runtime, tmp_path_factory):
    return repo_fixture.split_verdict(runtime, tmp_path_factory.mktemp("fresh"), LIBRARY, "tests/test_fresh.py", TESTS, NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_as_in_process(verdict, name):
    repo_fixture.assert_passes_split(verdict, f"tests/test_fresh.py::{name}")


def test_reading_a_fresh_copy_costs_no_request(verdict):
    # reset and shared(); ==, len(), list() and bool() of the copy ask nothing
    assert verdict.ops["tests/test_fresh.py::test_a_copy_reads_without_asking"] == 2


def test_a_copy_is_asked_again_after_an_operation(verdict):
    # reset, shared(), grow(1), a refresh for ==, grow(2), one refresh for len() (list() then reads it fresh), the
    # append and its refresh, lib.SHARED read, then s == ... reads the copy the refresh made
    assert verdict.ops["tests/test_fresh.py::test_a_copy_follows_the_project_after_an_operation"] == 9


def test_a_stopped_pull_and_a_builtin_iterator_cost_no_request(verdict):
    # mapped(3) and one pull meeting the end (list() right after a ``with`` block: its load is a jump target); iter()
    # and len() answered here; the second list(): one pull
    assert verdict.ops["tests/test_fresh.py::test_a_builtin_iterator_is_its_own_iterator"] == 3
