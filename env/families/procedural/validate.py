"""Fast in-process validation of a generated task: its own tests on the buggy and on the gold files.

    report = check(task, reruns=2)
    report.ok, report.problems
    report.buggy[0]["tests/test_pricing.py::test_quote_at_a_volume_break"]     # "FAILED"

A task is valid when every FAIL_TO_PASS test fails on the buggy files and passes on the gold files,
every PASS_TO_PASS test passes on both, each run of a state gives the same outcomes, and the tests
collected are exactly FAIL_TO_PASS + PASS_TO_PASS (1-3 visible ones of the first, at least 3 visible
ones of the second). Held-out tests (their files only in the task's test patch) run in every state
and count in both lists; at least one of them must be FAIL_TO_PASS. When the task has an overfit (a
lookup-table fix of the visible tests), one run of it must pass every visible test and fail every
held-out FAIL_TO_PASS test (so it earns no share of the held-out credit).

The generated code is ours, so it runs in this process, not in the sandbox: every state (buggy and
gold, once per rerun) is written to its own directory of one temporary tree and all of them run in
ONE ``pytest.main`` session (plugins that cost time and are not needed are off). A plugin swaps the
project's modules in ``sys.modules``, and its directory at the head of ``sys.path``, whenever
collection or a test moves to another state, so each state imports its own fresh copy and keeps
its own module-level state, exactly as separate processes would. The project's modules are removed
from ``sys.modules`` before and after, ``sys.path`` is restored, and a lock serialises runs, so many
tasks can be checked in one process. Each distinct file is compiled once per run.

Measured on an idle 2-core machine: one state takes 45 ms (a 2-module service, ~10 tests) to 145 ms
(20 modules, ~100 tests); ``check(task)`` (4 states) 0.11 s, 0.29 s at 7 modules, 0.5 s at 20.
pytest's own work per test (about 1 ms per test and state) dominates, plus ~40 ms per session.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import inspect
import linecache
import logging
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import CodeType
from typing import Any

import pytest

from env.families.procedural.model import CheckReport, GeneratedTask
from env.patches import Files
from env.project import source_only, top_level_names

_LOCK = threading.Lock()
# Default plugins this needs no part of: caches, reports, capture (no output is read), warnings.
_OFF = ("cacheprovider", "stepwise", "faulthandler", "doctest", "junitxml", "pastebin", "unraisableexception", "threadexception",
        "setuponly", "setupplan", "legacypath", "tmpdir", "subtests", "debugging", "unittest", "recwarn", "monkeypatch", "logging",
        "warnings", "terminal", "capture", "skipping")


class _States:
    """The pytest plugin: which state's modules are loaded, and every test's outcome per state."""

    def __init__(self, root: Path, names: set[str]):
        self.root, self.names = root, names
        self.active: str | None = None
        self.parked: dict[str, dict[str, Any]] = {}
        self.outcomes: dict[str, dict[str, str]] = {}

    def owns(self, module: str) -> bool:
        return module.split(".")[0] in self.names

    def label(self, path: Any) -> str | None:
        try:
            return Path(str(path)).relative_to(self.root).parts[0]
        except (ValueError, IndexError):
            return None

    def activate(self, label: str | None) -> None:
        if label is None or label == self.active:
            return
        if self.active is not None:
            self.parked[self.active] = {name: sys.modules.pop(name) for name in list(sys.modules) if self.owns(name)}
        sys.modules.update(self.parked.pop(label, {}))
        sys.path[0] = str(self.root / label)
        self.active = label

    @pytest.hookimpl(tryfirst=True)
    def pytest_collectstart(self, collector: Any) -> None:
        self.activate(self.label(getattr(collector, "path", "")))

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> None:
        self.activate(self.label(item.path))

    def record(self, nodeid: str, status: str, overwrite: bool = True) -> None:
        label, _, test = nodeid.partition("/")
        runs = self.outcomes.setdefault(label, {})
        if overwrite or test not in runs:
            runs[test] = status

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.when == "call":
            self.record(report.nodeid, "PASSED" if report.passed else "FAILED" if report.failed else "SKIPPED")
        elif report.failed:  # setup or teardown
            self.record(report.nodeid, "ERROR")
        elif report.when == "setup" and report.skipped:
            self.record(report.nodeid, "SKIPPED")


class _Loader(importlib.machinery.SourceFileLoader):
    """Compiles each distinct file once per run: the states of a run repeat the same sources."""

    def __init__(self, fullname: str, path: str, codes: dict[tuple[str, bytes], CodeType], relative: str):
        super().__init__(fullname, path)
        self.codes, self.relative = codes, relative

    def source_to_code(self, data: Any, path: Any, *, _optimize: int = -1) -> CodeType:  # type: ignore[override]
        key = (self.relative, hashlib.sha256(bytes(data)).digest())
        if key not in self.codes:
            self.codes[key] = super().source_to_code(data, path, _optimize=_optimize)
        return self.codes[key]


class _Finder(importlib.abc.MetaPathFinder):
    """Finds the project's and the tests' modules inside the run's tree, loading them through ``_Loader``."""

    def __init__(self, root: Path, names: set[str]):
        self.root, self.names = root, names
        self.codes: dict[tuple[str, bytes], CodeType] = {}

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname.split(".")[0] not in self.names:
            return None
        last = fullname.rpartition(".")[2]
        for entry in list(path) if path is not None else sys.path[:1]:
            base = Path(entry)
            if self.root not in base.parents and base != self.root:
                continue
            for file, package in ((base / last / "__init__.py", True), (base / f"{last}.py", False)):
                if file.is_file():
                    relative = "/".join(file.relative_to(self.root).parts[1:])  # the same file in every state
                    loader = _Loader(fullname, str(file), self.codes, relative)
                    locations = [str(file.parent)] if package else None
                    return importlib.util.spec_from_file_location(fullname, str(file), loader=loader, submodule_search_locations=locations)
        return None


@contextlib.contextmanager
def _quiet(packages: set[str]) -> Iterator[None]:
    """The project's log records go nowhere during a run (not to stderr, not to the root logger's handlers).

    Only the project's own loggers change, and only for the run: nothing else of the process is
    redirected, so other threads keep their output.
    """
    saved = []
    for name in sorted(packages):
        logger = logging.getLogger(name)
        handler = logging.NullHandler()
        saved.append((logger, handler, logger.propagate))
        logger.addHandler(handler)
        logger.propagate = False
    try:
        yield
    finally:
        for logger, handler, propagate in saved:
            logger.removeHandler(handler)
            logger.propagate = propagate


def run_states(states: dict[str, Files]) -> dict[str, dict[str, str]]:
    """Each state's tests, in one in-process pytest session: {state: {test id: outcome}}.

    State names must be identifiers; every state's files must hold the same project.
    """
    names: set[str] = set()
    for files in states.values():
        names |= top_level_names(source_only(files), ["."])
    names |= set(states)  # pytest imports test files as <state>.tests.test_x
    with _LOCK, tempfile.TemporaryDirectory(prefix="adbg-procedural-check-") as tmp:
        root = Path(tmp)
        for label, files in states.items():
            for rel, text in files.items():
                path = root / label / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
        (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        plugin = _States(root, names)
        finder = _Finder(root, names)
        saved_path = list(sys.path)
        saved_modules = {name: sys.modules.pop(name) for name in list(sys.modules) if plugin.owns(name)}
        saved_bytecode = sys.dont_write_bytecode
        args = ["-c", str(root / "pytest.ini"), "--rootdir", str(root), "--import-mode=importlib", "--assert=plain",
                "--disable-plugin-autoload", "-o", "python_files=test_*.py"]
        for name in _OFF:
            args += ["-p", f"no:{name}"]
        try:
            sys.dont_write_bytecode = True
            sys.path.insert(0, str(root))
            sys.meta_path.insert(0, finder)
            with _quiet(names - set(states)):
                pytest.main(args + [str(root / label / "tests") for label in states], plugins=[plugin])
        finally:
            if finder in sys.meta_path:
                sys.meta_path.remove(finder)
            for entry in [entry for entry in sys.path_importer_cache if entry.startswith(tmp)]:
                del sys.path_importer_cache[entry]
            for name in list(sys.modules):
                module_file = str(getattr(sys.modules[name], "__file__", "") or "")
                if plugin.owns(name) or module_file.startswith(tmp):
                    del sys.modules[name]
            sys.modules.update(saved_modules)
            sys.path[:] = saved_path
            sys.dont_write_bytecode = saved_bytecode
            # pytest's failure reports read the generated files through linecache and inspect, which keep them for
            # the process's life: about 25 KiB per task made, without bound over fresh ids (issue 47).
            for entry in [entry for entry in inspect.modulesbyfile if entry.startswith(tmp)]:
                del inspect.modulesbyfile[entry]
            by_name = getattr(inspect, "_filesbymodname", {})  # inspect's own cache of module files, by module name
            for entry in [name for name, file in by_name.items() if str(file).startswith(tmp)]:
                del by_name[entry]
            # logging keeps every logger a module asks for (logging.getLogger(__name__)) for the process's life: the
            # generated packages' own, a few per task made (issue 47, finding 7)
            loggers = logging.Logger.manager.loggerDict
            for entry in [name for name in list(loggers) if plugin.owns(name)]:
                loggers.pop(entry, None)
    linecache.checkcache()  # forgets the lines of every file that no longer exists: the tree just removed
    return {label: dict(sorted(plugin.outcomes.get(label, {}).items())) for label in states}


def judge(
    fail_to_pass: list[str],
    pass_to_pass: list[str],
    buggy: Sequence[Mapping[str, str]],
    gold: Sequence[Mapping[str, str]],
    held_out: list[str] | None = None,
    overfit: Mapping[str, str] | None = None,
) -> list[str]:
    """What makes these outcomes an invalid task (empty: valid).

    ``held_out`` are the ids of the lists the agent never sees: the 1-3 bound is on the visible FAIL_TO_PASS
    tests, and at least one held-out test must be FAIL_TO_PASS. ``overfit`` (one run of the lookup-table fix)
    must pass every visible test and fail every held-out FAIL_TO_PASS test.
    """
    problems = []
    held = set(held_out or [])
    visible_f2p = [t for t in fail_to_pass if t not in held]
    if not 1 <= len(visible_f2p) <= 3:
        problems.append(f"FAIL_TO_PASS holds {len(visible_f2p)} visible tests; 1-3 expected")
    if len([t for t in pass_to_pass if t not in held]) < 3:
        problems.append(f"PASS_TO_PASS holds {len([t for t in pass_to_pass if t not in held])} visible tests; at least 3 expected")
    if held_out is not None and not held & set(fail_to_pass):
        problems.append("no held-out test is FAIL_TO_PASS")
    listed = set(fail_to_pass) | set(pass_to_pass)
    for state, runs in (("buggy", buggy), ("gold", gold)):
        for number, outcomes in enumerate(runs, start=1):
            for test in sorted(set(outcomes) - listed):
                problems.append(f"{test}: collected on the {state} files (run {number}) but in neither list")
            for test in fail_to_pass:
                status = outcomes.get(test, "ERROR")
                wanted = ("FAILED", "ERROR") if state == "buggy" else ("PASSED",)
                if status not in wanted:
                    problems.append(f"{test}: FAIL_TO_PASS but {status} on the {state} files (run {number})")
            for test in pass_to_pass:
                status = outcomes.get(test, "ERROR")
                if status != "PASSED":
                    problems.append(f"{test}: PASS_TO_PASS but {status} on the {state} files (run {number})")
            if number > 1 and outcomes != runs[0]:
                changed = sorted(t for t in set(outcomes) | set(runs[0]) if outcomes.get(t) != runs[0].get(t))
                problems.append(f"run {number} of the {state} files differs from run 1: {', '.join(changed)}")
    if overfit is not None:
        for test in sorted(listed - held):
            if overfit.get(test, "ERROR") != "PASSED":
                problems.append(f"{test}: visible, but {overfit.get(test, 'ERROR')} on the overfit")
        # Every held-out FAIL_TO_PASS test must call the function with inputs the visible tests never pass: one the
        # table passes would pay a lookup table of the visible arguments (the repository grade's min rule).
        for test in fail_to_pass:
            if test in held and overfit.get(test, "ERROR") == "PASSED":
                problems.append(f"{test}: held-out FAIL_TO_PASS, but PASSED on the overfit (a table of the visible calls fixes it)")
    return problems


def check(task: GeneratedTask, reruns: int = 2) -> CheckReport:
    """Run the task's tests (held-out ones included) ``reruns`` times on the buggy and on the gold files, and once
    on the overfit when the task has one, and judge them."""
    overfit = {**task.files, **task.overfit} if task.overfit else None
    return check_files(task.files, task.gold_files, task.fail_to_pass, task.pass_to_pass, reruns, task.held_out_files, task.held_out, overfit)


def check_files(
    files: Files,
    gold_files: Files,
    fail_to_pass: list[str],
    pass_to_pass: list[str],
    reruns: int = 2,
    held_out_files: Files | None = None,
    held_out: list[str] | None = None,
    overfit_files: Files | None = None,
) -> CheckReport:
    """``check`` for a task not made yet: its files, its held-out test files and the lists."""
    return check_states(files, gold_files, fail_to_pass, pass_to_pass, reruns, held_out_files, held_out, overfit_files)[0]


def check_states(
    files: Files,
    gold_files: Files,
    fail_to_pass: list[str],
    pass_to_pass: list[str],
    reruns: int = 2,
    held_out_files: Files | None = None,
    held_out: list[str] | None = None,
    overfit_files: Files | None = None,
    extra: dict[str, Files] | None = None,
) -> tuple[CheckReport, dict[str, dict[str, str]]]:
    """``check_files``, with ``extra`` states run in the same session (their outcomes are returned, not judged).

    The held-out test files join every judged state (buggy, gold, overfit); ``extra`` states hold what they are given.
    """
    if reruns < 1:
        raise ValueError(f"reruns must be at least 1, got {reruns}")
    started = time.monotonic()
    hidden = held_out_files or {}
    states: dict[str, Files] = {}
    for number in range(reruns):
        states[f"buggy{number}"] = {**files, **hidden}
        states[f"gold{number}"] = {**gold_files, **hidden}
    if overfit_files is not None:
        states["overfit"] = {**overfit_files, **hidden}
    states.update(extra or {})
    outcomes = run_states(states)
    buggy = [outcomes[f"buggy{number}"] for number in range(reruns)]
    gold = [outcomes[f"gold{number}"] for number in range(reruns)]
    overfit = outcomes.get("overfit") if overfit_files is not None else None
    checked = report(fail_to_pass, pass_to_pass, buggy, gold, time.monotonic() - started, held_out, overfit)
    return checked, {name: outcomes[name] for name in extra or {}}


def report(
    fail_to_pass: list[str],
    pass_to_pass: list[str],
    buggy: Sequence[Mapping[str, str]],
    gold: Sequence[Mapping[str, str]],
    seconds: float,
    held_out: list[str] | None = None,
    overfit: Mapping[str, str] | None = None,
) -> CheckReport:
    """The judgement of runs already made, for these test lists."""
    problems = judge(fail_to_pass, pass_to_pass, buggy, gold, held_out, overfit)
    return CheckReport(ok=not problems, problems=problems, buggy=buggy, gold=gold, seconds=round(seconds, 4),  # type: ignore[arg-type]
                       held_out=list(held_out or []), overfit=overfit)  # type: ignore[arg-type]
