"""The split runs a test's pure lambda in the sandbox instead of calling it back (issue 34 item 3): a lambda with no
closure or defaults whose code only computes, compares and calls pure builtins (``protocol.PURE_BUILTINS``) on its
arguments, such as more-itertools' ``before_and_after(lambda e: isinstance(e, int), events)``, computes the same there,
without a round trip per call. Any other function is called back, as is a pure lambda given one of the test's own
objects (a stand-in there) or naming a builtin its module shadows; each case behaves as in process."""

from __future__ import annotations

import pytest

from tests import repo_fixture

LIBRARY = '''def apply(function, *args):
    return function(*args)


def keep(function, items):
    return [item for item in items if function(item)]


def where(function, *args):
    """Where the function ran: "here" if its own frame is in the traceback of what it raised (it ran in this
    process), "there" if not (the trusted process ran it and its exception was made again here)."""
    try:
        function(*args)
    except Exception as exc:
        names = []
        tb = exc.__traceback__
        while tb is not None:
            names.append(tb.tb_frame.f_code.co_name)
            tb = tb.tb_next
        return ("here" if "<lambda>" in names else "there"), type(exc).__name__, str(exc)
    return "no exception"


def code_files(function):
    """The file names of every code object the project can walk to from a function it was given: its own, its
    globals' functions and, transitively, their closures' contents."""
    seen, files, todo = set(), set(), [function]
    while todo:
        item = todo.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        code = getattr(item, "__code__", None)
        if code is not None:
            files.add(code.co_filename)
            files.update(c.co_filename for c in code.co_consts if hasattr(c, "co_filename"))
        for cell in getattr(item, "__closure__", None) or ():
            try:
                todo.append(cell.cell_contents)
            except ValueError:
                pass
        space = getattr(item, "__globals__", None)
        if item is function and isinstance(space, dict):
            todo.extend(v for v in list(space.values()) if callable(v))
    return sorted(files)
'''

TESTS = '''from lib import apply, code_files, keep, where

len = lambda value: 42  # noqa: E731  (this module's len: a lambda naming len means this one)


class Mine(int):
    pass


def test_a_pure_lambda_computes_the_same():
    got = keep(lambda e: isinstance(e, int) and e % 2 == 0, [1, 2, "x", 4, 5.0])
    assert got == [2, 4]
    assert apply(lambda a, b: divmod(a, b)[0] if b else -1, 7, 2) == 3


def test_a_pure_lambda_runs_in_the_sandbox_and_fails_as_in_process():
    assert where(lambda x: 1 // x, 0) == ("here", "ZeroDivisionError", "integer division or modulo by zero")


def test_a_lambda_with_a_closure_is_called_back():
    seen = []
    assert keep(lambda e: seen.append(e) is None, [1, 2]) == [1, 2]
    assert seen == [1, 2]
    assert where(lambda x: seen[x], 5) == ("there", "IndexError", "list index out of range")


def test_a_lambda_naming_a_builtin_its_module_shadows_is_called_back():
    assert apply(lambda x: len(x), "abc") == 42


def test_a_pure_lambda_given_the_tests_own_object_is_called_back():
    assert apply(lambda x: isinstance(x, int), Mine(3)) is True


def test_a_sandboxed_lambda_names_no_file_of_the_tests():
    # the project walks from the stand-in to the lambda's code: it finds the code, not where the test was written
    files = code_files(lambda e: e + 1)
    assert "<test>" in files, files
    assert not any(f.endswith(".py") and "test" in f.rsplit("/", 1)[-1] for f in files), files
    assert __file__ not in files
'''

NAMES = [
    "test_a_pure_lambda_computes_the_same", "test_a_pure_lambda_runs_in_the_sandbox_and_fails_as_in_process",
    "test_a_lambda_with_a_closure_is_called_back", "test_a_lambda_naming_a_builtin_its_module_shadows_is_called_back",
    "test_a_pure_lambda_given_the_tests_own_object_is_called_back",
]  # fmt: skip
SPLIT_ONLY = ["test_a_sandboxed_lambda_names_no_file_of_the_tests"]  # in process the lambda's code is the test's own

IN_PROCESS = {  # where() in process: the lambda's frame is always in the traceback
    "test_a_pure_lambda_runs_in_the_sandbox_and_fails_as_in_process": "here",
    "test_a_lambda_with_a_closure_is_called_back": "here",
}


@pytest.fixture(scope="module")
def verdict(runtime, tmp_path_factory):
    return repo_fixture.split_verdict(runtime, tmp_path_factory.mktemp("portable"), LIBRARY, "tests/test_portable.py", TESTS, NAMES + SPLIT_ONLY)


@pytest.mark.parametrize("name", NAMES + SPLIT_ONLY)
def test_lambdas_as_in_process(verdict, name):
    repo_fixture.assert_passes_split(verdict, f"tests/test_portable.py::{name}")


@pytest.mark.parametrize("name", NAMES)
def test_the_same_values_in_process(name, tmp_path, monkeypatch):
    """What plain pytest computes: the same values (``where`` aside, which tells the two processes apart)."""
    source = TESTS.replace('("there", ', '("here", ') if name in IN_PROCESS else TESTS
    repo_fixture.run_in_process(LIBRARY, source, "test_portable.py", name, tmp_path, monkeypatch)
