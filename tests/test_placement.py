"""Placement: the author's step that lists in task.json's ``sandboxed`` exactly the tests the split cannot run on the
gold tree and a sandboxed run can; the verdict then runs each test where it was placed."""

from __future__ import annotations

import json
import re

import pytest

from env.authoring.__main__ import main, report_placement
from env.authoring.placement import Placement, named_tests, place
from env.project import load_repo_task
from env.verdict.repo_judge import run_tests
from tests import repo_fixture

BUGGY = "def add(a, b):\n    return a - b\n"
GOLD = BUGGY.replace("a - b", "a + b")
# The trusted process never reads a project file (it would expose the agent's code outside the sandbox): a test that
# does cannot run under the split, and it can in a sandboxed run, where pytest and the project share the sandbox.
CALC = (
    "import lib\n\n\ndef test_add():\n    assert lib.add(2, 3) == 5\n\n\n"
    "def test_reads_the_source():\n    with open(lib.__file__) as handle:\n        assert 'def add' in handle.read()\n"
)
FAILS_EITHER_WAY = "\n\ndef test_wrong():\n    assert lib.add(2, 2) == 5\n"
# ... and here at module level: the split cannot even collect this file.
SOURCE_TESTS = (
    "import lib\n\nwith open(lib.__file__) as handle:\n    SOURCE = handle.read()\n\n\n"
    "def test_defines_add():\n    assert 'def add' in SOURCE\n\n\n"
    "def test_adds():\n    assert lib.add(1, 1) == 2\n"
)
ADD, READS, WRONG = "tests/test_calc.py::test_add", "tests/test_calc.py::test_reads_the_source", "tests/test_calc.py::test_wrong"
DEFINES, ADDS = "tests/test_source.py::test_defines_add", "tests/test_source.py::test_adds"
REFUSED = (
    "adbg_host.guard.Refused: the trusted test process runs no program and reads no project file "
    "(open <run>/lib/__init__.py): the project's code runs only in the sandbox"
)


def blurred(text: str) -> str:
    """The sandbox run's own directory, which differs each run, as <run>."""
    return re.sub(r"\(open /\S+/lib/__init__\.py\)", "(open <run>/lib/__init__.py)", text)


def write(folder, pass_to_pass):
    calc = CALC + FAILS_EITHER_WAY if WRONG in pass_to_pass else CALC
    files = {"lib/__init__.py": BUGGY, "tests/test_calc.py": calc, "tests/test_source.py": SOURCE_TESTS}
    return repo_fixture.write_task(folder, files, {**files, "lib/__init__.py": GOLD}, FAIL_TO_PASS=[ADD], PASS_TO_PASS=pass_to_pass)


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    return load_repo_task(write(tmp_path_factory.mktemp("placement") / "source", [READS, DEFINES, ADDS]))


@pytest.fixture(scope="module")
def placement(runtime, task):
    return place(runtime.sandbox, task)


def test_the_tests_the_split_cannot_run_are_placed_sandboxed(placement):
    """test_source.py's collection error interrupts the split's whole session: test_add runs again without it. Both of
    test_source.py's tests are placed, test_adds too: under the split it cannot even be collected."""
    assert (placement.split, placement.sandboxed, placement.failing) == ([ADD], [READS, DEFINES, ADDS], {})
    assert {t: blurred(why) for t, why in placement.split_reasons.items()} == {READS: REFUSED, DEFINES: REFUSED, ADDS: REFUSED}


def test_after_placement_the_gold_tree_passes_each_test_where_it_was_placed(runtime, task, placement):
    placed = task.model_copy(update={"sandboxed": placement.sandboxed})
    assert placed.trusted  # the FAIL_TO_PASS test stays under the split
    verdict = run_tests(runtime.sandbox, placed, placed.gold_files)
    assert verdict.outcomes == {ADD: "PASSED", READS: "PASSED", DEFINES: "PASSED", ADDS: "PASSED"}, verdict.excerpts
    assert {t: verdict.trust(t) for t in verdict.outcomes} == {ADD: "split", READS: "sandboxed", DEFINES: "sandboxed", ADDS: "sandboxed"}
    # every test of test_source.py runs sandboxed, so the split never collects it: no collection error anywhere
    assert verdict.collect_errors == {} and verdict.error == "" and verdict.void == ""
    only = run_tests(runtime.sandbox, placed, placed.gold_files, ["tests/test_source.py"])  # a bare file: its named tests
    assert only.outcomes == {DEFINES: "PASSED", ADDS: "PASSED"} and only.sandboxed == [ADDS, DEFINES] and only.collect_errors == {}


def test_the_cli_writes_task_json_and_a_dry_run_does_not(runtime, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("env.authoring.__main__._runtime", lambda catalog: runtime)
    folder = write(tmp_path / "source", [READS, WRONG, DEFINES, ADDS])
    before = (folder / "task.json").read_text(encoding="utf-8")
    report = [
        "shop-cart: 1 test(s) run split, 3 sandboxed, 1 failing either way; the task is trusted",
        f"  sandboxed: {READS} (the split: {REFUSED})",
        f"  sandboxed: {DEFINES} (the split: {REFUSED})",
        f"  sandboxed: {ADDS} (the split: {REFUSED})",
        f"  fails either way: {WRONG}: assert 4 == 5",
    ]
    assert main(["place", str(folder), "--dry-run"]) == 1  # a test failing either way fails the command
    assert blurred(capsys.readouterr().out).splitlines() == [*report, "  dry run: task.json not written (it would list 3 sandboxed test(s))"]
    assert (folder / "task.json").read_text(encoding="utf-8") == before
    assert main(["place", str(folder)]) == 1
    assert blurred(capsys.readouterr().out).splitlines() == [*report, f"  wrote 3 sandboxed test(s) to {folder / 'task.json'}"]
    old, new = json.loads(before), json.loads((folder / "task.json").read_text(encoding="utf-8"))
    assert list(new) == [*old, "sandboxed"] and {k: v for k, v in new.items() if k != "sandboxed"} == old
    assert new["sandboxed"] == [READS, ADDS, DEFINES]  # sorted; the test failing either way is not placed
    assert (folder / "task.json").read_text(encoding="utf-8").startswith('{\n  "id": "shop-cart",\n')


def test_a_test_failing_either_way_stays_where_it_was():
    placement = Placement(split=[ADD], sandboxed=[READS], split_reasons={READS: "x"}, failing={WRONG: "assert 4 == 5", ADDS: "boom"})
    assert placement.listed([WRONG, ADD]) == [READS, WRONG]  # ADD passes under the split now: it leaves the list
    assert placement.listed([]) == [READS]


def test_the_report_says_when_a_task_becomes_untrusted_and_what_went_back_under_the_split(task):
    before = task.model_copy(update={"sandboxed": [READS]})
    placement = Placement(split=[READS], sandboxed=[ADD], split_reasons={ADD: "TypeError: no"})
    assert report_placement(before, placement, placement.listed(before.sandboxed)).splitlines() == [
        "shop-cart: 1 test(s) run split, 1 sandboxed, 0 failing either way; the task is UNTRUSTED (a FAIL_TO_PASS test runs sandboxed)",
        f"  sandboxed: {ADD} (the split: TypeError: no)",
        f"  back under the split: {READS} (it passes there now)",
    ]


def test_a_bare_file_in_select_means_the_task_s_named_tests_in_it(task):
    assert named_tests(task) == [ADD, READS, DEFINES, ADDS]
    assert named_tests(task, ["tests/test_source.py", ADD]) == [ADD, DEFINES, ADDS]


def test_a_placement_of_one_file_on_other_files(runtime, task):
    """What the compatibility bench does: one file's named tests, on the files given (here the buggy snapshot, where
    test_adds fails sandboxed too)."""
    placement = place(runtime.sandbox, task, ["tests/test_source.py"], files=task.files)
    assert (placement.split, placement.sandboxed, list(placement.failing)) == ([], [DEFINES], [ADDS])
    assert placement.failing[ADDS] == "assert 0 == 2" and blurred(placement.split_reasons[DEFINES]) == REFUSED
