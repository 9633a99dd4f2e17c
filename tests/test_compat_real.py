"""A real library's test suite under the split verdict: cachetools 5.5.0, from its sdist on PyPI.

Why: the verdict runs pytest and the tests in a trusted process and the project's code in a sandbox behind proxies;
hand-written fixtures only show what their author thought of. Here the library's own suite (215 tests, all passing
under plain pytest) runs both ways, as ``bench/bench_compat.py`` does for more libraries (issue 19), and
``KNOWN_FAILURES`` pins, grouped by cause, exactly the tests that pass under plain pytest but not yet under the
verdict. So this test fails on a regression (a test that passed under both fails under the verdict) and on an
improvement nobody recorded (a listed test passes now: take it off the list). Placed as a task's author would place
them (``python -m env.authoring place``), those tests run sandboxed instead, and the whole suite passes.

The sdist is downloaded at test time with pip (no third-party source is committed) and cached in ENV_SDIST_CACHE
(default ``~/.cache/agentdebugger/sdists``); without PyPI the test fails and says so.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.compat_libraries import (
    LIBRARIES,
    Comparison,
    PlainRun,
    build_task,
    compare,
    fetch_sdist,
    plugin_dir,
    run_plain,
    suite_files,
    with_sandboxed,
)
from env.authoring.placement import Placement, place
from env.authoring.sdist import SdistError
from env.sandbox.isolation import Isolation
from env.sandbox.limits import Limits
from env.sandbox.runner import Sandbox
from env.verdict.hosts import HOST
from env.verdict.repo_judge import RepoVerdict, run_tests
from env.verdict.testenv import ensure

LIB = LIBRARIES["cachetools"]
SUITE_SIZE = 215  # tests in cachetools 5.5.0's suite, every one passing under plain pytest

# Why each test fails under the verdict (what the split does not carry yet), then the tests it costs.
KNOWN_FAILURES: dict[str, list[str]] = {
    # `cached({})(f)`, `cachedmethod(lambda self: self.cache)`: a plain dict the test passes crosses as a copy, so the
    # project fills its own; the test's dict stays empty ("0 != 1", "{} is not {}", "2 != 1").
    "a dict passed to the project is a copy": [
        "tests/test_cached.py::DictWrapperTest::test_decorator",
        "tests/test_cached.py::DictWrapperTest::test_decorator_attributes",
        "tests/test_cached.py::DictWrapperTest::test_decorator_attributes_lock",
        "tests/test_cached.py::DictWrapperTest::test_decorator_clear",
        "tests/test_cached.py::DictWrapperTest::test_decorator_clear_lock",
        "tests/test_cached.py::DictWrapperTest::test_decorator_typed",
        "tests/test_cached.py::DictWrapperTest::test_decorator_wrapped",
        "tests/test_cachedmethod.py::CachedMethodTest::test_clear",
        "tests/test_cachedmethod.py::CachedMethodTest::test_clear_locked",
        "tests/test_cachedmethod.py::CachedMethodTest::test_dict",
        "tests/test_cachedmethod.py::CachedMethodTest::test_locked_dict",
        "tests/test_cachedmethod.py::CachedMethodTest::test_wrapped",
    ],
    # `WeakValueDictionary()` passed to `cachedmethod`: neither the test's own nor picklable (it holds a local function).
    "a WeakValueDictionary cannot be passed to the project": [
        "tests/test_cachedmethod.py::CachedMethodTest::test_weakref",
    ],
    # `keys.hashkey()` returns a `_HashedTuple` (a tuple subclass): it comes back as a proxy, not a tuple.
    "a project instance of a builtin subclass fails isinstance(x, tuple)": [
        "tests/test_keys.py::CacheKeysTest::test_addkeys",
    ],
}


@dataclass
class Runs:
    plain: PlainRun
    verdict: RepoVerdict
    comparison: Comparison
    placement: Placement  # the split-only run above, then sandboxed what it did not pass
    placed: RepoVerdict  # the task with that placement


@pytest.fixture(scope="module")
def runs(isolation: Isolation, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    try:
        tree = fetch_sdist(LIB)
    except SdistError as exc:
        pytest.fail(f"this test needs the sdist of {LIB.pin} from PyPI (cached after the first download): {exc}")
    env = ensure(LIB.requirements)
    folder: Path = tmp_path_factory.mktemp("cachetools")
    build_task(LIB, tree, folder, ["placeholder::test"])  # repo/: the sdist, where plain pytest runs
    plain = run_plain(LIB, folder / "repo", env, suite_files(LIB, tree))
    task = build_task(LIB, tree, folder, plain.collected)
    sandbox = Sandbox(Limits(wall_seconds=60, cpu_seconds=60), isolation, warm=False)  # one whole test session
    try:
        verdict = run_tests(sandbox, task, task.files)
        placement = place(sandbox, task, files=task.files, split=verdict)
        placed = run_tests(sandbox, with_sandboxed(task, placement.sandboxed), task.files)
    finally:
        sandbox.close()
    yield Runs(plain, verdict, compare(plain, verdict), placement, placed)


def test_plain_pytest_passes_the_whole_suite(runs: Runs) -> None:
    assert len(runs.plain.collected) == SUITE_SIZE, runs.plain.tail or runs.plain.collect_errors
    assert runs.plain.outcomes == dict.fromkeys(runs.plain.collected, "PASSED")


def test_every_test_runs_under_the_split(runs: Runs) -> None:
    verdict = runs.verdict
    assert not verdict.error and not verdict.collect_errors and not verdict.aborted, verdict.error or verdict.collect_errors or verdict.aborted
    assert set(verdict.outcomes) == set(runs.plain.collected)
    assert runs.comparison.under_split == SUITE_SIZE


def test_exactly_the_known_failures_fail_under_the_verdict(runs: Runs) -> None:
    known = {test for tests in KNOWN_FAILURES.values() for test in tests}
    lost = runs.comparison.lost
    new = {test: f"{status}: {reason}" for test, (status, reason) in sorted(lost.items()) if test not in known}
    fixed = sorted(known - set(lost))
    assert not new, f"{len(new)} tests passing under plain pytest now fail under the verdict: {new}"
    assert not fixed, f"{len(fixed)} known failures pass under the verdict now: take them off KNOWN_FAILURES: {fixed}"
    assert len(runs.comparison.also_passing) == SUITE_SIZE - len(known)


def test_nothing_passes_only_under_the_verdict(runs: Runs) -> None:
    assert runs.comparison.gained == []


def test_placed_sandboxed_the_tests_the_split_cannot_run_pass_and_the_rest_stay_split(runs: Runs) -> None:
    lost = set(runs.comparison.lost)
    assert set(runs.placement.sandboxed) == lost and runs.placement.failing == {}
    placed = compare(runs.plain, runs.placed)
    assert len(placed.also_passing) == SUITE_SIZE and placed.lost == {}, placed.lost
    assert placed.under_split == SUITE_SIZE - len(lost) and set(runs.placed.sandboxed) == lost
    assert not runs.placed.collect_errors and not runs.placed.error and not runs.placed.void


def test_the_recorder_s_host_link_belongs_to_this_checkout_and_a_dangling_one_is_replaced(tmp_path, monkeypatch):
    monkeypatch.setenv("ENV_SDIST_CACHE", str(tmp_path))
    target = HOST.resolve()
    folder = tmp_path / "plugin" / hashlib.sha256(str(target).encode()).hexdigest()[:16]
    folder.mkdir(parents=True)
    (folder / "adbg_host").symlink_to(tmp_path / "a-removed-checkout" / "env" / "verdict" / "host")  # as a deleted worktree left it
    assert plugin_dir() == folder
    assert (folder / "adbg_host").resolve() == target and (folder / "adbg_host" / "pytest_host.py").is_file()
    assert (folder / "adbg_compat_recorder.py").is_file() and [p.name for p in folder.iterdir() if p.name.endswith(".tmp")] == []
    (tmp_path / "plugin" / "0123456789abcdef").mkdir()  # another checkout's folder is left alone
    assert plugin_dir() == folder and (tmp_path / "plugin" / "0123456789abcdef").is_dir()
