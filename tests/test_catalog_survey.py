"""The catalog's library survey (env/authoring/catalog/survey.py) and the committed manifest it fills.

The survey of one small real library, parse 1.20.2, downloads its sdist (and 1.20.1's) from PyPI at test time (cached
in ENV_SDIST_CACHE after the first download); without PyPI that test fails and says so. The rest reads files or
small inputs only.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.real_bugs import BUG_LIST
from env.authoring import sdist
from env.authoring.catalog.manifest import MAX_SHARE, SPLITS, LibraryEntry, read_libraries, read_tasks
from env.authoring.catalog.survey import (
    BAR,
    Request,
    default_split,
    file_survey,
    main,
    native_parts,
    read_plain,
    read_records,
    records_path,
    survey,
    table,
)
from env.sandbox.isolation import Isolation
from env.sandbox.limits import Limits, MiB
from env.sandbox.runner import Sandbox

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "catalog" / "libraries.json"
PARSE_SHA256 = "b41d604d16503c79d81af5165155c0b20f6c8d6c559efa66b4b695c3e5a0a0ce"  # parse-1.20.2.tar.gz on PyPI
PARSE_PREVIOUS_SHA256 = "09002ca350ad42e76629995f71f7b518670bcf93548bdde3684fd55d2be51975"  # parse-1.20.1.tar.gz


@pytest.fixture(scope="module")
def sandbox(isolation: Isolation) -> Iterator[Sandbox]:
    box = Sandbox(Limits(wall_seconds=300, cpu_seconds=300, reply_bytes=64 * MiB).for_validity(), isolation)  # survey_sandbox's
    yield box
    box.close()


def test_a_real_library_qualifies_with_its_pins_and_counts(sandbox: Sandbox, tmp_path: Path) -> None:
    manifest = tmp_path / "libraries.json"
    try:
        record, entry = survey(Request("parse", "1.20.2", "parsing", "test", releases=1), manifest, sandbox)
    except sdist.SdistError as exc:  # survey turns it into a refusal; this only says why if PyPI is unreachable
        pytest.fail(f"this test needs the sdists of parse 1.20.2 and 1.20.1 from PyPI: {exc}")
    assert record.reason == "" and record.qualified, record.reason
    assert entry == LibraryEntry(
        name="parse", version="1.20.2", sdists={"1.20.2": PARSE_SHA256, "1.20.1": PARSE_PREVIOUS_SHA256}, topic="parsing", split="test"
    )
    # 97 tests collected; one is skipped on Python 3.5 and later, the 96 others pass all three ways and reach parse.py
    measured = (record.test_files, record.collected, record.offline_passed, record.sandboxed_passed, record.split_passed, record.trusted)
    assert measured == (7, 97, 96, 96, 96, 96)
    assert record.covered_lines == 447 and record.failures == [] and record.dropped == {} and record.releases == {}
    assert record.sha256 == PARSE_SHA256
    file_survey(manifest, record, entry)
    assert read_libraries(manifest) == [entry]
    assert read_records(records_path(manifest)) == [record]


def test_a_survey_whose_runs_the_machine_starved_decides_nothing(isolation: Isolation, tmp_path: Path) -> None:
    starved = Sandbox(Limits(wall_seconds=300, cpu_seconds=300, reply_bytes=64 * MiB, backstop_seconds=0.01).for_validity(), isolation)
    try:
        record, entry = survey(Request("parse", "1.20.2", "parsing", "test", releases=1), tmp_path / "libraries.json", starved)
    finally:
        starved.close()
    assert entry is None and not record.qualified
    assert record.reason.startswith("not decided, the machine was too busy: the machine was too busy: the run was stopped by its "
                                    "wall-clock backstop of 0.01 s having used "), record.reason  # fmt: skip
    assert record.reason.endswith("(an infrastructure fault, not the run's outcome); in each of 2 attempts"), record.reason


def test_a_release_with_no_sdist_is_refused_with_pips_reason(tmp_path: Path) -> None:
    record, entry = survey(Request("parse", "0.0.0.99", "parsing"), tmp_path / "libraries.json")
    assert entry is None and not record.qualified
    assert record.reason.startswith("cannot download the sdist of parse==0.0.0.99 from PyPI (is PyPI reachable?): ERROR: ")
    assert record.reason.endswith("ERROR: No matching distribution found for parse==0.0.0.99")


def test_an_sdist_without_pytest_files_is_refused(tmp_path: Path) -> None:
    # python-slugify 8.0.4 ships its tests as test.py: not pytest's naming (test_*.py or *_test.py)
    record, entry = survey(Request("python-slugify", "8.0.4", "text"), tmp_path / "libraries.json")
    assert entry is None
    assert record.reason == "python-slugify==8.0.4: no test files (test_*.py or *_test.py)"


def test_a_hash_differing_from_the_manifests_pin_is_refused_and_nothing_written(tmp_path: Path) -> None:
    manifest = tmp_path / "libraries.json"
    wrong = "0" * 64
    manifest.write_text(
        json.dumps([{"name": "parse", "version": "1.20.2", "sdists": {"1.20.2": wrong}, "topic": "parsing", "split": "test"}])
    )
    before = manifest.read_text()
    record, entry = survey(Request("parse", "1.20.2", releases=0), manifest)
    assert entry is None and record.topic == "parsing" and record.split == "test"  # both taken from the manifest
    archives = sdist.sdist_cache() / "archives"
    assert record.reason == (
        f"the sdist of parse==1.20.2 hashes to {PARSE_SHA256}, but the manifest pins {wrong}: PyPI's file or the cached "
        f"archive changed (remove {archives}'s copy to download it again)"
    )
    file_survey(manifest, record, entry)
    assert manifest.read_text() == before
    assert [(r.pin, r.qualified) for r in read_records(records_path(manifest))] == [("parse==1.20.2", False)]


def test_a_library_without_a_topic_is_refused_before_any_download(tmp_path: Path) -> None:
    record, entry = survey(Request("no-such-library", "1.0"), tmp_path / "libraries.json")
    assert (record.reason, entry) == ("no topic: give --topic (parsing, dates, text, ...)", None)


def test_native_sources_and_declared_extensions_are_found_outside_tests_and_docs() -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/_speedups.c": "int x;",
        "pkg/fast.pyx": "",
        "tests/helper.c": "",
        "docs/example.c": "",
        "setup.py": "from setuptools import Extension, setup\nsetup(ext_modules=[Extension('pkg._speedups', ['pkg/_speedups.c'])])\n",
        "pyproject.toml": '[build-system]\nbuild-backend = "setuptools.build_meta"\n',
    }
    assert native_parts(files) == ["pkg/_speedups.c", "pkg/fast.pyx", "setup.py (declares ext_modules)"]
    assert native_parts({"pkg/__init__.py": "", "setup.py": "from setuptools import setup\nsetup(name='pkg')\n"}) == []
    assert native_parts({"pyproject.toml": '[build-system]\nbuild-backend = "maturin"\n'}) == ["pyproject.toml (declares maturin)"]


def test_plain_records_give_each_tests_status_as_pytest_counts_it() -> None:
    lines = [
        {"collect_error": "tests/test_net.py", "reason": "ModuleNotFoundError: No module named 'requests'"},
        {"test": "t.py::ok", "when": "setup", "outcome": "passed", "xfail": False, "reason": ""},
        {"test": "t.py::ok", "when": "call", "outcome": "passed", "xfail": False, "reason": ""},
        {"test": "t.py::ok", "when": "teardown", "outcome": "passed", "xfail": False, "reason": ""},
        {"test": "t.py::bad", "when": "call", "outcome": "failed", "xfail": False, "reason": "assert 1 == 2"},
        {"test": "t.py::torn", "when": "call", "outcome": "passed", "xfail": False, "reason": ""},
        {"test": "t.py::torn", "when": "teardown", "outcome": "failed", "xfail": False, "reason": "OSError: busy"},
        {"test": "t.py::fixture", "when": "setup", "outcome": "failed", "xfail": False, "reason": "fixture 'db' not found"},
        {"test": "t.py::later", "when": "setup", "outcome": "skipped", "xfail": False, "reason": ""},
        {"test": "t.py::known", "when": "call", "outcome": "skipped", "xfail": True, "reason": ""},
    ]
    run = read_plain("\n".join(json.dumps(line) for line in lines) + "\nnot json\n")
    assert run.outcomes == {"t.py::ok": "PASSED", "t.py::bad": "FAILED", "t.py::torn": "ERROR", "t.py::fixture": "ERROR",
                            "t.py::later": "SKIPPED", "t.py::known": "XFAIL"}  # fmt: skip
    assert run.reasons == {"t.py::bad": "assert 1 == 2", "t.py::torn": "OSError: busy", "t.py::fixture": "fixture 'db' not found"}
    assert run.collect_errors == {"tests/test_net.py": "ModuleNotFoundError: No module named 'requests'"}


def test_the_default_split_is_stable_by_name() -> None:
    assert [default_split(n) for n in ("toolz", "Toolz", "cachetools", "tabulate")] == ["validation", "validation", "train", "train"]


def test_a_bad_pin_on_the_command_line_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["parse>=1.0", "--topic", "parsing"])
    assert exit_.value.code == 2
    assert "'parse>=1.0' is not NAME==VERSION" in capsys.readouterr().err


# -- the committed manifest ------------------------------------------------------------------------------


def test_the_committed_manifest_holds_60_libraries_over_varied_topics_in_every_split() -> None:
    entries = read_libraries(MANIFEST)  # validates every entry and refuses a library listed twice
    assert len(entries) >= 60
    assert len({e.name.lower() for e in entries}) == len(entries)
    assert {e.split for e in entries} == set(SPLITS)
    assert len({e.topic for e in entries}) >= 8


def test_the_test_split_is_the_real_bugs_libraries() -> None:
    entries = {e.name: e for e in read_libraries(MANIFEST)}
    refused = {r.name for r in read_records(records_path(MANIFEST)) if not r.qualified}
    real = {bug.name for bug in BUG_LIST}
    assert {name for name, e in entries.items() if e.split == "test"} == real & set(entries)
    # a real-bug library missing from the manifest was surveyed and refused (docs/catalog-libraries.md says why)
    assert real - set(entries) <= refused, f"real-bug libraries neither listed nor refused: {sorted(real - set(entries) - refused)}"
    assert len(real & set(entries)) >= 10
    for bug in BUG_LIST:  # the releases each real bug is mined from are pinned
        if bug.name in entries:
            assert {bug.buggy, bug.fixed} <= set(entries[bug.name].sdists), bug.instance_id


def test_every_listed_library_was_surveyed_and_met_the_bar() -> None:
    records = {r.pin: r for r in read_records(records_path(MANIFEST))}
    for entry in read_libraries(MANIFEST):
        record = records[entry.pin]
        assert record.qualified and record.trusted >= BAR and record.sha256 == entry.sdists[entry.version], entry.pin


def test_the_docs_table_is_the_surveys() -> None:
    docs = (ROOT / "docs" / "catalog-libraries.md").read_text(encoding="utf-8")
    assert table(MANIFEST) in docs


def test_the_committed_tasks_follow_the_manifests_rules() -> None:
    """catalog/tasks.jsonl: every task of a listed library, its pair's releases pinned, no library above 10% of the
    tasks, held-out tests among the listed ones, and mined bugs in the test split (its core)."""
    entries = {e.name: e for e in read_libraries(MANIFEST)}
    tasks = read_tasks(MANIFEST.parent / "tasks.jsonl")  # refuses an id listed twice
    assert tasks, "catalog/tasks.jsonl lists no task"
    by_library = Counter(t.library for t in tasks)
    assert set(by_library) <= set(entries)
    assert max(by_library.values()) <= MAX_SHARE * len(tasks)
    for task in tasks:
        listed = set(task.fail_to_pass) | set(task.pass_to_pass)
        assert set(task.held_out) <= listed and set(task.sandboxed or []) <= listed and task.fail_to_pass, task.id
        if task.pair is not None:
            assert {task.pair.buggy, task.pair.fixed} <= set(entries[task.library].sdists), task.id
    assert any(t.source == "mined" and entries[t.library].split == "test" for t in tasks)
