"""Real libraries' test suites under plain pytest and under the verdict, side by side.

    lib = LIBRARIES["cachetools"]
    tree = fetch_sdist(lib)                         # the sdist from PyPI, cached and extracted once
    env = ensure(lib.requirements)                  # pytest + the suite's requirements (the verdict's own test env)
    plain = run_plain(lib, tree, env, suite_files(lib, tree))
    task = build_task(lib, tree, folder, plain.collected)               # every test under the split
    placement = place(sandbox, task, files=task.files)                   # env.authoring.placement: what the split cannot run
    verdict, seconds = run_verdict(sandbox, with_sandboxed(task, placement.sandboxed))
    result = compare(plain, verdict)                # which tests pass under plain pytest but not under the verdict

Why: the verdict runs pytest and the tests in a trusted process and the project's code in a sandbox, reached
through proxies (the split); a test the split cannot run is placed in the task's ``sandboxed`` list and runs with the
project in one sandbox child instead (forgeable in principle, so counted apart: ``Comparison.under_split``). How much
of real test suites each mode runs is measured here, on sdists of small pure-Python libraries (issue 19):
``bench/bench_compat.py`` prints the figures for all of them; ``tests/test_compat_real.py`` pins one library's result.

Fairness of the comparison:
- both sides run the same files: the sdist tree is copied into the task's ``repo/`` and plain pytest runs there;
- both use the same test environment (``env.verdict.testenv.ensure``: a clean venv with pytest and the listed
  requirements, nothing of the server) and the same neutral pytest settings as the verdict's host (an empty ini,
  ``-W ignore::DeprecationWarning``, ``--tb=short``): the verdict never reads the project's pytest config, so
  neither does the baseline, and a difference is due to the split, not to configuration;
- plain pytest writes no bytecode (``PYTHONDONTWRITEBYTECODE=1``), as the sandbox compiles the project afresh.

No third-party source is committed: sdists are downloaded at run time with ``pip download`` (PyPI) into
``ENV_SDIST_CACHE`` (default ``~/.cache/agentdebugger/sdists``). Nothing touches the network at import time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from env.authoring import sdist
from env.project import RepoTask, load_repo_task
from env.sandbox.isolation import probe_isolation
from env.sandbox.limits import Limits
from env.sandbox.runner import Sandbox
from env.verdict.hosts import HOST
from env.verdict.outcome import parse_records
from env.verdict.repo_judge import RepoVerdict, run_tests
from env.verdict.testenv import TestEnv

PLAIN_SECONDS = 900.0
NEUTRAL_ARGS = ("-q", "--tb=short", "-W", "ignore::DeprecationWarning", "-p", "no:cacheprovider")  # as the host's
OK = ("PASSED", "XFAIL")  # what "passes": SWE-bench's FAIL_TO_PASS rule (env.verdict.repo_judge.f2p_ok)


@dataclass(frozen=True)
class Library:
    """One library: an exact sdist, where its code and tests are, what its tests need."""

    name: str  # the PyPI name
    version: str  # exact
    tests: tuple[str, ...]  # directories or files, relative to the sdist root, holding the test files to run
    source_root: str = "."  # the import root (PYTHONPATH) inside the sdist: "src" for a src layout
    requirements: tuple[str, ...] = ()  # what the tests import besides pytest and the library (exact pins)
    exclude: tuple[str, ...] = ()  # test files left out of both runs (each with its reason in ``why``)
    why: str = ""

    @property
    def pin(self) -> str:
        return f"{self.name}=={self.version}"

    @property
    def environment(self) -> dict[str, str]:
        return {} if self.source_root == "." else {"PYTHONPATH": self.source_root}


HYPOTHESIS = "hypothesis==6.112.2"
LIBRARIES: dict[str, Library] = {
    lib.name: lib
    for lib in [
        Library("cachetools", "5.5.0", ("tests",), "src", why="src layout; classes subclassed and decorated by the tests"),
        Library("toolz", "1.0.0", ("toolz/tests",), why="tests inside the package; curried functions, pickling, inspect.signature"),
        Library("tabulate", "0.9.0", ("test",), why="one big module of string formatting; a CLI test that runs the module as a script"),
        Library("pyparsing", "3.2.0", ("tests",), requirements=("railroad-diagrams==3.0.1", "jinja2==3.1.4"),
                why="large grammar objects built by the tests, operator overloading, the examples/ folder and data files "
                    "next to the tests (matplotlib, for one file, is left out of the requirements)"),
        Library("more-itertools", "10.5.0", ("tests",), why="iterators and generators crossing the split, many small tests"),
        Library("six", "1.16.0", ("test_six.py",), requirements=(), why="a single module at the root, module-level magic (moves, meta-paths)"),
        Library("idna", "3.10", ("tests",), why="codecs registered by the library, a large data table, a data file read by the tests"),
        Library("semver", "3.0.2", ("tests",), "src", requirements=("packaging==24.1",),
                why="src layout; the tests subclass the library's Version class and inspect its functions"),
        Library("jmespath", "1.0.1", ("tests",), why="JSON compliance files read by the tests, a parser and visitor objects"),
        Library("parse", "1.20.2", ("tests",), why="a single module; regex-backed results and custom type converters passed in by the tests"),
        Library("inflection", "0.5.1", ("test_inflection.py",), why="a test file at the root; heavily parametrised pure functions"),
        Library("python-dateutil", "2.9.0.post0", ("tests",), "src", requirements=("six==1.16.0", HYPOTHESIS, "freezegun==1.5.1", "pytz==2024.2"),
                why="src layout; datetimes and tzinfo objects crossing the split, hypothesis, freezegun, a zoneinfo tarball"),
        Library("attrs", "24.2.0", ("tests",), "src", requirements=(HYPOTHESIS, "cloudpickle==3.0.0", "pympler==1.1"),
                exclude=("tests/test_mypy.yml", "tests/test_pyright.py"),
                why="class decorators applied to classes the tests define; hypothesis; test_pyright.py needs pyright"),
    ]
}


# -- sdists ------------------------------------------------------------------------------------------


def fetch_sdist(lib: Library) -> Path:
    """The extracted sdist of ``lib`` (env.authoring.sdist: downloaded from PyPI on first use, then read from the cache)."""
    return sdist.fetch(lib.name, lib.version)


def suite_files(lib: Library, tree: Path) -> list[str]:
    """The test files of ``lib`` to run, relative to the sdist root (pytest's default naming, minus ``exclude``)."""
    found: set[str] = set()
    for entry in lib.tests:
        path = tree / entry
        candidates = [path] if path.is_file() else list(path.rglob("*.py"))
        found |= {p.relative_to(tree).as_posix() for p in candidates if sdist.PYTEST_FILE.match(p.name)}
    return sorted(found - set(lib.exclude))



# -- the task the verdict runs ----------------------------------------------------------------------


def build_task(lib: Library, tree: Path, folder: Path, test_ids: list[str]) -> RepoTask:
    """A repository task holding the whole sdist (``repo/``) whose FAIL_TO_PASS lists ``test_ids``.

    The verdict collects only the files FAIL_TO_PASS names, as it would for a SWE-bench task; the gold patch is empty
    (nothing here is graded against a fix)."""
    repo = folder / "repo"
    if not repo.exists():
        shutil.copytree(tree, repo, ignore=shutil.ignore_patterns(sdist.COMPLETE, "__pycache__", "*.pyc"))
    (folder / "gold.patch").write_text("", encoding="utf-8")
    data = {
        "id": f"compat-{lib.name}",
        "problem_statement": f"The test suite of {lib.pin}, run as it is.",
        "FAIL_TO_PASS": test_ids,
        "PASS_TO_PASS": [],
        "environment": lib.environment,
        "requirements": list(lib.requirements),
    }
    (folder / "task.json").write_text(json.dumps(data, indent=1), encoding="utf-8")
    return load_repo_task(folder)


def with_sandboxed(task: RepoTask, sandboxed: list[str]) -> RepoTask:
    """The same task whose ``sandboxed`` lists these tests (a placement, or every test of a file to time that mode)."""
    return task.model_copy(update={"sandboxed": sorted(sandboxed)})


def verdict_sandbox(wall_seconds: float = 600.0) -> Sandbox:
    """A sandbox with the server's limits, save the wall clock and CPU time: one run here is a whole test session."""
    isolation = probe_isolation()
    if not isolation.can_execute:
        raise RuntimeError(f"this host cannot run sandboxed code: {isolation.reason}")
    return Sandbox(Limits(wall_seconds=wall_seconds, cpu_seconds=int(wall_seconds)), isolation)


def run_verdict(sandbox: Sandbox, task: RepoTask, select: list[str] | None = None) -> tuple[RepoVerdict, float]:
    """The verdict on the unmodified project (its own files), and the wall-clock seconds the call took."""
    started = time.perf_counter()
    verdict = run_tests(sandbox, task, task.files, select)
    return verdict, time.perf_counter() - started


# -- plain pytest --------------------------------------------------------------------------------------

# Loaded into plain pytest with -p: the verdict's own recorder (env/verdict/host/pytest_host.py), so both sides
# apply one set of status rules; the project runs in this process, so no request is counted.
_RECORDER = '''
import json, os

from adbg_host.pytest_host import Recorder

_out = open(os.environ["ADBG_COMPAT_RESULTS"], "w", encoding="utf-8")


class _InProcess:
    ops = 0


def _emit(record):
    _out.write(json.dumps(record) + "\\n")
    _out.flush()


def pytest_configure(config):
    config.pluginmanager.register(Recorder(_emit, None, _InProcess()), "adbg-compat-recorder")
'''


@dataclass
class PlainRun:
    outcomes: dict[str, str] = field(default_factory=dict)
    excerpts: dict[str, str] = field(default_factory=dict)
    collected: list[str] = field(default_factory=list)
    collect_errors: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    exit_code: int = 0
    tail: str = ""  # the end of pytest's output, when something went wrong


def plugin_dir() -> Path:
    # One folder per checkout, in the shared cache: each links to its own trusted host package. A link left by a
    # checkout since removed or moved (a dangling one) is replaced, atomically, never used.
    target = HOST.resolve()
    folder = sdist.sdist_cache() / "plugin" / hashlib.sha256(str(target).encode()).hexdigest()[:16]
    path = folder / "adbg_compat_recorder.py"
    host = folder / "adbg_host"  # the trusted test process's package, as the server starts it
    if not (host.is_symlink() and host.resolve() == target):
        folder.mkdir(parents=True, exist_ok=True)
        link = folder / f".adbg_host.{os.getpid()}.tmp"
        with contextlib.suppress(FileNotFoundError):
            link.unlink()
        link.symlink_to(target, target_is_directory=True)
        os.replace(link, host)
    if not path.is_file() or path.read_text(encoding="utf-8") != _RECORDER:
        folder.mkdir(parents=True, exist_ok=True)
        fd, partial = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(_RECORDER)
        os.replace(partial, path)
    return folder


def run_plain(lib: Library, root: Path, env: TestEnv, files: list[str]) -> PlainRun:
    """Plain pytest on ``files`` (relative to ``root``, a copy of the sdist) in the test environment ``env``."""
    with tempfile.TemporaryDirectory(prefix="adbg-compat-") as scratch:
        ini = Path(scratch, "pytest.ini")
        ini.write_text("[pytest]\n")
        results = Path(scratch, "results.jsonl")
        environ = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.environ.get("HOME", scratch),
            "PYTHONPATH": f"{root / lib.source_root}:{plugin_dir()}",
            "PYTHONDONTWRITEBYTECODE": "1",
            "ADBG_COMPAT_RESULTS": str(results),
        }
        command = [str(env.python), "-m", "pytest", *NEUTRAL_ARGS, "--rootdir", str(root), "-c", str(ini), "-p", "adbg_compat_recorder", *files]
        started = time.perf_counter()
        done = subprocess.run(command, cwd=root, env=environ, capture_output=True, text=True, timeout=PLAIN_SECONDS)
        recorded = parse_records(results.read_text(encoding="utf-8") if results.exists() else "")
        run = PlainRun(
            outcomes=dict(recorded.outcomes), excerpts=recorded.excerpts, collected=recorded.collected,
            collect_errors=recorded.collect_errors, seconds=time.perf_counter() - started, exit_code=done.returncode,
        )
        if done.returncode not in (0, 1) or not run.collected:
            run.tail = (done.stdout + done.stderr)[-1500:]
    return run


# -- comparing -------------------------------------------------------------------------------------


def normalise(reason: str, width: int = 160) -> str:
    """A reason with what varies between instances blurred (addresses, object reprs), for grouping."""
    reason = re.sub(r"0x[0-9a-fA-F]+", "0x…", reason)
    reason = re.sub(r"(cannot pass an? \S+ to the project's code): .*", r"\1", reason)  # the rest is the same advice
    return reason if len(reason) <= width else reason[: width - 1] + "…"


def error_kind(reason: str) -> str:
    """The exception's name in a reason line ("AssertionError" for a bare ``assert`` line)."""
    if reason.startswith("assert "):
        return "AssertionError"
    match = re.match(r"^([A-Za-z_][\w.]*)(:|$)", reason)
    name = match.group(1).rpartition(".")[2] if match else ""
    return name if name[:1].isupper() else normalise(reason, 48)  # not an exception: pytest's own words


@dataclass
class Comparison:
    collected: int  # tests plain pytest collected
    passing: list[str]  # tests passing under plain pytest
    also_passing: list[str]  # ... that also pass under the verdict
    under_split: int  # collected tests the verdict ran under the split
    lost: dict[str, tuple[str, str]]  # test id -> (verdict status, reason): passing under plain pytest only
    gained: list[str]  # passing under the verdict only

    @property
    def share(self) -> float:
        return len(self.also_passing) / len(self.passing) if self.passing else 1.0


def ran_under_split(verdict: RepoVerdict, test_id: str) -> bool:
    """Whether the verdict ran this test with the project's code in the sandbox and pytest outside: it reported an
    outcome whose trust is "split" (not one from a sandboxed run, where the task placed the tests the split cannot
    run). A test it never reports ran nowhere."""
    return test_id in verdict.outcomes and verdict.trust(test_id) == "split"


def compare(plain: PlainRun, verdict: RepoVerdict) -> Comparison:
    def plain_status(test: str) -> str:
        return plain.outcomes.get(test, "ERROR")

    def verdict_status(test: str) -> str:
        return verdict.outcomes.get(test, "NOT RUN")  # a unittest test whose subtests failed is FAILED on both sides

    passing = [t for t in plain.collected if plain_status(t) in OK]
    lost: dict[str, tuple[str, str]] = {}
    for test in passing:
        status = verdict_status(test)
        if status in OK:
            continue
        lost[test] = (status, verdict.reason(test))
    return Comparison(
        collected=len(plain.collected),
        passing=passing,
        also_passing=[t for t in passing if t not in lost],
        under_split=sum(ran_under_split(verdict, t) for t in plain.collected),
        lost=lost,
        gained=[t for t in plain.collected if plain_status(t) not in OK and verdict_status(t) in OK],
    )
