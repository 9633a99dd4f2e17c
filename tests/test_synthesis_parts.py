"""The parts task synthesis and import are built from, on small sources: mutation operators, the mechanism read
from a fix, problem statements, difficulty, requirement pins at a SWE-bench environment_setup_commit, and why a library
is refused."""

from __future__ import annotations

import difflib
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from env.authoring.baseline import baseline, untrusted
from env.authoring.difficulty import Difficulty, call_distance
from env.authoring.importer import ImportError_, Instance, pypi_release, setup_requirements
from env.authoring.library import SynthesisError, load_library
from env.authoring.mechanism import infer_mechanisms
from env.authoring.mutate import OPERATORS, mutants
from env.authoring.sdist import parse_pin
from env.authoring.statement import keep_test_frames, problem_statement
from env.graders.mechanisms import MECHANISMS
from env.project import load_repo_task
from env.sandbox.limits import Limits
from env.sandbox.runner import Sandbox
from env.verdict.outcome import RepoVerdict, parse_records

SOURCE = '''"""A module with one of everything the operators mutate."""

LIMIT = 10


def window(items, start, size):
    """The items from start, at most size of them."""
    if size <= 0:
        raise ValueError("size must be positive")
    end = start + size
    return items[start:end]


def total(prices, discount):
    result = 0
    for price in prices:
        result += price
    if discount and result > LIMIT:
        result = result - discount
    return result


def lookup(table, key, default):
    try:
        return table[key]
    except KeyError:
        return default


def pair(a, b):
    return divmod(a, b)


def join_tags(tags, sep=", ", seen=None):
    if seen is None:
        seen = []
    for i, tag in enumerate(tags):
        if not tag:
            continue
        seen.append(tag.strip())
        if len(seen) > LIMIT:
            break
    return sep.join(seen)


def grade(score):
    if score >= 90:
        mark = "A"
    elif score >= 50:
        mark = "B"
    else:
        mark = "C"
    return mark


def fill(table, n):
    for i in range(n):
        table[i] = i
    table["count"] = n
    return table
'''


def _diff(before: str, after: str) -> list[str]:
    return [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0) if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def test_every_operator_plants_a_bug_in_this_module():
    found = mutants(SOURCE, "m.py")
    assert {m.operator for m in found} == set(OPERATORS)
    assert {m.function for m in found} == {"window", "total", "lookup", "pair", "join_tags", "grade", "fill"}  # never module-level code
    assert len({m.key for m in found}) == len(found)  # each file once (the more specific operator names it)


@pytest.mark.parametrize(
    ("operator", "before", "after"),
    [
        ("boundary", "    if size <= 0:", "    if size < 0:"),
        ("slice_off_by_one", "    return items[start:end]", "    return items[start:end + 1]"),
        ("wrong_exception", "    except KeyError:", "    except IndexError:"),
        ("negate_condition", "    if discount and result > LIMIT:", "    if not (discount and result > LIMIT):"),
        ("drop_condition", "    if discount and result > LIMIT:", "    if result > LIMIT:"),
        ("swap_arguments", "    return divmod(a, b)", "    return divmod(b, a)"),
        ("swap_operator", "        result += price", "        result -= price"),
        ("wrong_variable", "    end = start + size", "    end = items + size"),  # the first other local name
        ("change_constant", "    result = 0", "    result = 1"),
    ],
)
def test_an_operator_changes_one_line_and_keeps_the_rest_of_the_file(operator: str, before: str, after: str):
    found = [m for m in mutants(SOURCE, "m.py") if m.operator == operator and _diff(SOURCE, m.source) == [f"-{before}", f"+{after}"]]
    assert len(found) == 1
    line = SOURCE.splitlines().index(before) + 1
    assert (found[0].start, found[0].end) == (line, line)


def test_dropping_a_statement_removes_its_lines_and_a_lone_return_becomes_pass():
    dropped = [m for m in mutants(SOURCE, "m.py") if m.operator == "drop_statement" and _diff(SOURCE, m.source) == ["-    end = start + size"]]
    assert len(dropped) == 1 and dropped[0].mechanisms == ("missing_statement",)
    lone = [m for m in mutants(SOURCE, "m.py") if m.operator == "drop_return" and m.function == "lookup"]
    assert [_diff(SOURCE, m.source) for m in lone] == [["-        return table[key]", "+        pass"], ["-        return default", "+        pass"]]
    loop = [m for m in mutants(SOURCE, "m.py") if m.operator == "drop_statement" and m.start == SOURCE.splitlines().index("        result += price") + 1]
    assert [_diff(SOURCE, m.source) for m in loop] == [["-        result += price", "+        pass"]]


def test_only_covered_lines_are_mutated():
    line = SOURCE.splitlines().index("    return divmod(a, b)") + 1
    found = mutants(SOURCE, "m.py", covered={line})
    assert found and {m.start for m in found} == {line} and {m.function for m in found} == {"pair"}


def test_the_mechanism_read_back_from_each_fix_is_the_planted_one():
    found = mutants(SOURCE, "m.py")
    for mutant in found:
        read = infer_mechanisms({"m.py": mutant.source}, {"m.py": SOURCE})  # buggy -> fixed, as a gold patch goes
        assert set(read) & set(mutant.mechanisms), (mutant.operator, mutant.description, read)
        assert set(read) <= set(MECHANISMS)


def test_a_fix_the_rules_do_not_recognise_names_no_mechanism():
    before = "def f(x):\n    return [x]\n"
    after = "def f(x):\n    return {'value': x}\n"
    assert infer_mechanisms({"f.py": before}, {"f.py": after}) == []
    assert infer_mechanisms({"f.py": before}, {"f.py": before}) == []


def test_the_problem_statement_keeps_the_tests_frames_and_drops_the_projects():
    excerpt = (
        "tests/test_m.py:12: in test_window\n    assert window([1, 2, 3], 0, 2) == [1, 2]\n"
        "m.py:11: in window\n    return items[start:end + 1]\n"
        "E   assert [1, 2, 3] == [1, 2]\n"
    )
    assert keep_test_frames(excerpt) == "tests/test_m.py:12: in test_window\n    assert window([1, 2, 3], 0, 2) == [1, 2]\nE   assert [1, 2, 3] == [1, 2]"
    verdict = RepoVerdict(outcomes={"tests/test_m.py::test_window": "FAILED"}, excerpts={"tests/test_m.py::test_window": excerpt})
    statement = problem_statement("m", ["tests/test_m.py::test_window"], verdict)
    assert statement.startswith("1 test of m fails:\n- tests/test_m.py::test_window: assert [1, 2, 3] == [1, 2]\n")
    assert "items[start:end" not in statement  # the planted line is the agent's to find


def test_difficulty_levels_follow_their_facts():
    assert Difficulty(5, 1, None).level == "easy"
    assert Difficulty(1, 2, None).level == "medium"
    assert Difficulty(1, 4, False).level == "hard"
    assert Difficulty(1, 0, True).level == "medium"
    assert Difficulty(2, 1, None).basis() == {"fail_to_pass": 2, "call_distance": 1, "heuristic_solved": None}
    # no visible failing test (a mined bug: its failing tests came with the fix, all held out) is no easier than one
    assert Difficulty(0, 2, None).points == Difficulty(1, 2, None).points == 2 and Difficulty(0, 3, None).level == "hard"


def test_call_distance_counts_the_functions_between_a_failing_test_and_the_fault(tmp_path: Path):
    (tmp_path / "repo" / "tests").mkdir(parents=True)
    (tmp_path / "repo" / "m.py").write_text("def inner(x):\n    return x\n\n\ndef outer(x):\n    return inner(x)\n")
    (tmp_path / "repo" / "tests" / "test_m.py").write_text("from m import outer, inner\n\n\ndef test_outer():\n    assert outer(1) == 1\n\n\ndef test_inner():\n    assert inner(1) == 1\n")
    (tmp_path / "gold.patch").write_text("")
    for tests, distance in ((["tests/test_m.py::test_outer"], 2), (["tests/test_m.py::test_inner"], 1), (["tests/test_m.py::test_outer", "tests/test_m.py::test_inner"], 1)):
        (tmp_path / "task.json").write_text(json.dumps({"id": "t", "problem_statement": "p", "FAIL_TO_PASS": tests}))
        assert call_distance(load_repo_task(tmp_path), "inner") == distance
    # Every failing test held out (its code only in test_patch.diff): the distance is read from the held-out tests.
    (tmp_path / "repo" / "tests" / "test_m.py").write_text("from m import outer, inner\n")
    (tmp_path / "test_patch.diff").write_text(
        "--- a/tests/test_m.py\n+++ b/tests/test_m.py\n@@ -1 +1,5 @@\n from m import outer, inner\n+\n+\n+def test_outer():\n+    assert outer(1) == 1\n"
    )
    (tmp_path / "task.json").write_text(json.dumps({"id": "t", "problem_statement": "p", "FAIL_TO_PASS": ["tests/test_m.py::test_outer"],
                                                    "HELD_OUT": ["tests/test_m.py::test_outer"]}))  # fmt: skip
    held = load_repo_task(tmp_path)
    assert held.visible_fail_to_pass == [] and call_distance(held, "inner") == 2


def test_requirements_come_from_the_environment_setup_commit_pins_only(tmp_path: Path):
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(tmp_path), *args], capture_output=True, text=True, check=True).stdout.strip()

    git("init", "-q")
    (tmp_path / "requirements-test.txt").write_text("# tests\npytest-mock==3.14.0\nhypothesis>=6\n-r base.txt\nSphinx==8.0.0  # docs\n")
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "docs.txt").write_text("sphinx==7.4.7 ; python_version >= '3.9'\n")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "setup")
    commit = git("rev-parse", "HEAD")
    pins, skipped = setup_requirements(tmp_path, commit)
    assert pins == ["pytest-mock==3.14.0", "Sphinx==8.0.0"]  # one pin a distribution: the first file's (sorted)
    (tmp_path / "requirements-test.txt").write_text("pytest-mock==3.14.0\n")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "one pin less")
    assert setup_requirements(tmp_path, git("rev-parse", "HEAD"))[0] == ["pytest-mock==3.14.0", "sphinx==7.4.7; python_version >= '3.9'"]
    assert skipped == ["requirements-test.txt: hypothesis>=6", "requirements-test.txt: -r base.txt"]
    with pytest.raises(ImportError_, match="is not in"):
        setup_requirements(tmp_path, "0" * 40)
    with pytest.raises(ImportError_, match="is not a commit id"):
        setup_requirements(tmp_path, "HEAD; rm -rf /")


def test_a_release_is_named_exactly():
    assert parse_pin("parse==1.20.2") == ("parse", "1.20.2")
    assert parse_pin(" python-dateutil == 2.9.0.post0 ") == ("python-dateutil", "2.9.0.post0")
    for bad in ("parse", "parse>=1.0", "parse==", "==1.0", "parse==1.0; rm"):
        with pytest.raises(ValueError, match="is not NAME==VERSION"):
            parse_pin(bad)


def test_the_heuristic_agent_s_outcome_is_recorded_as_a_difficulty_signal(isolation, tmp_path: Path):
    from env.eval.__main__ import main as eval_cli

    shutil.copytree(Path(__file__).resolve().parents[1] / "tasks" / "repo" / "repo-pagination-off-by-one", tmp_path / "task")
    assert eval_cli(["difficulty", str(tmp_path / "task"), "--out", str(tmp_path / "steps")]) == 0
    task = load_repo_task(tmp_path / "task")
    assert task.difficulty_basis == {"fail_to_pass": 6, "call_distance": 1, "heuristic_solved": True}
    assert task.difficulty == "easy"
    assert (tmp_path / "steps" / "repo-pagination-off-by-one.jsonl").read_text().count("\n") >= 2  # the episode's steps, kept


def test_positions_hold_after_a_form_feed_and_a_lone_statement_keeps_its_tabs():
    source = "\x0c\ndef f(x):\n\ty = x + 1\n\treturn y\n\n\ndef g(items, n):\n\tif n:\n\t\treturn items[n if n > 0 else 0:]\n\treturn items\n"
    found = mutants(source, "f.py")
    dropped = [m for m in found if m.operator == "drop_statement" and m.function == "f"]
    assert [_diff(source, m.source) for m in dropped] == [["-\ty = x + 1"]]
    lone = [m for m in found if m.operator == "drop_return" and m.function == "g" and m.start == 9]
    assert [_diff(source, m.source) for m in lone] == [["-\t\treturn items[n if n > 0 else 0:]", "+\t\tpass"]]
    sliced = sorted(_diff(source, m.source)[1] for m in found if m.operator == "slice_off_by_one")
    assert sliced == ["+\t\treturn items[(n if n > 0 else 0) + 1:]", "+\t\treturn items[(n if n > 0 else 0) - 1:]"]


def test_two_edits_giving_one_file_are_one_candidate():
    source = "def f(a):\n    a.append(1)\n    a.append(1)\n    return a\n"
    dropped = [m for m in mutants(source, "f.py") if m.operator == "drop_statement"]
    assert len(dropped) == 1 and len({m.key for m in mutants(source, "f.py")}) == len(mutants(source, "f.py"))


def test_a_coverage_record_is_read_only_when_asked_for_and_only_when_well_formed():
    good = json.dumps({"coverage": {"tests": ["t.py::a", "t.py::b"], "lines": {"m.py": {"3": [0, 1], "4": [1]}}}})
    assert parse_records(good, coverage=True).covered == {"m.py": {3: ["t.py::a", "t.py::b"], 4: ["t.py::b"]}}
    assert parse_records(good).covered == {}  # a grading run never takes one, whatever the project prints
    for forged in ({"tests": "x", "lines": {}}, {"tests": ["a"], "lines": {"m.py": {"x": [0]}}}, {"tests": ["a"], "lines": {"m.py": 7}},
                   {"tests": ["a"], "lines": {"m.py": {"3": [5, -1, "0"]}}}, ["not", "a", "record"]):  # fmt: skip
        verdict = parse_records(json.dumps({"coverage": forged}), coverage=True)
        assert verdict.covered in ({}, {"m.py": {3: []}})


def test_a_release_that_is_not_the_instance_s_version_is_refused():
    instance = Instance.model_validate({"instance_id": "x", "patch": "", "problem_statement": "p", "FAIL_TO_PASS": '["t.py::a"]', "version": 1.2})
    assert instance.version == "1.2" and pypi_release("parse==1.2.3", instance) == ("parse", "1.2.3")
    with pytest.raises(ImportError_, match=r"--pypi parse==1.3.0 is not the instance's version '1.2'"):
        pypi_release("parse==1.3.0", instance)
    assert pypi_release("parse", instance) == ("parse", "1.2")
    shapes = Instance.model_validate({"instance_id": "y", "patch": "", "problem_statement": "p", "FAIL_TO_PASS": ["t.py::a"],
                                      "PASS_TO_PASS": None, "environment_setup_commit": None, "requirements": "six==1.16.0"})  # fmt: skip
    assert (shapes.pass_to_pass, shapes.environment_setup_commit, shapes.requirements) == ([], "", ["six==1.16.0"])


def test_one_bad_instance_does_not_stop_the_others(tmp_path: Path, capsys):
    from env.authoring.__main__ import main as tasks_cli

    rows = [{"instance_id": "no-patch", "problem_statement": "p", "FAIL_TO_PASS": "[]"}, {"instance_id": "no-clone", "patch": "", "problem_statement": "p",
            "FAIL_TO_PASS": '["t.py::a"]', "base_commit": "abc1234"}]  # fmt: skip
    (tmp_path / "rows.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert tasks_cli(["import-swebench", str(tmp_path / "rows.jsonl"), "--repo", str(tmp_path), "--out", str(tmp_path / "out")]) == 1
    said = capsys.readouterr().out
    assert "skipped no-patch: 1 validation error for Instance\npatch\n  Field required" in said
    assert f"skipped no-clone: no-clone: no git clone at {tmp_path} or {tmp_path / 'no-clone'}" in said


def test_a_synthesis_folder_belongs_to_one_library(tmp_path: Path, runtime):
    from env.authoring.library import Library, SynthesisError
    from env.authoring.synthesize import Synthesis

    one = Library("one", "1.0", {"one.py": "def f():\n    return 1\n", "test_one.py": "from one import f\n"}, tests=["test_one.py"])
    Synthesis(one, tmp_path, sandbox=runtime.sandbox)
    Synthesis(one, tmp_path, sandbox=runtime.sandbox)  # the same library again: resumes
    other = Library("two", "1.0", one.files, tests=["test_one.py"])
    with pytest.raises(SynthesisError, match=r"holds the synthesis of one-1.0 .*synthesize two-1.0 with these into another --out"):
        Synthesis(other, tmp_path, sandbox=runtime.sandbox)


def test_a_library_no_test_of_which_can_be_trusted_says_which_failed_where_and_why():
    sandboxed = RepoVerdict(
        outcomes={f"tests/test_a.py::test_{i:02}": "PASSED" for i in range(12)} | {"tests/test_b.py::test_boxed": "FAILED"},
        excerpts={"tests/test_b.py::test_boxed": "tests/test_b.py:3: in test_boxed\nE   AssertionError: no network here"},
    )
    split = RepoVerdict(
        outcomes={f"tests/test_a.py::test_{i:02}": "PASSED" if i == 0 else "ERROR" for i in range(12)},
        excerpts={
            f"tests/test_a.py::test_{i:02}": "E   adbg_host.stand_ins.Unsupported: a generator of the project's" for i in range(1, 12)
        },
        ops={"tests/test_a.py::test_00": 0},
    )
    unsupported = "split: ERROR: adbg_host.stand_ins.Unsupported: a generator of the project's"
    assert untrusted("lib-1.0", sandboxed, split) == (
        "lib-1.0: no test passes both sandboxed and under the split while reaching the project's code; of its 13 test(s) 1 failed "
        "sandboxed, 11 under the split and 1 did not reach the project's code; the first 10:\n"
        "  tests/test_a.py::test_00: did not reach the project's code (it passed both ways without one call into it)\n"
        + "".join(f"  tests/test_a.py::test_{i:02}: {unsupported}\n" for i in range(1, 10))
        + "  ... and 3 more"
    )


def test_a_library_none_of_whose_tests_can_be_trusted_is_refused_naming_where_each_failed(isolation, tmp_path: Path):
    project = tmp_path / "tiny"
    (project / "tiny").mkdir(parents=True)
    (project / "tests").mkdir()
    (project / "tiny" / "__init__.py").write_text("def add(a, b):\n    return a + b\n")
    (project / "tests" / "test_tiny.py").write_text(
        "import tiny\n\n\ndef test_reads():\n    with open(tiny.__file__) as h:\n        assert 'def add' in h.read()\n\n\n"
        "def test_alone():\n    assert 1 + 1 == 2\n\n\ndef test_wrong():\n    assert tiny.add(1, 1) == 3\n"
    )
    sandbox = Sandbox(Limits(wall_seconds=60, cpu_seconds=60).for_validity(), isolation, warm=False)
    with pytest.raises(SynthesisError) as refused:
        baseline(load_library(str(project)), sandbox, tmp_path / "state")
    assert re.sub(r"\(open /\S+/tiny/__init__\.py\)", "(open <run>/tiny/__init__.py)", str(refused.value)) == (
        "tiny-local: no test passes both sandboxed and under the split while reaching the project's code; of its 3 test(s) 1 failed "
        "sandboxed, 1 under the split and 1 did not reach the project's code; the first 3:\n"
        "  tests/test_tiny.py::test_alone: did not reach the project's code (it passed both ways without one call into it)\n"
        "  tests/test_tiny.py::test_reads: split: FAILED: adbg_host.guard.Refused: the trusted test process runs no program and reads "
        "no project file (open <run>/tiny/__init__.py): the project's code runs only in the sandbox\n"
        "  tests/test_tiny.py::test_wrong: sandboxed: FAILED: assert 2 == 3"
    )
