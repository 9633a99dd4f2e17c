"""What crosses the split besides plain data (issue 19, part 3): time zones, the tests' own objects and classes, values
of the standard library's types, project test mixins beside unittest.TestCase; and what a test's object must never
hand the project (a module, a function of the trusted process's, its private names)."""

from __future__ import annotations

import pytest

from env.project import load_repo_task
from env.verdict.repo_judge import run_tests
from tests import repo_fixture

LIBRARY = '''import collections
import datetime


class Fixed(datetime.tzinfo):
    """A project time zone: one hour east, named by the project."""

    def utcoffset(self, when):
        return datetime.timedelta(hours=1)

    def dst(self, when):
        return datetime.timedelta(0)

    def tzname(self, when):
        return "PRJ"


def zone():
    return Fixed()


def same_zone(moment):
    return moment.tzinfo


def offset_of(moment):
    return moment.utcoffset()


def describe(thing):
    return "%s has %d legs" % (thing.name, thing.legs())


def keep(thing):
    return thing


def peek(thing, name):
    return getattr(thing, name)


def total(counts):
    counts["missing"] += 1  # a defaultdict's factory runs here
    return type(counts).__name__, sum(counts.values())


def first_key(ordered):
    return isinstance(ordered, collections.OrderedDict), next(iter(ordered))


def ask_directly(thing, name):
    """What a hostile project can do: skip the proxy and send the trusted process its own request."""
    ask = type(thing).__getattr__.__globals__["_ask"]
    return ask(object.__getattribute__(thing, "_adbg_state"), object.__getattribute__(thing, "_adbg_number"), "getattr", (name,), {})


def register(cls):
    cls.registered = True
    return cls


def build(cls, *args):
    return cls(*args)


class Checks:
    """A test mixin the project ships (like pyparsing.testing): its methods run here, on the test's object."""

    def assert_doubled(self, value, expected):
        self.assertEqual(value * 2, expected)
        return "checked"

    def assert_raises_value(self):
        return self.assertRaises(ValueError)
'''

TESTS = '''import collections
import datetime
import os
import unittest

import pytest

import lib


def test_project_time_zones_are_real_tzinfos_here():
    zone = lib.zone()
    moment = datetime.datetime(2024, 5, 1, 12, 0, tzinfo=zone)
    assert moment.utcoffset() == datetime.timedelta(hours=1) and moment.tzname() == "PRJ"
    assert moment.astimezone(datetime.timezone.utc).hour == 11
    assert lib.same_zone(moment) is zone  # the same project object comes back as the same proxy
    assert lib.offset_of(datetime.datetime(2024, 1, 1, fold=1, tzinfo=datetime.timezone.utc)) == datetime.timedelta(0)


class Dog:
    name = "rex"

    def legs(self):
        return 4


def test_the_tests_objects_cross_by_reference():
    dog = Dog()
    assert lib.describe(dog) == "rex has 4 legs"
    assert lib.keep(dog) is dog


def test_values_of_the_standard_library_cross_as_copies():
    counts = collections.defaultdict(int, {"a": 2})
    assert lib.total(counts) == ("defaultdict", 3)
    assert lib.first_key(collections.OrderedDict([("z", 1), ("a", 2)])) == (True, "z")


def test_the_tests_classes_have_twins_in_the_sandbox():
    @lib.register
    class Point:
        def __init__(self, x):
            self.x = x

        def doubled(self):
            return self.x * 2

    assert Point.registered is True
    assert lib.build(Point, 21).doubled() == 42


class UsesTheProjectsMixin(lib.Checks, unittest.TestCase):
    def test_mixin_methods_run_on_this_test(self):
        assert self.assert_doubled(2, 4) == "checked"
        with self.assert_raises_value():
            raise ValueError("expected")

    def test_a_failing_mixin_check_fails(self):
        self.assert_doubled(2, 5)


class Holder:
    helper = staticmethod(os.system)
    module = os
    _secret = "mine"


def test_a_module_on_a_test_object_is_out_of_reach():
    with pytest.raises(AttributeError, match="the project may not reach a module of the trusted process"):
        lib.peek(Holder(), "module")


def test_a_function_of_the_trusted_process_is_out_of_reach():
    with pytest.raises(AttributeError, match="the project may not reach system of the trusted process"):
        lib.peek(Holder(), "helper")


def test_dunders_of_a_test_object_are_out_of_reach():
    for name in ("__class__", "__dict__", "__init__"):
        with pytest.raises(AttributeError, match=f"the project may not reach the test's '{name}'"):
            lib.ask_directly(Holder(), name)
    with pytest.raises(AttributeError, match="the project may not reach a module of the trusted process"):
        lib.ask_directly(Holder(), "module")
    assert lib.peek(Holder(), "_secret") == "mine"  # the tests' own private names are theirs to share
'''

PASSING = [
    "test_project_time_zones_are_real_tzinfos_here",
    "test_the_tests_objects_cross_by_reference",
    "test_values_of_the_standard_library_cross_as_copies",
    "test_the_tests_classes_have_twins_in_the_sandbox",
    "UsesTheProjectsMixin::test_mixin_methods_run_on_this_test",
    "test_a_module_on_a_test_object_is_out_of_reach",
    "test_a_function_of_the_trusted_process_is_out_of_reach",
    "test_dunders_of_a_test_object_are_out_of_reach",
]
FAILING = "UsesTheProjectsMixin::test_a_failing_mixin_check_fails"


@pytest.fixture(scope="module")
def verdict(runtime, tmp_path_factory):
    files = {"lib/__init__.py": LIBRARY, "tests/test_crossing.py": TESTS}
    ids = [f"tests/test_crossing.py::{name}" for name in [*PASSING, FAILING]]
    folder = repo_fixture.write_task(tmp_path_factory.mktemp("crossing"), files, files, FAIL_TO_PASS=ids, PASS_TO_PASS=[])
    return run_tests(runtime.sandbox, load_repo_task(folder), files)


@pytest.mark.parametrize("name", PASSING)
def test_crosses_under_the_split(verdict, name):
    test = f"tests/test_crossing.py::{name}"
    assert verdict.outcomes.get(test) == "PASSED", verdict.excerpts.get(test) or verdict.error or verdict.collect_errors
    assert verdict.trust(test) == "split"


def test_a_project_mixin_check_that_fails_fails_the_test(verdict):
    test = f"tests/test_crossing.py::{FAILING}"
    assert verdict.outcomes[test] == "FAILED"
    assert "AssertionError: 4 != 5" in verdict.excerpts[test]
