"""The real-bug list of bench/real_bugs.py (issue 34 item 2): its shape, and the SWE-bench instance it builds from two
releases (here two releases the test writes itself, so nothing is downloaded)."""

from __future__ import annotations

import json

import pytest

from bench import real_bugs
from bench.real_bugs import BUG_LIST, BUGS, RealBug, build_instance
from env.authoring.importer import Instance
from env.patches import apply_patch


def test_the_list_holds_twenty_bugs_from_twelve_libraries_five_of_them_hard_for_the_verdict():
    assert len(BUGS) == len(BUG_LIST) >= 20  # ids are unique
    assert len({b.name for b in BUG_LIST}) >= 12
    assert len({b.name for b in BUG_LIST if b.kind}) >= 5  # src layouts, conftests importing the project, suites > 500
    for bug in BUG_LIST:
        assert bug.fail_to_pass and all("::" in t and t.split("::")[0].endswith(".py") for t in bug.fail_to_pass), bug.instance_id
        assert bug.code and all(not p.startswith("tests/") for p in bug.code), bug.instance_id
        assert set(bug.kind.split(",")) <= {"", "src", "conftest", "suite>500"}, bug.instance_id


OLD = {"calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n", "setup.py": "version = '1.0'\n",
       "tests/test_calc.py": "from calc import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n"}  # fmt: skip
NEW = {"calc.py": OLD["calc.py"].replace("a - b", "a + b").replace("a * b", "b * a"), "setup.py": "version = '1.1'\n",
       "tests/test_calc.py": OLD["tests/test_calc.py"] + "\n\ndef test_add():\n    assert add(2, 2) == 4\n"}  # fmt: skip


def test_an_instance_is_the_official_format_with_the_fix_files_diff_and_the_later_tests(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(real_bugs, "_release", lambda name, version: {"1.0": OLD, "1.1": NEW}[version])
    extra = "\n\ndef test_add_negative():\n    assert add(-1, -1) == -2\n"
    bug = RealBug("calc", "1.0", "1.1", ("tests/test_calc.py::test_add", "tests/test_calc.py::test_add_negative"), ("calc.py",),
                  "add subtracts.", extra_tests=(("tests/test_calc.py", extra),))  # fmt: skip
    instance = build_instance(bug, ["tests/test_calc.py::test_zero"])
    assert set(instance) == {"instance_id", "repo", "base_commit", "patch", "test_patch", "problem_statement", "hints_text", "created_at",
                             "version", "environment_setup_commit", "FAIL_TO_PASS", "PASS_TO_PASS", "requirements"}  # fmt: skip
    assert instance["instance_id"] == "calc-1_1" and instance["version"] == "1.0"
    assert json.loads(instance["FAIL_TO_PASS"]) == list(bug.fail_to_pass) and json.loads(instance["PASS_TO_PASS"]) == ["tests/test_calc.py::test_zero"]
    assert apply_patch(OLD, instance["patch"]) == {**OLD, "calc.py": NEW["calc.py"]}  # the fix's file only: setup.py keeps 1.0
    assert apply_patch(OLD, instance["test_patch"])["tests/test_calc.py"] == NEW["tests/test_calc.py"] + extra
    parsed = Instance.model_validate(instance)  # what import-swebench reads
    assert parsed.fail_to_pass == list(bug.fail_to_pass) and parsed.pass_to_pass == ["tests/test_calc.py::test_zero"]


def test_an_entry_whose_fix_files_do_not_differ_is_refused(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(real_bugs, "_release", lambda name, version: {"1.0": OLD, "1.1": {**NEW, "calc.py": OLD["calc.py"]}}[version])
    bug = RealBug("calc", "1.0", "1.1", ("tests/test_calc.py::test_add",), ("calc.py",), "add subtracts.")
    with pytest.raises(ValueError, match=r"^calc-1_1: the releases do not differ in calc.py$"):
        build_instance(bug, [])


def test_the_instance_command_writes_a_bugs_instance_for_import_swebench(monkeypatch: pytest.MonkeyPatch, tmp_path, capsys):
    # docs/repository-tasks.md's real-bug command: `bench/real_bugs.py instance ID --out FILE`, then import-swebench FILE
    monkeypatch.setattr(real_bugs, "_release", lambda name, version: {"1.0": OLD, "1.1": NEW}[version])
    bug = RealBug("calc", "1.0", "1.1", ("tests/test_calc.py::test_add",), ("calc.py",), "add subtracts.")
    monkeypatch.setitem(BUGS, bug.instance_id, bug)
    monkeypatch.setattr(real_bugs, "pass_to_pass", lambda b: ["tests/test_calc.py::test_zero"])
    out = tmp_path / "calc.jsonl"
    assert real_bugs.main(["instance", "calc-1_1", "--out", str(out)]) == 0
    [line] = out.read_text().splitlines()
    assert json.loads(line) == build_instance(bug, ["tests/test_calc.py::test_zero"])
    assert capsys.readouterr().err == f"wrote calc-1_1 into {out}\n"
    assert real_bugs.main(["instance", "list"]) == 0 and "calc-1_1" in capsys.readouterr().out.splitlines()
    with pytest.raises(SystemExit) as refused:
        real_bugs.main(["instance", "calc-9_9"])
    assert refused.value.code == 2 and f"error: no bug 'calc-9_9'; `instance list` prints the {len(BUGS)} ids" in capsys.readouterr().err
    docs = (real_bugs.Path(__file__).resolve().parents[1] / "docs" / "repository-tasks.md").read_text()
    assert ".venv/bin/python bench/real_bugs.py instance parse-1_20_2 --out parse-hyphen.jsonl\n" in docs and "parse-1_20_2" in BUGS
