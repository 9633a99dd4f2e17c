"""Real bugs mined from a library's release pairs, automatically (issue 48 item 2).

    python -m env.authoring mine parse [--releases 6] [--out mined] [--requires PIN ...] [--tests PATH ...] [--runs 3]
    found = compare(load_releases("parse", "1.20.1", "1.20.2"), runner)   # what ``bench/real_bugs.py discover`` prints

For each pair of consecutive releases (earlier, later) among the library's last N final releases on PyPI:

1. Both sdists (``env.authoring.sdist``). Skipped, the reason in the ledger: a release without an sdist, no code
   changed, no pytest file in the later release, no test changed (nothing new can fail).
2. The later release's tests (its test files and data, the earlier's everything else: "the earlier code") and the
   later release's own tree each run once, the whole suite, sandboxed in the task's own test environment
   (``env.verdict.testenv``). The candidates: tests that fail or error on the earlier code and pass on the later.
   A test of a file the earlier code cannot collect (it imports a name the earlier release lacks) is none: a task's
   buggy state must collect.
3. The cause, measured: each changed code file alone (its later text over the earlier code) runs the candidates'
   files; the tests it makes pass are its bug (a test several files fix alone goes to the smallest change). The
   candidates no single file explains run with every changed file, then without each in turn, largest first, to the
   smallest set that still makes them pass. Each group is one task, its gold patch the diff of its files (a change
   that only sets a version, ``__version__ = "1.2.3"``, left out: every release makes one).
4. A bug, not a feature: a group whose every failing test fails on the earlier code only because a public name or
   argument the test itself uses is missing there (``has no attribute 'x'``, ``cannot import name``, ``unexpected
   keyword argument``) tests an addition; it is recorded ("feature") and skipped.
   The limits, stated: a gold patch touches at most ``MAX_FILES`` code files and changes at most ``MAX_LINES`` lines
   (added plus removed); a release changing more than ``MAX_TRIED`` code files is not searched (a refactor). A fix
   over the limits is trimmed first (``trim``): the changes in its files (at most ``MAX_CHANGES`` a file) are undone,
   bisected, wherever every test of the group's files that passed with the whole change still passes.
5. Stable: the candidates' files run once more on the earlier code and on each group's gold tree; FAIL_TO_PASS fails
   both times before and passes both times after, PASS_TO_PASS (the group's test files' other tests) passes all four.
6. The task: a SWE-bench instance (test patch: the group's test files and the test helpers and data the later
   release changed), imported by ``env.authoring.importer`` from the earlier release, held out as imports are (the
   tests the later release adds or changes) and as synthesis holds out (with two or more failing test functions, a
   third of them, never all), settled on its gold tree and validated over ``--runs`` runs under the verdict. A listed
   test the visible tests never collect (a parametrised case only the later release's changed test data defines)
   leaves the gold unresolved: the task is imported once more with it held out. Only a valid task whose FAIL_TO_PASS
   tests all run under the split (trusted) is kept.
7. Its problem statement: the later release's changelog entry (``env.authoring.changelog``) with the visible failing
   tests named, else one written from the failing tests (``env.authoring.statement``).

Output: the task folders in OUT; one ``CatalogTask`` (source "mined") per task in OUT/mined.jsonl, rewritten whole
under a lock (several libraries may mine into one OUT); the ledger OUT/.mining/NAME/ledger.jsonl, one line per pair
decided, with each cause found and what became of it: a run started again skips the pairs decided.

Every run that decides something counts CPU time (``Limits.for_validity``): the same pairs are mined idle and at full
load. A run the machine starves in every attempt (``env.verdict.busy``) decides nothing: the pair is recorded "busy",
never as a fault of the pair, and the next run decides it again.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import resource
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from env.authoring import sdist
from env.authoring.catalog.manifest import CatalogTask, ReleasePair, ValidationRecord, read_tasks, write_tasks
from env.authoring.changelog import entry
from env.authoring.difficulty import estimate, record
from env.authoring.importer import Instance, import_instance
from env.authoring.ledger import append, read_lines
from env.authoring.settle import settle
from env.authoring.statement import problem_statement
from env.authoring.synthesize import defines, hold_out
from env.authoring.validate import TaskValidation, validate_task
from env.families.catalog import TaskCatalog
from env.patches import Files, make_patch
from env.project import RepoTask, is_test_path, load_repo_task, source_only
from env.runtime import Runtime
from env.sandbox.isolation import probe_isolation
from env.sandbox.limits import Limits, MiB
from env.sandbox.runner import Sandbox
from env.test_source import source_of
from env.verdict.busy import MachineBusy, until_decided
from env.verdict.outcome import RepoVerdict, first_error_line
from env.verdict.repo_judge import run_graded, run_tests
from env.verdict.sandboxed import run_sandboxed
from env.verdict.testenv import TestEnv, ensure, file_lock

MAX_FILES = 3  # code files a gold patch may touch
MAX_LINES = 80  # lines a gold patch may change, added plus removed (a function rewritten; 40 lost a third of the fixes)
MAX_TRIED = 15  # changed code files tried one by one for the cause; a release changing more is not searched
MAX_CHANGES = 80  # changes (runs of changed lines) in a file a fix too large is trimmed over
MAX_TRIM_RUNS = 40  # runs one trimming may take
SUITE_SECONDS = 300  # CPU seconds one whole-suite run may take while mining (the wall clock a backstop of 10x)
RELEASES = 6  # the default --releases: the last six releases, five pairs
CATALOG = "mined.jsonl"
FAILING = ("FAILED", "ERROR")  # what the validator counts as failing (env.families.validation)
_STATE = ".mining"
_MISSING_NAME = re.compile(r"(?:has no attribute|cannot import name|name|unexpected keyword argument) '(\w+)'")
_VERSION_LINE = re.compile(r"""^\s*(__version__|version|VERSION|__version_info__|version_info)\s*(:\s*\w+\s*)?=\s*[\w"'(\[]""")
_NOT_CODE_DIRS = frozenset(
    {"docs", "doc", "examples", "example", "benchmarks", "benchmark", "bench", "scripts", "tools", "ci", ".github", "build"}
)
_NOT_CODE_FILES = frozenset({"setup.py", "noxfile.py", "fabfile.py", "runtests.py", "ez_setup.py", "bootstrap.py", "conf.py"})
MINED_CLOSING = "These tests come from the library's next release, which fixed the bug. Find the cause and fix the code (not the tests)."

PairStatus = Literal[
    "mined",
    "rejected",
    "no-sdist",
    "no-code-change",
    "no-test-difference",
    "no-tests",
    "suite-broken",
    "no-fail-to-pass",
    "too-large",
    "error",
    "busy",
]
GroupStatus = Literal["pending", "valid", "feature", "too-large", "unstable", "invalid", "untrusted", "unexplained", "error"]


class MineError(RuntimeError):
    """The library cannot be mined at all (the verdict cannot run here, fewer than two releases ...)."""


class Group(BaseModel):
    """One cause found in a pair: the code files whose change makes these tests pass, and what became of it."""

    code: list[str]
    fail_to_pass: list[str]
    status: GroupStatus = "pending"
    task: str = ""
    detail: str = ""


class PairDecision(BaseModel):
    """One line of the ledger: what became of one release pair."""

    key: str
    status: PairStatus
    groups: list[Group] = Field(default_factory=list)
    detail: str = ""
    seconds: float = 0.0
    max_lines: int = Field(40, description="MAX_LINES when it was decided (lines before it was recorded: 40)")

    def undecided(self) -> bool:
        """Decided again by the next run: the machine starved its runs, or it was refused under a smaller line limit."""
        return self.status == "busy" or self.outgrown()

    def outgrown(self) -> bool:
        """Decided under a smaller line limit with a fix refused for its size: decided again under today's."""
        return self.max_lines < MAX_LINES and any(g.status == "too-large" for g in self.groups)


class MineSummary(BaseModel):
    library: str
    pairs: int = Field(description="pairs decided, in every run so far")
    tasks: list[str] = Field(description="the valid mined tasks")
    by_status: dict[str, int] = Field(description="pairs by what became of them")
    by_group: dict[str, int] = Field(description="causes found, by what became of them")
    seconds: float = Field(description="this run's wall time")


# -- a release pair's files -------------------------------------------------------------------------------------------


def is_code(path: str) -> bool:
    """The library's own Python code: a ``.py`` file outside the tests, documentation (``doc*/``), examples and build scripts."""
    parts = path.split("/")
    if len(parts) > 1 and parts[0].lower().startswith("doc"):
        return False
    return (
        path.endswith(".py")
        and not is_test_path(path)
        and not (_NOT_CODE_DIRS & set(parts[:-1]))
        and not (len(parts) == 1 and parts[0] in _NOT_CODE_FILES)
    )


def undo(old: str, new: str, undone: Callable[[int, list[str], list[str]], bool]) -> str:
    """``new`` with the changes from ``old`` that ``undone(index, removed lines, added lines)`` picks put back as ``old``
    had them (the index counts changes, each a run of lines removed or added, in the file's order)."""
    before, after = old.splitlines(keepends=True), new.splitlines(keepends=True)
    kept: list[str] = []
    index = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if tag == "equal":
            kept += after[j1:j2]
            continue
        kept += before[i1:i2] if undone(index, before[i1:i2], after[j1:j2]) else after[j1:j2]
        index += 1
    return "".join(kept)


def picked(indexes: set[int]) -> Callable[[int, list[str], list[str]], bool]:
    """``undo``'s choice of the changes at these indexes."""
    return lambda index, _removed, _added: index in indexes


def change_sizes(old: str, new: str) -> list[int]:
    """The lines each change from ``old`` to ``new`` removes and adds, in the file's order (``undo``'s indexes)."""
    before, after = old.splitlines(keepends=True), new.splitlines(keepends=True)
    return [
        i2 - i1 + j2 - j1
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes()
        if tag != "equal"
    ]


def without_version_bumps(old: str | None, new: str) -> str:
    """``new`` with each change that only sets a version (``__version__ = "1.2.3"``, every release makes one, no bug is
    in it) undone: a gold patch is the fix alone, and a file whose only change is its version is no changed file."""
    if old is None:
        return new
    return undo(old, new, lambda _, removed, added: all(_VERSION_LINE.match(line) for line in removed + added))


def lines_changed(patch: str) -> int:
    """Lines a patch adds or removes (its file headers aside)."""
    return sum(1 for line in patch.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---"))


def size_problem(patches: dict[str, str]) -> str:
    """Why a gold patch (one patch per code file) is too large to be a task ("" when it is within the limits)."""
    lines = sum(lines_changed(p) for p in patches.values())
    if len(patches) > MAX_FILES:
        return f"the fix changes {len(patches)} code files ({', '.join(sorted(patches))}); a task's may change at most {MAX_FILES}"
    if lines > MAX_LINES:
        return f"the fix changes {lines} lines of {', '.join(sorted(patches))}; a task's may change at most {MAX_LINES}"
    return ""



def changed_helpers(old: Files, new: Files) -> set[str]:
    """The test helpers and data the later release changed or added (a conftest, tests/files/...): its test-path files
    that are no pytest module. A mined task's tests need them as the later release has them."""
    return {p for p, t in new.items() if is_test_path(p) and not sdist.PYTEST_FILE.match(p.rsplit("/", 1)[-1]) and old.get(p) != t}

@dataclass
class Releases:
    """Two consecutive releases' files: ``buggy``'s (``old``) and ``fixed``'s (``new``)."""

    name: str
    buggy: str
    fixed: str
    old: Files
    new: Files

    @cached_property
    def fixed_code(self) -> Files:
        """The later release's code files, each version bump in them left as the earlier release had it."""
        return {p: without_version_bumps(self.old.get(p), t) for p, t in self.new.items() if is_code(p)}

    @cached_property
    def changed(self) -> dict[str, str]:
        """Each changed code file -> its patch from the earlier release to the later (version bumps aside)."""
        code = {p for p in self.old if is_code(p)} | set(self.fixed_code)
        return {p: self.patch([p]) for p in sorted(code) if self.old.get(p) != self.fixed_code.get(p)}

    @cached_property
    def tests(self) -> Files:
        return {p: t for p, t in self.new.items() if is_test_path(p)}

    @cached_property
    def mixed(self) -> Files:
        """The earlier release's code with the later release's tests."""
        return {**source_only(self.old), **self.tests}

    def tests_differ(self) -> bool:
        return {p: t for p, t in self.old.items() if is_test_path(p)} != self.tests

    def fixed_files(self, code: list[str], texts: Files | None = None) -> Files:
        """These files at the later release's text (or as ``texts`` has them: a fix trimmed), a file it removed left out."""
        return {p: (texts or {}).get(p, self.fixed_code[p]) for p in code if p in self.fixed_code}

    def patch(self, code: list[str], texts: Files | None = None) -> str:
        return make_patch({p: self.old[p] for p in code if p in self.old}, self.fixed_files(code, texts))

    def with_code(self, code: list[str], texts: Files | None = None) -> Files:
        """The earlier code with these files fixed (``fixed_files``): the tree a cause's tests run on."""
        return {p: t for p, t in self.mixed.items() if p not in code} | self.fixed_files(code, texts)


def load_releases(name: str, buggy: str, fixed: str) -> Releases:
    """Both releases' sdists (downloaded once, cached); ``sdist.SdistError`` says why one cannot be had."""
    return Releases(name, buggy, fixed, sdist.tree_files(sdist.fetch(name, buggy)), sdist.tree_files(sdist.fetch(name, fixed)))


# -- running the tests ------------------------------------------------------------------------------------------------


@dataclass
class Runner:
    """Runs test files on a tree, sandboxed (pytest, the tests and the project together) in one test environment."""

    sandbox: Sandbox
    env: TestEnv

    def run(self, files: Files, tests: Files, select: list[str]) -> RepoVerdict:
        task = RepoTask(
            id="mining", problem_statement="mining", fail_to_pass=select, environment=sdist.files_layout(files), folder=Path(".")
        )
        return until_decided(lambda: run_sandboxed(self.sandbox, self.env, task, files, tests, select))


def suite_sandbox() -> Sandbox:
    isolation = probe_isolation()
    if not isolation.can_execute:
        raise MineError(f"this host cannot run the verdict: {isolation.reason}")
    return Sandbox(Limits(wall_seconds=SUITE_SECONDS, cpu_seconds=SUITE_SECONDS, reply_bytes=64 * MiB).for_validity(), isolation)


@dataclass
class Comparison:
    """The later release's tests on the earlier code (``before``) and on the later code (``after``)."""

    files: list[str]
    before: RepoVerdict
    after: RepoVerdict

    @property
    def uncollected(self) -> list[str]:
        """Test files the earlier code cannot collect (a name the earlier release lacks): none of their tests is a candidate."""
        return sorted(k for k in self.before.collect_errors if k in self.files)

    @property
    def flipped(self) -> list[str]:
        """Tests that fail (or error) on the earlier code and pass on the later, in files the earlier code collects."""
        broken = set(self.uncollected)
        return sorted(
            t
            for t, s in self.after.outcomes.items()
            if s == "PASSED" and self.before.outcomes.get(t) in FAILING and t.split("::")[0] not in broken
        )


def compare(pair: Releases, runner: Runner, tests: list[str] | None = None) -> Comparison:
    """The later release's test files on both trees; a file its own release cannot collect (a requirement missing here)
    is left out of both runs, one the earlier code cannot collect out of the second run there (``collected``)."""
    files = sdist.pytest_files(pair.tests, tests)
    after = collected(runner, pair.new, pair.tests, files)
    return Comparison(files, collected(runner, pair.mixed, pair.tests, [f for f in files if f not in after.collect_errors]), after)


def collected(runner: Runner, files: Files, tests: Files, select: list[str]) -> RepoVerdict:
    """``select``'s test files on ``files``, run again without those that do not collect: one such file stops pytest's
    whole session. The verdict of the second run, with the first run's collection errors."""
    if not select:  # every file left out already: nothing runs
        return RepoVerdict()
    first = runner.run(files, tests, select)
    broken = set(first.collect_errors) & set(select)
    if not broken or not set(select) - broken:
        return first
    second = runner.run(files, tests, [f for f in select if f not in broken])
    second.collect_errors = {**first.collect_errors, **second.collect_errors}
    return second


def suite_health(verdict: RepoVerdict, release: str) -> str:
    """What a run of a release's own suite says about the suite: why nothing can be mined from it."""
    uncollected = ""
    if verdict.collect_errors:
        key = sorted(verdict.collect_errors)[0]
        uncollected = f"{len(verdict.collect_errors)} file(s) not collected (first: {key}: {first_error_line(verdict.collect_errors[key])})"
    if verdict.error or not verdict.outcomes:
        return f"{release}'s own tests do not run here: {verdict.error or verdict.aborted or uncollected or 'no test reported'}"[:500]
    failing = sorted(t for t, s in verdict.outcomes.items() if s in FAILING)
    said = f"{len(verdict.outcomes)} tests ran on {release}'s own code, {len(failing)} failing"
    if failing:
        said += f" (first: {failing[0]}: {verdict.reason(failing[0])})"
    return (said + (f"; {uncollected}" if uncollected else ""))[:500]


def attribute(pair: Releases, runner: Runner, candidates: list[str]) -> list[tuple[Group, RepoVerdict | None]]:
    """The causes of the candidates (step 3 of the module's docstring), each with the run of its gold tree."""
    files = sorted({t.split("::")[0] for t in candidates})
    runs: dict[frozenset[str], RepoVerdict] = {}

    def run(code: list[str]) -> RepoVerdict:
        key = frozenset(code)
        if key not in runs:
            runs[key] = runner.run(pair.with_code(code), pair.tests, files)
        return runs[key]

    def passes(code: list[str], tests: list[str]) -> bool:
        return all(run(code).outcomes.get(t) == "PASSED" for t in tests)

    fixes = {f: {t for t in candidates if passes([f], [t])} for f in pair.changed}
    owned: dict[str, list[str]] = {}
    for test in candidates:
        owners = [f for f, fixed in fixes.items() if test in fixed]
        if owners:
            owned.setdefault(min(owners, key=lambda f: (lines_changed(pair.changed[f]), f)), []).append(test)
    groups: list[tuple[Group, RepoVerdict | None]] = [(Group(code=[f], fail_to_pass=tests), run([f])) for f, tests in sorted(owned.items())]
    rest = [t for t in candidates if not any(t in fixed for fixed in fixes.values())]
    code = sorted(pair.changed)
    explained = [t for t in rest if passes(code, [t])] if len(code) > 1 else []
    for path in sorted(code, key=lambda f: -lines_changed(pair.changed[f])) if explained else []:
        fewer = [c for c in code if c != path]
        if passes(fewer, explained):
            code = fewer
    if explained:
        groups.append((Group(code=code, fail_to_pass=explained), run(code)))
    unexplained = [t for t in rest if t not in explained]
    if unexplained:
        why = "no change to the code makes them pass (the later release's other files do: data, packaging)"
        groups.append((Group(code=[], fail_to_pass=unexplained, status="unexplained", detail=why), None))
    return groups


def trim(pair: Releases, runner: Runner, code: list[str], whole: RepoVerdict, files: list[str]) -> Files | None:
    """The fix in ``code`` without the changes it does not need. A run of a file's changes (in the file's order) is
    undone when every test of ``files`` that passes with the whole change (``whole``) still passes; a run that cannot
    go is halved and each half tried (delta debugging's bisection: few runs when the fix needs few of many changes), at
    most ``MAX_TRIM_RUNS`` runs in all. None when it cannot be tried: a file added or removed, or more than
    ``MAX_CHANGES`` changes in a file (a rewrite)."""
    passing = sorted(t for t, s in whole.outcomes.items() if s == "PASSED")
    texts: Files = {}
    runs = 0
    for path in code:
        old, new = pair.old.get(path), pair.fixed_code.get(path)
        if old is None or new is None or len(change_sizes(old, new)) > MAX_CHANGES:
            return None
        undone: set[int] = set()
        pending = halves(list(range(len(change_sizes(old, new)))))
        while pending and runs < MAX_TRIM_RUNS:
            chunk = pending.pop(0)
            runs += 1
            verdict = runner.run(pair.with_code(code, {**texts, path: undo(old, new, picked(undone | set(chunk)))}), pair.tests, files)
            if all(verdict.outcomes.get(t) == "PASSED" for t in passing):
                undone |= set(chunk)
            elif len(chunk) > 1:
                pending[:0] = halves(chunk)
        texts[path] = undo(old, new, picked(undone))
    return texts


def halves(chunk: list[int]) -> list[list[int]]:
    return [chunk[: len(chunk) // 2], chunk[len(chunk) // 2 :]] if len(chunk) > 1 else [chunk]


def missing_name(reason: str, source: str) -> str:
    """The public name a failing test uses that the code it runs lacks ("" when its failure is no missing name): a test
    of a function, class or argument the later release added fails so on the earlier code (a feature, not a bug)."""
    found = _MISSING_NAME.search(reason)
    if found is None or found.group(1).startswith("_"):  # a private name is the code's own business: a bug's
        return ""
    return found.group(1) if re.search(rf"\b{re.escape(found.group(1))}\b", source) else ""


def cpu_seconds() -> float:
    """CPU seconds this process and its reaped children have used (the verdict's runs are its children)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


# -- mining -----------------------------------------------------------------------------------------------------------


@dataclass
class Miner:
    name: str
    out: Path
    requirements: list[str] = field(default_factory=list)
    tests: list[str] | None = None  # test files or folders of the later release (default: pytest's naming)
    runs: int = 3
    log: Callable[[str], None] = print
    sandbox: Sandbox = field(default_factory=suite_sandbox)

    def __post_init__(self) -> None:
        self.state = self.out / _STATE / self.name
        self.state.mkdir(parents=True, exist_ok=True)
        self.ledger = self.state / "ledger.jsonl"
        self.runner = Runner(self.sandbox, ensure(self.requirements))
        # proven under the limits tasks are served with, counted in CPU time: what the tasks are does not depend on load
        self.served = Sandbox(Limits.from_env().for_validity(), self.sandbox.isolation)
        self.runtime = Runtime(TaskCatalog([]), self.served, workers=2)

    def run(self, versions: list[str]) -> MineSummary:
        """Mine every consecutive pair of ``versions`` (oldest first) not decided before."""
        if len(versions) < 2:
            raise MineError(f"{self.name}: {len(versions)} release(s) given; a pair needs two")
        started = time.monotonic()
        decided = {key for key, d in latest(read_lines(self.ledger, PairDecision)).items() if not d.undecided()}
        shutil.rmtree(self.state / "building", ignore_errors=True)  # what a stop left half built
        for buggy, fixed in zip(versions, versions[1:], strict=False):
            key = f"{buggy} -> {fixed}"
            if key in decided:
                continue
            clock = time.monotonic()
            decision = self.pair(buggy, fixed)
            decision.seconds, decision.max_lines = round(time.monotonic() - clock, 1), MAX_LINES
            append(self.ledger, decision.model_dump_json())
            causes = "; ".join(
                f"{g.status} {'+'.join(g.code) or '-'} ({len(g.fail_to_pass)} test(s)) {g.task or g.detail[:100]}" for g in decision.groups
            )
            self.log(f"{self.name} {key}: {decision.status} ({decision.seconds:.1f} s) {causes or decision.detail[:200]}")
        return self.summary(time.monotonic() - started)

    def pair(self, buggy: str, fixed: str) -> PairDecision:
        """One pair decided; whatever it raises is its reason (a pair is untrusted input: the run goes on)."""
        key = f"{buggy} -> {fixed}"
        self.forget(buggy, fixed)
        try:
            pair = load_releases(self.name, buggy, fixed)
        except sdist.SdistError as exc:
            return PairDecision(key=key, status="no-sdist", detail=str(exc)[:500])
        try:
            return self._pair(key, pair)
        except MachineBusy as exc:  # the machine's, not the pair's: what it wrote goes, the next run decides it again
            self.forget(buggy, fixed)
            return PairDecision(key=key, status="busy", detail=f"not decided, the machine was too busy: {exc}"[:500])
        except Exception as exc:  # noqa: BLE001 - recorded with its type; the next pair is mined all the same
            return PairDecision(key=key, status="error", detail=f"{type(exc).__name__}: {exc}"[:500])
        finally:
            shutil.rmtree(self.state / "building", ignore_errors=True)  # a group's folder that never became a task

    def _pair(self, key: str, pair: Releases) -> PairDecision:
        if not pair.changed:
            return PairDecision(key=key, status="no-code-change", detail=f"no code file differs between {pair.buggy} and {pair.fixed}")
        if not sdist.pytest_files(pair.tests, self.tests):
            return PairDecision(
                key=key,
                status="no-tests",
                detail=f"{pair.fixed} has no test file (test_*.py or *_test.py){' under ' + ', '.join(self.tests) if self.tests else ''}",
            )
        if not pair.tests_differ():
            return PairDecision(
                key=key, status="no-test-difference", detail=f"{pair.fixed}'s tests are {pair.buggy}'s: no test can newly fail"
            )
        if len(pair.changed) > MAX_TRIED:
            return PairDecision(
                key=key,
                status="too-large",
                detail=f"{len(pair.changed)} code files changed; a release changing more than {MAX_TRIED} is not searched",
            )
        found = compare(pair, self.runner, self.tests)
        if found.after.error or not found.after.outcomes:
            return PairDecision(key=key, status="suite-broken", detail=suite_health(found.after, pair.fixed))
        if not found.flipped:
            return PairDecision(
                key=key,
                status="no-fail-to-pass",
                detail=f"no test fails on {pair.buggy}'s code and passes on {pair.fixed}'s"
                + (f" (the run there stopped at its limit, {SUITE_SECONDS} s)" if found.before.timed_out else "")
                + f"; {suite_health(found.after, pair.fixed)}",
            )
        groups = attribute(pair, self.runner, found.flipped)
        again = self.runner.run(pair.mixed, pair.tests, sorted({t.split("::")[0] for t in found.flipped}))
        for group, after in groups:
            if group.status == "pending" and after is not None:
                self._settle_group(pair, group, found, again, after)
        valid = any(g.status == "valid" for g, _ in groups)
        return PairDecision(key=key, status="mined" if valid else "rejected", groups=[g for g, _ in groups])

    def _settle_group(self, pair: Releases, group: Group, found: Comparison, again: RepoVerdict, after: RepoVerdict) -> None:
        """Limits, stability, then the task: ``group`` is updated with what became of it."""
        missing = [missing_name(found.before.reason(t), source_of(pair.tests, t) or "") for t in group.fail_to_pass]
        if all(missing):
            group.status = "feature"
            group.detail = (
                f"every FAIL_TO_PASS test uses what {pair.buggy} lacks ({', '.join(sorted(set(missing))[:4])}): an addition, not a bug"
            )
            return
        files = sorted({t.split("::")[0] for t in group.fail_to_pass})
        texts: Files = {}
        too_large = size_problem({p: pair.changed[p] for p in group.code})
        if too_large:
            trimmed = trim(pair, self.runner, group.code, after, files)
            if trimmed is not None:
                too_large = size_problem({p: make_patch({p: pair.old[p]}, {p: trimmed[p]}) for p in group.code})
                texts, after = trimmed, self.runner.run(pair.with_code(group.code, trimmed), pair.tests, files)
            if too_large:
                group.status, group.detail = (
                    "too-large",
                    too_large + (" (after undoing the changes the fix does not need)" if trimmed else ""),
                )
                return
            group.detail = "trimmed: the changes the fix does not need are undone"
        after_again = self.runner.run(pair.with_code(group.code, texts), pair.tests, files)
        befores, afters = (found.before, again), (after, after_again)
        unstable = [
            t
            for t in group.fail_to_pass
            if any(b.outcomes.get(t) not in FAILING for b in befores) or any(a.outcomes.get(t) != "PASSED" for a in afters)
        ]
        f2p = [t for t in group.fail_to_pass if t not in unstable]
        if not f2p:
            group.status, group.detail = (
                "unstable",
                f"no FAIL_TO_PASS test fails twice before and passes twice after: {', '.join(unstable[:4])}",
            )
            return
        p2p = sorted(
            t
            for t in found.before.outcomes
            if t.split("::")[0] in files and t not in group.fail_to_pass and all(v.outcomes.get(t) == "PASSED" for v in (*befores, *afters))
        )
        group.fail_to_pass = f2p
        if unstable:
            group.detail = f"left out, not stable over two runs: {', '.join(unstable[:4])}"
        try:
            self._task(pair, group, p2p, found.before, texts)
        except MachineBusy:
            raise
        except Exception as exc:  # noqa: BLE001 - one cause's task that cannot be built; the pair's other causes still count
            group.status, group.detail = "error", f"{type(exc).__name__}: {exc}"[:500]

    def _task(self, pair: Releases, group: Group, p2p: list[str], before: RepoVerdict, texts: Files) -> None:
        stems = [Path(p).parent.name if Path(p).stem == "__init__" else Path(p).stem for p in group.code]  # a package by its name
        task_id = f"{pair.name}-{pair.fixed}".replace(".", "_") + "-" + "-".join(stems)
        held = hold_out(task_id, group.fail_to_pass, [], [], defines(pair.new))
        built = self._imported(pair, group, p2p, before, texts, task_id, held)
        if built is None:
            return
        folder, task = built
        clock, cpu = time.monotonic(), cpu_seconds()
        report = self._validated(task)
        corrected = None if report.ok else self._without_failing_p2p(task, report)
        if corrected is not None:
            task, report = corrected, self._validated(corrected)
        uncollected = [] if report.ok else self.visibly_uncollected(task, report)
        if uncollected:  # once more, those held out: the grading tests alone define them
            shutil.rmtree(folder)
            built = self._imported(pair, group, p2p, before, texts, task_id, held + uncollected)
            if built is None:
                return
            folder, task = built
            report = self._validated(task)
        validation = ValidationRecord(
            runs=self.runs, cpu_seconds=round(cpu_seconds() - cpu, 2), wall_seconds=round(time.monotonic() - clock, 2)
        )
        if not report.ok:
            group.status = "invalid"
            group.detail = "; ".join(f"{c.name}: {c.detail}" if c.detail else c.name for c in report.checks if not c.ok)[:500]
            shutil.rmtree(folder)
            return
        function = next((w.function for w in task.gold_lines if w.function), "")
        difficulty = estimate(task, function)
        record(folder, difficulty)
        final = self.out / task_id
        shutil.rmtree(final, ignore_errors=True)
        folder.rename(final)
        entry_ = CatalogTask(
            id=task_id, library=pair.name, source="mined",
            pair=ReleasePair(buggy=pair.buggy, fixed=pair.fixed, code=group.code, test_files=sorted({t.split("::")[0] for t in task.fail_to_pass})),
            fail_to_pass=task.fail_to_pass, pass_to_pass=task.pass_to_pass, held_out=task.held_out, sandboxed=task.sandboxed or None,
            requirements=task.requirements, validation=validation, difficulty=difficulty.level, difficulty_score=difficulty.score,
            problem_statement=task.problem_statement,
        )  # fmt: skip
        self.add_to_catalog(entry_)
        group.status, group.task = "valid", task_id

    def _validated(self, task: RepoTask) -> TaskValidation:
        """``task`` validated over ``runs`` runs; MachineBusy when the machine starved a run in every attempt."""
        report = validate_task(self.runtime, task, runs=self.runs)
        if report.busy:
            raise MachineBusy(report.busy)
        return report

    def _imported(
        self, pair: Releases, group: Group, p2p: list[str], before: RepoVerdict, texts: Files, task_id: str, held: list[str]
    ) -> tuple[Path, RepoTask] | None:
        """The group's task imported and settled, its folder under the miner's state; None, with the group's status and
        why, when it cannot be valid or trusted (the folder removed)."""
        instance = Instance(
            instance_id=task_id, repo=f"pypi/{pair.name}", version=pair.buggy, patch=pair.patch(group.code, texts), test_patch=self.test_patch(pair, group),
            problem_statement="(written below, once the held-out tests are known)", requirements=self.requirements,
            fail_to_pass=group.fail_to_pass, pass_to_pass=p2p, held_out=held,
        )  # fmt: skip
        folder = import_instance(instance, None, self.state / "building", pypi=f"{pair.name}=={pair.buggy}", say=self.log)
        self._describe(folder, pair, before)
        settled = settle(self.served, folder)
        if settled.busy:
            raise MachineBusy(settled.busy)
        if settled.problems:
            group.status, group.detail = "invalid", "; ".join(settled.problems)[:500]
            shutil.rmtree(folder)
            return None
        task = settled.task
        if not task.trusted:  # known now: no validation can make it trusted
            boxed = [t for t in task.fail_to_pass if t in task.sandboxed]
            why = settled.placement.split_reasons.get(boxed[0], "")
            group.status = "untrusted"
            group.detail = f"{len(boxed)} FAIL_TO_PASS test(s) the split cannot run (sandboxed), {boxed[0]}: {why}"[:500]
            shutil.rmtree(folder)
            return None
        return folder, task

    def visibly_uncollected(self, task: RepoTask, report: TaskValidation) -> list[str]:
        """Listed tests the visible tests never collect, when that is why the gold is not resolved: a parametrised case
        that only the later release's changed test data defines (a new spec example) is no test the agent's tree has,
        so it is held out (the importer then holds out its function's other cases too). Empty otherwise."""
        if "gold patch is resolved under the graded run" not in [c.name for c in report.checks if not c.ok]:
            return []
        visible = until_decided(lambda: run_graded(self.served, task, task.gold_files)).outcomes  # the visible part, as the agent runs it
        return [t for t in task.fail_to_pass + task.pass_to_pass if t not in task.held_out and t not in visible]

    def _without_failing_p2p(self, task: RepoTask, report: TaskValidation) -> RepoTask | None:
        """A task whose one fault is PASS_TO_PASS tests the buggy tree fails under the verdict (they passed sandboxed
        while mining, so they were listed): by SWE-bench's definition they are no PASS_TO_PASS tests. They are dropped,
        each with why in task.json's "dropped", for one more validation. None when that is not the fault."""
        if [c.name for c in report.checks if not c.ok] != ["buggy state passes every PASS_TO_PASS test"]:
            return None
        verdict = until_decided(lambda: run_tests(self.served, task, task.files))  # what the validator runs for the buggy state
        broken = {
            t: f"fails on the buggy tree under the verdict: {verdict.reason(t)}"
            for t in task.pass_to_pass
            if verdict.outcomes.get(t) != "PASSED"
        }
        if not broken:
            return None
        path = task.folder / "task.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        data["PASS_TO_PASS"] = [t for t in task.pass_to_pass if t not in broken]
        data["HELD_OUT"] = [t for t in task.held_out if t not in broken]
        data["dropped"] = {**data.get("dropped", {}), **broken}
        if not data["HELD_OUT"]:
            del data["HELD_OUT"]
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        return load_repo_task(task.folder)

    @staticmethod
    def test_patch(pair: Releases, group: Group) -> str:
        """The group's test files, and the test helpers and data the later release changed (a conftest, tests/files/...),
        from the earlier release's to the later's. Other test modules stay out: each one a patch touches is collected."""
        modules = {t.split("::")[0] for t in group.fail_to_pass}
        touched = sorted(modules | changed_helpers(pair.old, pair.new))
        return make_patch({p: pair.old[p] for p in touched if p in pair.old}, {p: pair.new[p] for p in touched})

    def _describe(self, folder: Path, pair: Releases, before: RepoVerdict) -> None:
        """The task's name, tags and problem statement (step 7 of the module's docstring), from its visible tests."""
        task = load_repo_task(folder)
        shown = task.visible_fail_to_pass
        notes = entry(pair.new, pair.fixed, pair.buggy)
        if notes:
            statement = f"A bug of {pair.name} {pair.buggy}, fixed in its next release, whose changelog entry says (it may list other changes too):\n\n{notes}"
            if shown:
                statement += "\n\nTests that fail: " + ", ".join(shown)
        else:
            statement = problem_statement(pair.name, shown or task.fail_to_pass, before, closing=MINED_CLOSING)
        data = json.loads((folder / "task.json").read_text(encoding="utf-8"))
        data["name"] = f"{pair.name} {pair.buggy}: " + (f"{shown[0].split('::')[-1]} fails" if shown else f"a bug fixed in {pair.fixed}")
        data["tags"] = [*data["tags"], "mined", pair.name]
        data["problem_statement"] = statement
        (folder / "task.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")

    def add_to_catalog(self, task: CatalogTask) -> None:
        """Put ``task`` into OUT/mined.jsonl (replacing a line of the same id)."""
        self._rewrite_catalog(lambda tasks: [t for t in tasks if t.id != task.id] + [task])

    def forget(self, buggy: str, fixed: str) -> None:
        """What an earlier decision of this pair wrote (its ledger line lost to a stop): its tasks' lines and folders go,
        so a pair decided again leaves only what it decides now."""

        def stale(task: CatalogTask) -> bool:
            return task.library == self.name and task.pair is not None and (task.pair.buggy, task.pair.fixed) == (buggy, fixed)

        for task in filter(stale, read_tasks(self.out / CATALOG)):
            shutil.rmtree(self.out / task.id, ignore_errors=True)
        self._rewrite_catalog(lambda tasks: [t for t in tasks if not stale(t)])

    def _rewrite_catalog(self, change: Callable[[list[CatalogTask]], list[CatalogTask]]) -> None:
        """OUT/mined.jsonl rewritten whole, under a lock: other miners share the file."""
        path = self.out / CATALOG
        with file_lock(self.out / f"{CATALOG}.lock"):
            partial = path.with_suffix(f".{os.getpid()}.tmp")
            write_tasks(partial, change(read_tasks(path)))
            partial.replace(path)

    def summary(self, seconds: float) -> MineSummary:
        decisions = list(latest(read_lines(self.ledger, PairDecision)).values())
        by_status: dict[str, int] = {}
        by_group: dict[str, int] = {}
        for d in decisions:
            by_status[d.status] = by_status.get(d.status, 0) + 1
            for g in d.groups:
                by_group[g.status] = by_group.get(g.status, 0) + 1
        tasks = [g.task for d in decisions for g in d.groups if g.status == "valid"]
        return MineSummary(
            library=self.name, pairs=len(decisions), tasks=tasks, by_status=by_status, by_group=by_group, seconds=round(seconds, 1)
        )


def latest(decisions: list[PairDecision]) -> dict[str, PairDecision]:
    """Each pair's last decision (the ledger only grows: a pair decided again has a later line)."""
    return {d.key: d for d in decisions}


def last_releases(name: str, count: int) -> list[str]:
    """The last ``count`` final releases of ``name`` on PyPI, oldest first."""
    if count < 2:
        raise MineError(f"--releases {count}: a pair needs two releases")
    return sdist.releases(name)[-count:]
