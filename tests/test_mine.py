"""Real bugs mined from release pairs (issue 48 item 2): ``python -m env.authoring mine``.

The parts on synthetic inputs (changelog sections, the size limits, version bumps, finding each failing test's cause
with a stand-in for the sandboxed runs), then one real library from PyPI: parse 1.20.1 -> 1.20.2 fixed hyphens in
field names (the bug bench/real_bugs.py lists by hand), and 1.21.1 -> 1.22.0 changed no test.
"""

from __future__ import annotations

import json

import pytest

from env.authoring import mine
from env.authoring.__main__ import main as authoring_cli
from env.authoring.catalog.manifest import read_tasks
from env.authoring.changelog import MAX_LINES, changelog_files, entry, section
from env.authoring.ledger import read_lines
from env.authoring.mine import (
    MAX_FILES,
    MineError,
    Miner,
    PairDecision,
    Releases,
    attribute,
    change_sizes,
    collected,
    missing_name,
    picked,
    size_problem,
    suite_health,
    trim,
    undo,
)
from env.authoring.mine import MAX_LINES as MAX_CHANGED
from env.authoring.sdist import SdistError, releases
from env.families.catalog import TaskCatalog
from env.project import load_repo_task
from env.runtime import Runtime
from env.sandbox.isolation import Isolation
from env.sandbox.limits import Limits
from env.sandbox.runner import Sandbox
from env.verdict.outcome import RepoVerdict

RST = """Changes
=======

Version 3.1.3
-------------

Released 2024-01-10

-   Fix compiler error when checking required blocks. :pr:`1858`
-   ``xmlattr`` filter does not allow keys with spaces.


Version 3.1.2
-------------

-   Add parameters to ``Environment.overlay``.
"""

MARKDOWN = """# Changelog

## [Unreleased]

## [1.2.1] - 2024-05-02
### Fixed
- `split()` keeps quoted commas.

## [1.2] - 2024-04-01
### Added
- `split()`.
"""

BARE = """v0.5.1 (2020-03-01)
* Fixed the plural of "octopus".

0.5.0
* Python 3.8.
"""


def test_a_changelog_section_is_the_text_under_its_versions_heading_up_to_the_next_version():
    assert section(RST, "3.1.3") == (
        "Released 2024-01-10\n\n-   Fix compiler error when checking required blocks. :pr:`1858`\n"
        "-   ``xmlattr`` filter does not allow keys with spaces."
    )
    assert section(RST, "3.1.2") == "-   Add parameters to ``Environment.overlay``."
    assert section(MARKDOWN, "1.2.1") == "### Fixed\n- `split()` keeps quoted commas."  # a sub-heading names no version
    assert section(MARKDOWN, "1.2") == "### Added\n- `split()`."  # 1.2 is not 1.2.1
    assert section(MARKDOWN, "1.2.0") == "### Added\n- `split()`."  # 1.2.0 is 1.2
    assert section(BARE, "0.5.1") == '* Fixed the plural of "octopus".'
    assert section(BARE, "0.5.0") == "* Python 3.8."
    assert section(RST, "3.1.4") == "" and section(MARKDOWN, "1.2.2") == ""
    # a version named inside a line of text is no heading: "fixed in 2.0" does not start a section
    assert section("2.1\n---\n\n- Regression of a bug fixed in 2.0, reported again.\n", "2.0") == ""


def test_a_long_section_is_cut_and_says_so():
    body = "\n".join(f"- change {i}" for i in range(MAX_LINES + 5))
    found = section(f"## 2.0.0\n\n{body}\n\n## 1.9.0\n- old\n", "2.0.0")
    assert found.splitlines()[:-1] == [f"- change {i}" for i in range(MAX_LINES)] and found.endswith("\n…")


def test_the_changelog_read_is_the_roots_then_the_docs_by_name():
    files = {"docs/changelog.rst": "1.1\n===\n\n- docs' words\n", "CHANGES.rst": "1.1\n===\n\n- the root's words\n",
             "history.py": "1.1 = None\n", "docs/api/news.md": "## 1.1\n- too deep\n", "HISTORY": "nothing of 1.1\n"}  # fmt: skip
    assert changelog_files(files) == ["CHANGES.rst", "HISTORY", "docs/changelog.rst"]
    assert entry(files, "1.1") == "- the root's words"
    assert entry({k: v for k, v in files.items() if k != "CHANGES.rst"}, "1.1") == "- docs' words"
    assert entry(files, "1.2") == ""


def test_an_entry_given_the_release_before_holds_every_release_between():
    files = {"CHANGES.md": "## 3.0.4\n- packaging\n\n## 3.0.3\n- comparing subclasses\n\n## 3.0.2\n- old\n"}
    assert entry(files, "3.0.4") == "- packaging"
    assert entry(files, "3.0.4", "3.0.2") == "3.0.3:\n- comparing subclasses\n\n3.0.4:\n- packaging"  # 3.0.3 is off PyPI
    assert entry(files, "3.0.3", "3.0.2") == "- comparing subclasses"


def test_a_failing_test_that_uses_a_name_the_earlier_code_lacks_tests_an_addition():
    source = "def test_tableize():\n    assert inflection.tableize('Person') == 'people'\n"
    assert missing_name("AttributeError: module 'inflection' has no attribute 'tableize'", source) == "tableize"
    assert missing_name("ImportError: cannot import name 'tableize' from 'inflection'", source) == "tableize"
    assert missing_name("TypeError: f() got an unexpected keyword argument 'tableize'", source) == "tableize"
    # a name the test does not use, or a private one, is the code's own: a bug
    assert missing_name("AttributeError: 'LRU' object has no attribute 'links'", source) == ""
    assert missing_name("AttributeError: module 'inflection' has no attribute '_tableize'", "inflection._tableize") == ""
    assert missing_name("AssertionError: assert 'persons' == 'people'", source) == ""


def test_a_suite_that_does_not_run_says_why():
    uncollected = RepoVerdict(
        collect_errors={"tests/test_b.py": "E   ImportError: cannot import name 'unittest' from 'tests'", "tests/test_a.py": ""}
    )
    assert (
        suite_health(uncollected, "1.1.0")
        == "1.1.0's own tests do not run here: 2 file(s) not collected (first: tests/test_a.py: (no excerpt))"
    )
    failing = RepoVerdict(
        outcomes={"t.py::a": "PASSED", "t.py::b": "FAILED"}, excerpts={"t.py::b": "E   OSError: [Errno 101] Network is unreachable"}
    )
    assert (
        suite_health(failing, "2.0")
        == "2 tests ran on 2.0's own code, 1 failing (first: t.py::b: OSError: [Errno 101] Network is unreachable)"
    )


def _patch_of(files: int, lines: int) -> dict[str, str]:
    """A gold patch over ``files`` code files changing ``lines`` lines in all (a line removed, one added: two lines)."""
    per = [lines // files + (i < lines % files) for i in range(files)]
    return {f"pkg/m{i}.py": f"--- a/pkg/m{i}.py\n+++ b/pkg/m{i}.py\n@@ -1 +1 @@\n" + "-x\n" * n for i, n in enumerate(per)}


def test_the_size_limits_are_three_code_files_and_eighty_changed_lines():
    assert (MAX_FILES, MAX_CHANGED) == (3, 80)
    assert size_problem(_patch_of(3, 80)) == ""
    assert size_problem(_patch_of(4, 8)) == (
        "the fix changes 4 code files (pkg/m0.py, pkg/m1.py, pkg/m2.py, pkg/m3.py); a task's may change at most 3"
    )
    assert size_problem(_patch_of(2, 81)) == "the fix changes 81 lines of pkg/m0.py, pkg/m1.py; a task's may change at most 80"


OLD = {
    "pkg/__init__.py": '__version__ = "1.0"\n',
    "pkg/a.py": "def a():\n    return 1\n",
    "pkg/b.py": "def b():\n    return 1\n",
    "pkg/c.py": "def c():\n    return 1\n",
    "setup.py": "version = '1.0'\n",
    "docs/conf.py": "release = '1.0'\n",
    "tests/test_x.py": "# 1.0's tests\n",
}
NEW = {
    **OLD,
    "pkg/__init__.py": '__version__ = "1.1"\n',  # a version bump alone: no changed code
    "pkg/a.py": '__version__ = "1.1"\ndef a():\n    return 2\n',  # a fix (and a bump, left out of the gold patch)
    "pkg/b.py": "def b():\n    return 2\n",
    "pkg/c.py": "def c():\n    return 2\n",
    "setup.py": "version = '1.1'\n",
    "docs/conf.py": "release = '1.1'\n",
    "tests/test_x.py": "# 1.1's tests\n",
    "tests/data.txt": "new data\n",
}


class FakeRunner(mine.Runner):
    """Each test passes when the files it needs are at the later release's text; ``test_data`` never does (what makes
    it pass is no code file). Records the trees it ran."""

    NEEDS = {"test_a": ["pkg/a.py"], "test_b": ["pkg/b.py"], "test_bc": ["pkg/b.py", "pkg/c.py"], "test_data": ["nowhere"]}

    def __init__(self, pair: Releases) -> None:
        self.pair, self.trees = pair, []

    def run(self, files, tests, select):
        fixed = sorted(p for p in self.pair.changed if files.get(p) == self.pair.fixed_code.get(p))
        self.trees.append(fixed)
        ok = {name: all(files.get(p) == self.pair.fixed_code.get(p, "-") for p in needs) for name, needs in self.NEEDS.items()}
        return RepoVerdict(outcomes={f"tests/test_x.py::{name}": "PASSED" if ok[name] else "FAILED" for name in self.NEEDS})


def test_each_failing_test_goes_to_the_smallest_set_of_changed_files_that_makes_it_pass():
    pair = Releases("pkg", "1.0", "1.1", OLD, NEW)
    assert list(pair.changed) == ["pkg/a.py", "pkg/b.py", "pkg/c.py"]  # the bump-only __init__, setup.py and docs/ are no code
    assert pair.fixed_code["pkg/a.py"] == "def a():\n    return 2\n" and "__version__" not in pair.patch(["pkg/a.py"])
    assert pair.with_code(["pkg/b.py"]) == {
        **OLD,
        "pkg/b.py": NEW["pkg/b.py"],
        "tests/test_x.py": NEW["tests/test_x.py"],
        "tests/data.txt": "new data\n",
    }
    runner = FakeRunner(pair)
    candidates = [f"tests/test_x.py::{name}" for name in ("test_a", "test_b", "test_bc", "test_data")]
    groups = attribute(pair, runner, candidates)
    assert [(g.code, g.fail_to_pass, g.status) for g, _ in groups] == [
        (["pkg/a.py"], ["tests/test_x.py::test_a"], "pending"),
        (["pkg/b.py"], ["tests/test_x.py::test_b"], "pending"),
        (["pkg/b.py", "pkg/c.py"], ["tests/test_x.py::test_bc"], "pending"),  # a.py left out: not needed
        ([], ["tests/test_x.py::test_data"], "unexplained"),
    ]
    # each file alone, then all three, then without each in turn (equal sizes: in path order); each tree runs once
    assert runner.trees == [["pkg/a.py"], ["pkg/b.py"], ["pkg/c.py"], ["pkg/a.py", "pkg/b.py", "pkg/c.py"], ["pkg/b.py", "pkg/c.py"]]


def test_a_fix_over_the_limits_is_trimmed_to_the_changes_its_tests_need():
    old = "".join(f"line {i}\n" for i in range(30))
    # three changes: a fix of line 3 (the tests need it), a rename of line 10 (a test of the file needs it kept), a
    # reformatting of lines 20-29 (nothing needs it)
    new = old.replace("line 3\n", "fixed 3\n").replace("line 10\n", "renamed 10\n")
    new = new.replace("".join(f"line {i}\n" for i in range(20, 30)), "".join(f"line  {i}\n" for i in range(20, 30)))
    assert change_sizes(old, new) == [2, 2, 20]
    assert undo(old, new, picked({0, 2})) == old.replace("line 10\n", "renamed 10\n")
    pair = Releases("pkg", "1.0", "1.1", {"pkg/m.py": old, "tests/test_m.py": ""}, {"pkg/m.py": new, "tests/test_m.py": "# new\n"})
    tried = []

    class Needs(mine.Runner):
        def __init__(self) -> None:
            pass

        def run(self, files, tests, select):
            text = files["pkg/m.py"]
            tried.append(text)
            return RepoVerdict(outcomes={"tests/test_m.py::test_fix": "PASSED" if "fixed 3" in text else "FAILED",
                                         "tests/test_m.py::test_rename": "PASSED" if "renamed 10" in text else "FAILED"})  # fmt: skip

    whole = Needs().run(pair.with_code(["pkg/m.py"]), pair.tests, ["tests/test_m.py"])
    trimmed = trim(pair, Needs(), ["pkg/m.py"], whole, ["tests/test_m.py"])
    assert trimmed == {"pkg/m.py": old.replace("line 3\n", "fixed 3\n").replace("line 10\n", "renamed 10\n")}
    assert len(tried) == 1 + 4  # the whole change; then {0}: needed; {1, 2}: not both; {1}: needed; {2}: undone
    assert trim(pair, Needs(), ["pkg/gone.py"], whole, ["tests/test_m.py"]) is None  # a file added or removed: no trimming


def test_a_test_file_that_does_not_collect_is_left_out_and_the_others_run_again():
    runs = []

    class Interrupting(mine.Runner):
        """pytest as it is: a file that does not collect stops the whole session (no test of any file runs)."""

        def __init__(self) -> None:
            pass

        def run(self, files, tests, select):
            runs.append(select)
            if "tests/test_props.py" in select:
                return RepoVerdict(collect_errors={"tests/test_props.py": "E   ModuleNotFoundError: No module named 'hypothesis'"})
            return RepoVerdict(outcomes={f"{f}::test_it": "PASSED" for f in select})

    found = collected(Interrupting(), {}, {}, ["tests/test_a.py", "tests/test_props.py"])
    assert runs == [["tests/test_a.py", "tests/test_props.py"], ["tests/test_a.py"]]
    assert found.outcomes == {"tests/test_a.py::test_it": "PASSED"} and list(found.collect_errors) == ["tests/test_props.py"]
    runs.clear()
    assert collected(Interrupting(), {}, {}, ["tests/test_props.py"]).outcomes == {} and len(runs) == 1  # nothing left to run
    assert collected(Interrupting(), {}, {}, []) == RepoVerdict() and len(runs) == 1  # the later release collects no file: none runs


# -- a real library from PyPI ----------------------------------------------------------------------------------------

HYPHEN = ["tests/test_parse.py::test_hyphen_inside_field_name", "tests/test_parse.py::test_hyphen_inside_field_name_collision_handling"]


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> tuple[Miner, list[mine.MineSummary]]:
    out = tmp_path_factory.mktemp("mined")
    try:
        miner = Miner("parse", out, runs=2, log=lambda line: None)
        return miner, [miner.run(["1.20.1", "1.20.2"]), miner.run(["1.21.1", "1.22.0"]), miner.run(["1.20.1", "1.20.2"])]
    except SdistError as exc:
        pytest.fail(f"this test needs parse's sdists from PyPI (cached after the first download): {exc}")


def test_a_real_pair_gives_its_fail_to_pass_tests_a_valid_task_and_a_catalog_line(mined: tuple[Miner, list[mine.MineSummary]]):
    miner, (first, _, _) = mined
    assert first.tasks == ["parse-1_20_2-parse"] and first.by_status == {"mined": 1} and first.by_group == {"valid": 1}
    (task,) = read_tasks(miner.out / "mined.jsonl")
    assert task.id == "parse-1_20_2-parse" and task.source == "mined" and task.library == "parse"
    assert task.pair is not None and task.pair.model_dump() == {
        "buggy": "1.20.1",
        "fixed": "1.20.2",
        "code": ["parse.py"],
        "test_files": ["tests/test_parse.py"],
    }
    assert task.fail_to_pass == HYPHEN and task.held_out == HYPHEN  # 1.20.2 added both tests: the agent never sees them
    assert len(task.pass_to_pass) == 48 and not set(task.pass_to_pass) & set(HYPHEN)  # test_parse.py's others, passing on both
    assert task.validation.runs == 2 and task.validation.cpu_seconds > 0
    folder = load_repo_task(miner.out / task.id)
    assert folder.trusted and folder.version == "1.20.1" and "mined" in folder.tags
    assert (
        folder.gold_files["parse.py"] != folder.files["parse.py"] and '__version__ = "1.20.1"' in folder.gold_files["parse.py"]
    )  # no bump
    # parse ships no changelog file: the statement is written from the failing tests
    assert folder.problem_statement.startswith(f"2 tests of parse fail:\n- {HYPHEN[0]}: AssertionError: assert [] == ['user_id']\n")
    assert folder.problem_statement.endswith(mine.MINED_CLOSING)
    # what the catalog rebuilds it from: the statement as written, the tests placed sandboxed (none here: all trusted)
    assert task.problem_statement == folder.problem_statement and task.sandboxed is None and folder.sandboxed == []
    assert task.requirements == folder.requirements == []  # what its tests were validated with


def test_a_pair_without_a_test_difference_is_recorded_and_a_decided_pair_is_not_mined_again(mined: tuple[Miner, list[mine.MineSummary]]):
    miner, (_, second, third) = mined
    decisions = read_lines(miner.ledger, PairDecision)
    assert [(d.key, d.status) for d in decisions] == [("1.20.1 -> 1.20.2", "mined"), ("1.21.1 -> 1.22.0", "no-test-difference")]
    assert decisions[1].detail == "1.22.0's tests are 1.21.1's: no test can newly fail" and decisions[1].groups == []
    assert second.pairs == third.pairs == 2 and third.by_status == {"mined": 1, "no-test-difference": 1}
    assert len(miner.ledger.read_text().splitlines()) == 2  # the third run decided nothing again
    assert json.loads((miner.out / "parse-1_20_2-parse" / "task.json").read_text())["instance_id"] == "parse-1_20_2-parse"
    # a pair decided again (its ledger line lost to a stop) first forgets what it wrote
    miner.forget("1.20.1", "1.20.2")
    assert read_tasks(miner.out / "mined.jsonl") == [] and not (miner.out / "parse-1_20_2-parse").exists()


def test_a_pair_the_machine_starves_is_not_decided_and_the_next_run_decides_it(tmp_path, isolation: Isolation):
    """Mining's runs count CPU time: a run stopped by the wall-clock backstop under its CPU limit is the machine's, so
    the pair is recorded "busy" (nothing of it kept, no group blamed) and decided by the next run, as on an idle machine."""
    starved = Limits(wall_seconds=mine.SUITE_SECONDS, cpu_seconds=mine.SUITE_SECONDS, backstop_seconds=0.01).for_validity()
    try:
        miner = Miner("parse", tmp_path, runs=2, log=lambda line: None, sandbox=Sandbox(starved, isolation))
        assert miner.sandbox.limits.clock == miner.served.limits.clock == "cpu"  # also what the tasks are validated under
        first = miner.run(["1.20.1", "1.20.2"])  # the suite's runs starved
        miner = Miner("parse", tmp_path, runs=2, log=lambda line: None)
        miner.served = Sandbox(Limits.from_env().model_copy(update={"backstop_seconds": 0.01}).for_validity(), isolation)
        miner.runtime = Runtime(TaskCatalog([]), miner.served, workers=2)
        second = miner.run(["1.20.1", "1.20.2"])  # the task's settling and validation starved
        third = Miner("parse", tmp_path, runs=2, log=lambda line: None).run(["1.20.1", "1.20.2"])
    except SdistError as exc:
        pytest.fail(f"this test needs parse's sdists from PyPI (cached after the first download): {exc}")
    decisions = read_lines(miner.ledger, PairDecision)
    assert [(d.status, d.groups) for d in decisions[:2]] == [("busy", []), ("busy", [])]
    for d in decisions[:2]:
        assert d.detail.startswith("not decided, the machine was too busy: the machine was too busy: the run was stopped by its "
                                   "wall-clock backstop of 0.01 s having used "), d.detail  # fmt: skip
        assert d.detail.endswith("(an infrastructure fault, not the run's outcome); in each of 2 attempts"), d.detail
    assert first.tasks == second.tasks == [] and first.by_status == second.by_status == {"busy": 1}
    assert third.tasks == ["parse-1_20_2-parse"] and third.by_status == {"mined": 1} and decisions[2].status == "mined"
    assert [t.id for t in read_tasks(tmp_path / "mined.jsonl")] == ["parse-1_20_2-parse"]
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == ["mined.jsonl", "mined.jsonl.lock", "parse-1_20_2-parse"]


def test_the_command_refuses_fewer_than_two_releases(capsys: pytest.CaptureFixture[str], tmp_path):
    assert authoring_cli(["mine", "parse", "--versions", "1.20.2", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == "error: parse: 1 release(s) given; a pair needs two\n"
    assert authoring_cli(["mine", "parse", "--releases", "1", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == "error: --releases 1: a pair needs two releases\n"


def test_pypi_lists_the_releases_oldest_first():
    found = releases("parse")
    assert found.index("1.20.1") + 1 == found.index("1.20.2") and found.index("1.21.1") + 1 == found.index("1.22.0")


def test_a_library_the_manifest_lists_mines_with_its_recorded_requirements(monkeypatch, capsys, tmp_path):
    # portion's tests import sortedcontainers: mined without it, every pair was "suite-broken"
    from env.authoring import __main__ as cli

    taken: list[tuple[list[str], list[str] | None]] = []

    class Recording(Miner):
        def __post_init__(self) -> None:
            taken.append((self.requirements, self.tests))
            raise MineError("stopped here: only what it was given is looked at")

    monkeypatch.setattr(cli, "Miner", Recording)
    (tmp_path / "libraries.json").write_text(json.dumps([{"name": "Portion", "version": "2.5.0", "sdists": {"2.5.0": "a" * 64},
                                                          "topic": "intervals", "split": "train", "requirements": ["sortedcontainers==2.4.0"]}]))  # fmt: skip
    monkeypatch.setattr(cli, "MANIFEST", tmp_path)
    assert authoring_cli(["mine", "portion", "--versions", "2.4.0", "2.4.1", "--out", str(tmp_path / "out")]) == 2
    assert authoring_cli(["mine", "portion", "--versions", "2.4.0", "2.4.1", "--out", str(tmp_path / "out"), "--requires", "x==1"]) == 2
    assert authoring_cli(["mine", "unlisted", "--versions", "1.0", "1.1", "--out", str(tmp_path / "out")]) == 2
    assert taken == [(["sortedcontainers==2.4.0"], None), (["x==1"], None), ([], None)]
    err = capsys.readouterr().err.splitlines()
    assert err[0] == ("portion: the tests' requirements (sortedcontainers==2.4.0) and paths (pytest's naming) as catalog/libraries.json "
                      "records them; --requires or --tests choose others")  # fmt: skip
    assert err[1:] == ["error: stopped here: only what it was given is looked at"] * 3


def test_a_pair_refused_for_its_size_under_a_smaller_line_limit_is_decided_again_and_only_its_last_decision_counts():
    group = mine.Group(code=["pkg/m.py"], fail_to_pass=["t.py::a"], status="too-large", detail="the fix changes 61 lines")
    before = PairDecision(key="1.0 -> 1.1", status="rejected", groups=[group])  # a ledger line from before the field: 40
    assert before.max_lines == 40 and before.outgrown()
    assert not before.model_copy(update={"max_lines": MAX_CHANGED}).outgrown()
    other = PairDecision(key="1.1 -> 1.2", status="too-large", detail="22 code files changed")  # the file limit is unchanged
    assert not other.outgrown()
    valid = mine.Group(code=["pkg/m.py"], fail_to_pass=["t.py::a"], status="valid", task="x-1_1-m")
    again = PairDecision(key="1.0 -> 1.1", status="mined", groups=[valid], max_lines=MAX_CHANGED)
    assert mine.latest([before, other, again]) == {"1.0 -> 1.1": again, "1.1 -> 1.2": other}
