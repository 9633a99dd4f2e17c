"""Surveys a PyPI release for the catalog: is it pure Python, does its suite run offline, sandboxed and under the split?

    python -m env.authoring.catalog.survey parse==1.20.2 --topic parsing [--split S] [--requires PIN ...]
        [--tests PATH ...] [--releases N] [--manifest catalog/libraries.json]     # qualifies: the entry is written
    python -m env.authoring.catalog.survey --table                               # the table of docs/catalog-libraries.md

What a library must show, measured here (exit 0 and its ``LibraryEntry`` appended to, or replaced in, the manifest;
exit 1 and the reason otherwise, the manifest untouched):
1. an sdist on PyPI (``env.authoring.sdist``), whose sha256 matches the manifest's pin if it has one;
2. pure Python: no C, C++, Cython or Rust source outside its tests and docs, and no build of an extension declared
   (``ext_modules``, ``Extension(``, ``cythonize``, ``cffi_modules``, a Rust or CMake build backend) — even an
   optional speed-up: synthesis plants bugs in Python code, and a compiled twin would hide them;
3. test files by pytest's naming (or ``--tests``); a file that does not even collect offline is left out and said so;
4. the suite run three ways on the sdist's text files (what synthesis sees), in the verdict's test environment
   (``env.verdict.testenv.ensure``): plain pytest offline (in a new network namespace: no interface but a downed
   loopback), then as ``env.authoring.baseline`` runs it: sandboxed with coverage (no socket at all), and the
   tests passing there under the split. The *trusted* tests pass both sandboxed and under the split while reaching
   the project's code: a library qualifies with at least ``BAR`` of them and a plain offline run of at most
   ``SUITE_CPU_SECONDS`` CPU seconds (CPU, not wall time: the verdict does not depend on the machine's load). The
   sandboxed and split runs count CPU time too; one the machine starved in both attempts decides nothing (the
   record says "not decided, the machine was too busy", and a survey run again decides it).

Each survey's measurements (counts, seconds, the failures grouped by where and why) go to ``survey.json`` beside
the manifest, refusals included: ``--table`` prints both from it. The previous ``--releases`` final releases that
have an sdist are pinned too (``sdists``: what ``env.authoring mine`` downloads), each by its sha256.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Literal

from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, Field

from env.authoring import sdist
from env.authoring.baseline import COVERAGE, library_task, write_tree
from env.authoring.catalog.manifest import SPLITS, LibraryEntry, Split, read_libraries, write_libraries
from env.authoring.library import Library, SynthesisError, load_library
from env.patches import Files
from env.project import is_test_path, source_only
from env.sandbox.isolation import probe_isolation
from env.sandbox.limits import Limits, MiB
from env.sandbox.runner import Sandbox
from env.verdict.busy import MachineBusy, until_decided
from env.verdict.outcome import RepoVerdict, first_error_line
from env.verdict.repo_judge import run_tests
from env.verdict.sandboxed import run_sandboxed
from env.verdict.testenv import TestEnv, TestEnvError, ensure

BAR = 20  # trusted tests a library needs: enough for synthesis to plant bugs its own suite catches, with some held out
SUITE_CPU_SECONDS = 120.0  # the plain offline suite's CPU time: every task of the library runs it several times
PLAIN_WALL_SECONDS = 600.0  # a plain run still going after this is stopped (a hang); not what qualifies a library
RUN_SECONDS = 300.0  # the sandbox's wall and CPU limits for one verdict run, as synthesis sets them
RELEASES = 5  # previous releases pinned by default, for mining
DOWNLOADS = 3  # previous releases downloaded at once
VALIDATION_SHARE = 0.18  # of the libraries outside the test split: about 15% of them all, the test split being ~15%
GROUPS_SHOWN = 8  # failure groups kept per place (offline, sandboxed, split)
REASON_SHOWN = 300  # characters of a refusal's reason in the table
NATIVE_SOURCE = re.compile(r"\.(c|cc|cpp|cxx|pyx|pxd|rs)$")
NATIVE_BUILD = re.compile(
    r"\b(ext_modules|Extension\(|cythonize|cffi_modules|setuptools_rust|RustExtension|maturin|scikit_build|mesonpy)\b"
)
BUILD_FILES = ("setup.py", "setup.cfg", "pyproject.toml")
_NOT_SHIPPED = {"docs", "doc", "examples", "example", "benchmarks", "bench"}  # folders no import reaches

Where = Literal["offline", "sandboxed", "split"]


class Failure(BaseModel):
    """Tests that failed in one place for one reason: how many, one of them, and the reason's first line."""

    where: Where
    reason: str
    tests: int
    example: str


class SurveyRecord(BaseModel):
    """What the survey of one release measured: the numbers behind its manifest entry, or why it has none."""

    name: str
    version: str
    qualified: bool
    reason: str = Field("", description="why the library was refused (empty when it qualified)")
    topic: str = ""
    split: str = ""
    sha256: str = ""
    test_files: int = 0
    collected: int = Field(0, description="tests plain pytest collected offline")
    offline_passed: int = 0
    sandboxed_passed: int = Field(0, description="of the tests passing offline, those passing sandboxed (with coverage)")
    split_passed: int = Field(0, description="of those, the ones passing under the split")
    trusted: int = Field(0, description="passing sandboxed and under the split, each reaching the project's code")
    covered_lines: int = Field(0, description="source lines the trusted tests execute: where synthesis can plant bugs")
    offline_seconds: float = 0.0
    offline_cpu_seconds: float = 0.0
    sandboxed_seconds: float = 0.0
    split_seconds: float = 0.0
    dropped: dict[str, str] = Field(default_factory=dict, description="test files left out: they do not collect offline")
    failures: list[Failure] = Field(default_factory=list)
    releases: dict[str, str] = Field(default_factory=dict, description="previous releases not pinned, and why")

    @property
    def pin(self) -> str:
        return f"{self.name}=={self.version}"


class SurveyError(Exception):
    """Why a library does not qualify (the survey reports it and writes no entry)."""


# -- the pieces --------------------------------------------------------------------------------------


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def default_split(name: str) -> Split:
    """A library's split when none is given: ``validation`` for a fixed share of names by hash, else ``train``. The
    ``test`` split is given by hand (``--split test``): the libraries of bench/real_bugs.py, whose mined bugs are its core."""
    draw = int(hashlib.sha256(f"split:{canonical(name)}".encode()).hexdigest()[:8], 16) / 16**8
    return "validation" if draw < VALIDATION_SHARE else "train"


def native_parts(files: Files) -> list[str]:
    """What makes a project not pure Python: compiled-language sources it ships outside tests and docs, and the build
    files declaring an extension. Empty for a pure-Python project."""
    found = [p for p in files if NATIVE_SOURCE.search(p) and not is_test_path(p) and not _NOT_SHIPPED & set(p.split("/")[:-1])]
    found += [f"{p} (declares {m.group(1)})" for p in BUILD_FILES if p in files and (m := NATIVE_BUILD.search(files[p]))]
    return sorted(found)


def normalise(reason: str, width: int = 160) -> str:
    """A reason with what varies between runs blurred (addresses, the run's scratch and test environment paths), cut to
    ``width``: for grouping, and so that no host path is recorded."""
    reason = re.sub(r"0x[0-9a-fA-F]+", "0x…", " ".join(reason.split()))
    reason = re.sub(r"/tmp/adbg-survey-\w+/repo/|/dev/shm/adbg-[\w-]+/adbg-[\w.-]+/", "", reason)
    reason = re.sub(r"\S*/test-envs/[0-9a-f]+/", "<test env>/", reason)
    return reason if len(reason) <= width else reason[: width - 1] + "…"


def last_error(output: str) -> str:
    """The last line of pytest's output naming an error (what stopped a session that ran no test), else its last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if re.search(r"(Error|Exception)\b", line)]
    return errors[-1] if errors else (lines[-1] if lines else "")


def group(where: Where, reasons: dict[str, str]) -> list[Failure]:
    """Failed tests grouped by reason, the largest groups first, at most ``GROUPS_SHOWN`` (the rest summed in one)."""
    by_reason: dict[str, list[str]] = {}
    for test, reason in sorted(reasons.items()):
        by_reason.setdefault(normalise(reason), []).append(test)
    ranked = sorted(by_reason.items(), key=lambda item: (-len(item[1]), item[0]))
    groups = [Failure(where=where, reason=r, tests=len(ts), example=ts[0]) for r, ts in ranked[:GROUPS_SHOWN]]
    rest = [t for _, ts in ranked[GROUPS_SHOWN:] for t in ts]
    if rest:
        groups.append(Failure(where=where, reason=f"{len(ranked) - GROUPS_SHOWN} other reasons", tests=len(rest), example=rest[0]))
    return groups


# -- plain pytest, offline ---------------------------------------------------------------------------

# Loaded into plain pytest with -p: each phase's outcome and the first line of its failure, one JSON line each.
_RECORDER = """
import json, os

_out = open(os.environ["ADBG_SURVEY_RESULTS"], "w", encoding="utf-8")


def _line(report):
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr or "")
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[0][:300] if lines else ""


def _emit(record):
    _out.write(json.dumps(record) + "\\n")
    _out.flush()


def pytest_collectreport(report):
    if report.failed:
        _emit({"collect_error": report.nodeid, "reason": _line(report)})


def pytest_runtest_logreport(report):
    _emit({"test": report.nodeid, "when": report.when, "outcome": report.outcome, "xfail": hasattr(report, "wasxfail"),
           "reason": _line(report) if report.failed else ""})
"""


@dataclasses.dataclass
class PlainRun:
    outcomes: dict[str, str] = dataclasses.field(default_factory=dict)  # test id -> PASSED, FAILED, ERROR, SKIPPED, XFAIL
    reasons: dict[str, str] = dataclasses.field(default_factory=dict)
    collect_errors: dict[str, str] = dataclasses.field(default_factory=dict)
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    tail: str = ""


def read_plain(text: str) -> PlainRun:
    """The recorder's lines as each test's status (a failed setup or teardown is an ERROR, as pytest counts it)."""
    run = PlainRun()
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if "collect_error" in record:
            run.collect_errors[record["collect_error"] or "<session>"] = record.get("reason", "")
            continue
        test, when, outcome = record["test"], record["when"], record["outcome"]
        before = run.outcomes.get(test)
        if outcome == "failed":
            run.outcomes[test] = "FAILED" if when == "call" and before != "ERROR" else "ERROR"
            run.reasons.setdefault(test, record.get("reason", ""))
        elif outcome == "skipped" and before is None:
            run.outcomes[test] = "XFAIL" if record.get("xfail") else "SKIPPED"
        elif outcome == "passed" and when == "call" and before is None:
            run.outcomes[test] = "XPASS" if record.get("xfail") else "PASSED"
    return run


def offline_prefix() -> list[str]:
    """A command prefix that runs without network: a new user and network namespace (``unshare -rn``); empty if this
    host cannot make one (the sandboxed run, which has no socket at all, is then the only offline proof)."""
    tool = shutil.which("unshare")
    if tool is None:
        return []
    done = subprocess.run([tool, "-rn", "true"], capture_output=True, timeout=30)
    return [tool, "-rn"] if done.returncode == 0 else []


def run_plain(lib: Library, env: TestEnv, files: list[str]) -> PlainRun:
    """Plain pytest on ``files`` of a fresh copy of the library's text files, offline, with the verdict's neutral settings
    (an empty ini: the project's pytest config is never read by the verdict either) and no bytecode written."""
    with tempfile.TemporaryDirectory(prefix="adbg-survey-") as scratch:
        root, extra = Path(scratch, "repo"), Path(scratch, "plugin")
        write_tree(root, lib.files)
        extra.mkdir()
        (extra / "adbg_survey_recorder.py").write_text(_RECORDER, encoding="utf-8")
        (extra / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        results = Path(scratch, "results.jsonl")
        environ = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": scratch,
            "PYTHONPATH": f"{root / lib.source_root}:{extra}",
            "PYTHONDONTWRITEBYTECODE": "1",
            "ADBG_SURVEY_RESULTS": str(results),
        }
        command = [*offline_prefix(), str(env.python), "-m", "pytest", "-q", "--tb=line", "-W", "ignore::DeprecationWarning",
                   "-p", "no:cacheprovider", "--continue-on-collection-errors", "--rootdir", str(root), "-c", str(extra / "pytest.ini"),
                   "-p", "adbg_survey_recorder", *files]  # fmt: skip
        cpu_before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
        try:
            done = subprocess.run(command, cwd=root, env=environ, capture_output=True, text=True, timeout=PLAIN_WALL_SECONDS)
        except subprocess.TimeoutExpired:
            raise SurveyError(f"the offline suite ran longer than {PLAIN_WALL_SECONDS:g} s and was stopped") from None
        cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        run = read_plain(results.read_text(encoding="utf-8") if results.exists() else "")
        run.seconds = round(time.monotonic() - started, 2)
        run.cpu_seconds = round(cpu_after.ru_utime + cpu_after.ru_stime - cpu_before.ru_utime - cpu_before.ru_stime, 2)
        if done.returncode not in (0, 1) or not run.outcomes:
            run.tail = normalise(last_error(done.stdout + done.stderr), 600)
    return run


# -- the survey ----------------------------------------------------------------------------------------


@dataclasses.dataclass
class Request:
    """What to survey and how to file it."""

    name: str
    version: str
    topic: str = ""
    split: Split | None = None
    requirements: list[str] = dataclasses.field(default_factory=list)
    tests: list[str] = dataclasses.field(default_factory=list)
    releases: int = RELEASES
    also: list[str] = dataclasses.field(default_factory=list)  # releases pinned besides the previous ones (a yanked one)

    @property
    def pin(self) -> str:
        return f"{self.name}=={self.version}"


def survey_sandbox() -> Sandbox:
    """Synthesis's own sandbox limits (env.authoring.synthesize): what qualifies here is what synthesis can use."""
    isolation = probe_isolation()
    if not isolation.can_execute:
        raise SurveyError(f"this host cannot run the verdict: {isolation.reason}")
    # counted in CPU time, as synthesis's: whether a library qualifies does not depend on how busy the machine is
    return Sandbox(Limits(wall_seconds=RUN_SECONDS, cpu_seconds=int(RUN_SECONDS), reply_bytes=64 * MiB).for_validity(), isolation)


def check_pin(known: LibraryEntry | None, release: str, digest: str) -> None:
    pinned = known.sdists.get(release) if known else None
    if pinned and pinned != digest:
        raise SurveyError(
            f"the sdist of {known.name if known else '?'}=={release} hashes to {digest}, but the manifest pins {pinned}: "
            f"PyPI's file or the cached archive changed (remove {sdist.sdist_cache() / 'archives'}'s copy to download it again)"
        )


def no_run(verdict: RepoVerdict) -> str:
    """Why a run reported no test: its error, its abort, a collection error, the time limit, or its output's end."""
    if verdict.error or verdict.aborted:
        return verdict.error or verdict.aborted
    if verdict.collect_errors:
        where, excerpt = next(iter(verdict.collect_errors.items()))
        return f"{where} does not collect: {first_error_line(excerpt)}"
    if verdict.timed_out:
        return "the run reached its time limit before reporting a test"
    if verdict.void:
        return verdict.void
    return f"no test reported; the run's output ends: {verdict.output[-300:]}" if verdict.output.strip() else "no test reported, no output"


def verdict_runs(
    sandbox: Sandbox, lib: Library, covering: TestEnv, offline: list[str], record: SurveyRecord
) -> tuple[RepoVerdict, list[str], RepoVerdict]:
    """As ``env.authoring.baseline``: the suite sandboxed with coverage, then the tests passing there under the split.
    Returns the sandboxed verdict, the offline-passing tests that pass sandboxed, and the split's verdict."""
    with tempfile.TemporaryDirectory(prefix="adbg-survey-") as scratch:
        task = library_task(lib, Path(scratch), lib.tests)
        clock = time.monotonic()
        boxed = until_decided(lambda: run_sandboxed(sandbox, covering, task, task.files, task.visible_tests, lib.tests, coverage=True))
        record.sandboxed_seconds = round(time.monotonic() - clock, 2)
        if boxed.error or not boxed.outcomes:
            raise SurveyError(f"the tests did not run sandboxed: {normalise(no_run(boxed), 600)}")
        passing = [t for t in offline if boxed.outcomes.get(t) == "PASSED"]
        record.sandboxed_passed = len(passing)
        record.failures += group("sandboxed", {t: boxed.reason(t) for t in offline if t not in passing})
        clock = time.monotonic()
        split = until_decided(lambda: run_tests(sandbox, task.model_copy(update={"fail_to_pass": passing}), task.files)) if passing else RepoVerdict()
        # A file that does not collect under the split stops the split's whole session: left out, the rest run again.
        broken = {f: e for f, e in split.collect_errors.items() if f in lib.tests}
        if broken:
            record.dropped |= {f: "does not collect under the split: " + normalise(first_error_line(e)) for f, e in broken.items()}
            passing = [t for t in passing if t.split("::")[0] not in broken]
            record.sandboxed_passed = len(passing)
            split = until_decided(lambda: run_tests(sandbox, task.model_copy(update={"fail_to_pass": passing}), task.files)) if passing else RepoVerdict()
        record.split_seconds = round(time.monotonic() - clock, 2)
    return boxed, passing, split


def measure(request: Request, record: SurveyRecord, sandbox: Sandbox | None = None) -> Library:
    """Fill ``record`` with the suite's runs (offline, sandboxed, split); SurveyError when the library cannot qualify."""
    try:
        lib = load_library(request.pin, request.requirements, request.tests or None)
    except (SynthesisError, sdist.SdistError, ValueError) as exc:
        raise SurveyError(str(exc)) from None
    try:
        env, covering = ensure(lib.requirements), ensure([*lib.requirements, COVERAGE])
    except TestEnvError as exc:
        raise SurveyError(f"no test environment: {exc}") from None
    plain = run_plain(lib, env, lib.tests)
    record.offline_seconds, record.offline_cpu_seconds = plain.seconds, plain.cpu_seconds
    record.dropped = {p: normalise(r or "collection error") for p, r in plain.collect_errors.items() if p in lib.tests}
    lib = dataclasses.replace(lib, tests=[p for p in lib.tests if p not in record.dropped])
    record.test_files, record.collected = len(lib.tests), len(plain.outcomes)
    offline = sorted(t for t, s in plain.outcomes.items() if s == "PASSED")
    record.offline_passed = len(offline)
    record.failures = group("offline", {t: plain.reasons.get(t) or s for t, s in plain.outcomes.items() if s in ("FAILED", "ERROR")})
    if not lib.tests or not plain.outcomes:
        said = "; ".join(f"{p}: {r}" for p, r in list(record.dropped.items())[:3]) or plain.tail or "nothing collected"
        raise SurveyError(f"no test runs offline: {said}")
    if record.offline_cpu_seconds > SUITE_CPU_SECONDS:
        raise SurveyError(f"the offline suite took {record.offline_cpu_seconds:g} CPU seconds, more than the {SUITE_CPU_SECONDS:g} allowed")
    own = sandbox is None
    box = sandbox or survey_sandbox()
    try:
        boxed, passing, split = verdict_runs(box, lib, covering, offline, record)
    finally:
        if own:
            box.close()
    lib = dataclasses.replace(lib, tests=[p for p in lib.tests if p not in record.dropped])
    if split.error:
        raise SurveyError(f"the tests did not run under the split: {normalise(split.error, 600)}")
    record.split_passed = sum(split.outcomes.get(t) == "PASSED" for t in passing)
    trusted = {t for t in passing if split.outcomes.get(t) == "PASSED" and split.ops.get(t, 0) > 0}
    unreached = "passes under the split without reaching the project's code (no request to it)"
    lost = {t: (split.reason(t) if split.outcomes.get(t) != "PASSED" else unreached) for t in passing if t not in trusted}
    record.failures += group("split", lost)
    record.trusted = len(trusted)
    source = {p for p in source_only(lib.files) if p.endswith(".py")}
    record.covered_lines = sum(1 for p, lines in boxed.covered.items() if p in source for ids in lines.values() if trusted & set(ids))
    if record.trusted < BAR:
        most = [f"{f.where}: {f.tests} × {f.reason}" for f in sorted(record.failures, key=lambda f: -f.tests)[:3]]
        where = "; ".join(most + [f"left out {path}: {why}" for path, why in list(record.dropped.items())[: 3 - len(most)]])
        raise SurveyError(
            f"{record.trusted} tests pass both sandboxed and under the split while reaching the project's code, fewer "
            f"than the {BAR} required ({record.offline_passed} pass offline){'; most lost: ' + where if where else ''}"
        )
    return lib


def previous_releases(name: str, version: str, count: int) -> list[str]:
    """The ``count`` final releases before ``version`` that PyPI lists (pip's own index query; a yanked one is not
    listed: ``--release`` pins it), newest first."""
    if count <= 0:
        return []
    command = [sys.executable, "-m", "pip", "index", "versions", "--disable-pip-version-check", name]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return []
    listed = next((line.split(":", 1)[1] for line in done.stdout.splitlines() if line.startswith("Available versions:")), "")
    try:
        current = Version(version)
    except InvalidVersion:
        return []
    found: list[tuple[Version, str]] = []
    for text in (v.strip() for v in listed.split(",") if v.strip()):
        try:
            parsed = Version(text)
        except InvalidVersion:
            continue
        if parsed < current and not parsed.is_prerelease and not parsed.is_devrelease:
            found.append((parsed, text))
    return [text for _, text in sorted(found, reverse=True)[:count]]


def pin_releases(request: Request, known: LibraryEntry | None, record: SurveyRecord) -> dict[str, str]:
    """release -> sha256 of the previous releases that have an sdist; the others, and why, in ``record.releases``.
    Downloaded ``DOWNLOADS`` at a time: each pip download mostly waits on the index and on building metadata."""

    def pinned(release: str) -> str:
        try:
            return sdist.sha256_of(sdist.archive(request.name, release))
        except sdist.SdistError as exc:
            record.releases[release] = normalise(str(exc), 200)
            return ""

    previous = previous_releases(request.name, request.version, request.releases)
    releases = [*previous, *(r for r in request.also if r not in previous and r != request.version)]
    with ThreadPoolExecutor(max_workers=DOWNLOADS) as pool:
        digests = dict(zip(releases, pool.map(pinned, releases), strict=True))
    for release, digest in digests.items():
        if digest:
            check_pin(known, release, digest)
    return {release: digest for release, digest in digests.items() if digest}


def survey(request: Request, manifest: Path, sandbox: Sandbox | None = None) -> tuple[SurveyRecord, LibraryEntry | None]:
    """Survey one release: its record, and the manifest entry it earns (None when refused: the record says why).
    Bad input never raises: a missing sdist, a failed download, a suite that cannot run are a refusal's reason."""
    entries = read_libraries(manifest) if manifest.is_file() else []
    known = next((e for e in entries if canonical(e.name) == canonical(request.name)), None)
    topic = request.topic or (known.topic if known else "")
    split: Split = request.split or (known.split if known else default_split(request.name))
    record = SurveyRecord(name=request.name, version=request.version, qualified=False, topic=topic, split=split)
    try:
        if not topic:
            raise SurveyError("no topic: give --topic (parsing, dates, text, ...)")
        record.sha256 = sdist.sha256_of(sdist.archive(request.name, request.version))
        check_pin(known, request.version, record.sha256)
        native = native_parts(sdist.tree_files(sdist.fetch(request.name, request.version)))
        if native:
            raise SurveyError(f"not pure Python: {', '.join(native[:5])}{' ...' if len(native) > 5 else ''}")
        lib = measure(request, record, sandbox)
        sdists = {request.version: record.sha256, **pin_releases(request, known, record)}
    except SurveyError as exc:
        record.reason = str(exc)
        return record, None
    except MachineBusy as exc:  # the machine's, not the library's: surveyed again, it is decided
        record.reason = f"not decided, the machine was too busy: {exc}"
        return record, None
    except sdist.SdistError as exc:
        record.reason = normalise(str(exc), 1500)
        return record, None
    except (ValueError, OSError) as exc:
        record.reason = normalise(f"{type(exc).__name__}: {exc}", 600)
        return record, None
    record.qualified = True
    tests = request.tests if not record.dropped else lib.tests
    entry = LibraryEntry(name=request.name, version=request.version, sdists=sdists, topic=topic, split=split,
                         requirements=lib.requirements, tests=tests, environment=lib.environment)  # fmt: skip
    return record, entry


# -- the files -----------------------------------------------------------------------------------------


def records_path(manifest: Path) -> Path:
    return manifest.with_name("survey.json")


def read_records(path: Path) -> list[SurveyRecord]:
    if not path.is_file():
        return []
    return [SurveyRecord.model_validate(item) for item in json.loads(path.read_text(encoding="utf-8"))]


def write_records(path: Path, records: list[SurveyRecord]) -> None:
    data = [
        r.model_dump(exclude_defaults=True) | {"qualified": r.qualified} for r in sorted(records, key=lambda r: (r.name.lower(), r.version))
    ]
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def file_survey(manifest: Path, record: SurveyRecord, entry: LibraryEntry | None) -> None:
    """Keep the record (replacing an earlier survey of the same release) and, for a qualified library, its entry."""
    records = [r for r in read_records(records_path(manifest)) if r.pin != record.pin]
    manifest.parent.mkdir(parents=True, exist_ok=True)
    write_records(records_path(manifest), [*records, record])
    if entry is not None:
        entries = [e for e in (read_libraries(manifest) if manifest.is_file() else []) if canonical(e.name) != canonical(entry.name)]
        write_libraries(manifest, [*entries, entry])


def report(record: SurveyRecord) -> str:
    head = f"{record.pin}: {'qualifies' if record.qualified else 'refused'}"
    lines = [head if record.qualified else f"{head}: {record.reason}"]
    if record.collected:
        lines.append(
            f"  {record.test_files} test files, {record.collected} tests; passing offline {record.offline_passed} "
            f"({record.offline_seconds:g} s, {record.offline_cpu_seconds:g} CPU s), sandboxed {record.sandboxed_passed} "
            f"({record.sandboxed_seconds:g} s), under the split {record.split_passed} ({record.split_seconds:g} s); "
            f"trusted {record.trusted} (the bar: {BAR}), covering {record.covered_lines} source lines"
        )
    lines += [f"  left out {path}: {why}" for path, why in record.dropped.items()]
    lines += [f"  lost {f.where}: {f.tests} × {f.reason} (e.g. {f.example})" for f in record.failures]
    lines += [f"  release {release} not pinned: {why}" for release, why in record.releases.items()]
    return "\n".join(lines)


def table(manifest: Path) -> str:
    """The markdown tables of docs/catalog-libraries.md: the manifest's libraries, then the releases refused."""
    entries = read_libraries(manifest) if manifest.is_file() else []
    records = {r.pin: r for r in read_records(records_path(manifest))}
    rows = [
        "| library | version | topic | split | tests | pass offline | trusted | suite s (CPU) | releases pinned |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for entry in sorted(entries, key=lambda e: e.name.lower()):
        r = records.get(entry.pin)
        measured = (
            f"{r.collected} | {r.offline_passed} | {r.trusted} | {r.offline_seconds:.1f} ({r.offline_cpu_seconds:.1f})"
            if r
            else "? | ? | ? | ?"
        )
        rows.append(f"| {entry.name} | {entry.version} | {entry.topic} | {entry.split} | {measured} | {len(entry.sdists) - 1} |")
    counts = Counter(e.split for e in entries)
    rows += ["", f"{len(entries)} libraries: " + ", ".join(f"{counts[s]} {s}" for s in SPLITS) + "."]
    refused = sorted((r for r in records.values() if not r.qualified), key=lambda r: r.name.lower())
    if refused:
        rows += ["", "| refused | why |", "|---|---|"]
        rows += [f"| {r.pin} | {normalise(r.reason, REASON_SHOWN).replace('|', '/')} |" for r in refused]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pin", nargs="?", help="NAME==VERSION")
    parser.add_argument("--topic", default="")
    parser.add_argument("--split", choices=SPLITS, default=None, help="default: the manifest's, else by a hash of the name")
    parser.add_argument("--requires", nargs="*", default=[], metavar="PIN", help="what the tests import besides pytest")
    parser.add_argument("--tests", nargs="*", default=[], metavar="PATH", help="test files or folders (default: pytest's naming)")
    parser.add_argument("--releases", type=int, default=RELEASES, help="previous releases to pin (default %(default)s)")
    parser.add_argument("--release", nargs="*", default=[], metavar="R", help="also pin these releases (pip lists no yanked one)")
    parser.add_argument("--manifest", default="catalog/libraries.json")
    parser.add_argument("--table", action="store_true", help="print the markdown table of the manifest and the refusals")
    args = parser.parse_args(argv)
    manifest = Path(args.manifest)
    if args.table:
        print(table(manifest))
        return 0
    if not args.pin:
        parser.error("give NAME==VERSION, or --table")
    try:
        name, version = sdist.parse_pin(args.pin)
    except ValueError as exc:
        parser.error(str(exc))
    request = Request(name, version, args.topic, args.split, list(args.requires), list(args.tests), args.releases, list(args.release))
    record, entry = survey(request, manifest)
    file_survey(manifest, record, entry)
    print(report(record))
    return 0 if entry is not None else 1


if __name__ == "__main__":
    sys.exit(main())
