"""A project's comparison method called by name (``a.__eq__(b)``) answers as that method does, NotImplemented
included, while ``a == b`` still runs the whole operator in the sandbox (reflection, subclasses first): semver's
``test_compare_with_subclass`` failed with ``True is NotImplemented`` (bench/bench_real_bugs.py)."""

from __future__ import annotations

import pytest

from tests import repo_fixture

LIBRARY = '''class Version:
    def __init__(self, n):
        self.n = n

    def __eq__(self, other):
        if not isinstance(other, Version):
            return NotImplemented
        return self.n == other.n

    def __lt__(self, other):
        if not isinstance(other, Version):
            return NotImplemented
        return self.n < other.n

    __hash__ = None


class Strict:
    """Equal only to objects of its very class (semver 3.0.3's Version and a subclass)."""

    def __init__(self, n):
        self.n = n

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return self.n == other.n

    __hash__ = None


class Other:
    pass


def version(n):
    return Version(n)


def other():
    return Other()
'''

TESTS = '''from lib import Strict, Version, other, version


class Sub(Strict):
    pass


def test_a_method_called_by_name():
    assert version(1).__eq__(other()) is NotImplemented
    assert version(1).__lt__(other()) is NotImplemented
    assert version(1).__eq__(version(1)) is True
    assert version(1).__ne__(version(2)) is True


def test_the_operator_reflects():
    assert version(1) == version(1)
    assert not (version(1) == other())
    assert version(1) != other()
    assert sorted([version(2), version(1)]) == sorted([version(1), version(2)])


def test_a_test_subclass():
    assert Sub(1).__eq__(Strict(1)) is NotImplemented
    assert Strict(1).__eq__(Sub(1)) is NotImplemented
    assert Sub(1).__eq__(Sub(1)) is True
    assert not (Sub(1) == Strict(1))  # both NotImplemented: identity decides
'''

NAMES = ["test_a_method_called_by_name", "test_the_operator_reflects", "test_a_test_subclass"]


@pytest.fixture(scope="module")
def verdict(runtime, tmp_path_factory):
    return repo_fixture.split_verdict(runtime, tmp_path_factory.mktemp("compare"), LIBRARY, "tests/test_compare.py", TESTS, NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_as_in_process(verdict, name):
    repo_fixture.assert_passes_split(verdict, f"tests/test_compare.py::{name}")
