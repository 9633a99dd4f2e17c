"""import-swebench on the layouts real libraries have (issue 34 item 1): each project here is built by the test as a git
clone and one SWE-bench instance, imported with the command a user runs (no --env, no separate `place`), then
validated. Covered: a src layout whose conftest imports the project and whose fixture builds project objects, a
namespace package under src/, a flat layout with a root conftest, data files the tests read from the repository,
PASS_TO_PASS tests that never reach the project or fail on the gold tree for reasons outside the fix (dropped, with a
note), a FAIL_TO_PASS test only the sandboxed run passes (untrusted, honestly), a FAIL_TO_PASS test the gold fails
(refused), and the gold patch graded back as a SWE-bench prediction.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from env.authoring.__main__ import main as tasks_cli
from env.authoring.predictions import Prediction, evaluate
from env.authoring.sdist import files_source_root
from env.authoring.validate import validate_task
from env.families.catalog import TaskCatalog
from env.families.registry import load_task
from env.patches import make_patch
from env.project import RepoTask
from env.runtime import Runtime

CORE = "def add(a, b):\n    return a - b\n\n\nclass Box:\n    def __init__(self, items):\n        self.items = list(items)\n\n    def size(self):\n        return len(self.items)\n"
FIXED = CORE.replace("a - b", "a + b")


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout.strip()


def imported(tmp_path: Path, files: dict[str, str], fixed: dict[str, str], f2p: list[str], p2p: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, Path]:
    """Commit ``files`` to a fresh clone, write its instance and run import-swebench: (exit code, output, task folder)."""
    clone = tmp_path / "clone"
    clone.mkdir(parents=True)
    git(clone, "init", "-q")
    for rel, text in files.items():
        (clone / rel).parent.mkdir(parents=True, exist_ok=True)
        (clone / rel).write_text(text)
    git(clone, "add", "-A")
    git(clone, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "base")
    instance = {"instance_id": "acme__calc-1", "repo": "acme/calc", "base_commit": git(clone, "rev-parse", "HEAD"),
                "patch": make_patch(files, fixed), "problem_statement": "add subtracts.", "FAIL_TO_PASS": json.dumps(f2p),
                "PASS_TO_PASS": json.dumps(p2p)}  # fmt: skip
    (tmp_path / "instances.jsonl").write_text(json.dumps(instance) + "\n")
    capsys.readouterr()
    code = tasks_cli(["import-swebench", str(tmp_path / "instances.jsonl"), "--repo", str(clone), "--out", str(tmp_path / "tasks")])
    return code, capsys.readouterr().out, tmp_path / "tasks" / "acme__calc-1"


def problems(runtime: Runtime, task: RepoTask) -> dict[str, str]:
    report = validate_task(runtime, task, runs=2)
    return {c.name: c.detail for c in report.checks if not c.ok}


def test_a_src_layout_whose_conftest_imports_the_project_imports_valid_and_trusted(runtime, tmp_path, capsys):
    conftest = "import pytest\nfrom calc.core import Box\n\n\n@pytest.fixture\ndef box():\n    return Box([1, 2, 3])\n"
    tests = ("from calc.core import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n\n\ndef test_box(box):\n    assert box.size() == 3\n\n\n"
             "def test_arithmetic():\n    assert 1 + 1 == 2\n")  # fmt: skip
    files = {"pyproject.toml": "[project]\nname = 'calc'\n", "src/calc/__init__.py": "", "src/calc/core.py": CORE, "tests/conftest.py": conftest, "tests/test_core.py": tests}
    code, out, folder = imported(tmp_path, files, {**files, "src/calc/core.py": FIXED}, ["tests/test_core.py::test_add"],
                                 ["tests/test_core.py::test_box", "tests/test_core.py::test_arithmetic"], capsys)  # fmt: skip
    assert code == 0, out
    assert out.splitlines()[1:4] == [
        "  acme__calc-1: 3 test(s) run split, 0 sandboxed; trusted",
        "  dropped from PASS_TO_PASS: tests/test_core.py::test_arithmetic: passes without reaching the project's code (no change to the project can break it)",
        f"next: python -m env.authoring validate {tmp_path / 'tasks'}",
    ]
    data = json.loads((folder / "task.json").read_text())
    assert data["environment"] == {"PYTHONPATH": "src"} and data["PASS_TO_PASS"] == ["tests/test_core.py::test_box"]
    assert data["sandboxed"] == [] and data["dropped"] == {"tests/test_core.py::test_arithmetic": "passes without reaching the project's code (no change to the project can break it)"}
    task = load_task(folder)
    assert problems(runtime, task) == {} and task.trusted


def test_a_namespace_package_and_a_data_file_read_from_the_repository_import_valid(runtime, tmp_path, capsys):
    tests = ("import pathlib\n\nfrom acme.calc.core import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n\n\n"
             "def test_cases_file():\n    wanted = int((pathlib.Path(__file__).parents[1] / 'data' / 'cases.txt').read_text())\n    assert add(1, 0) + 1 == wanted\n")  # fmt: skip
    files = {"src/acme/calc/__init__.py": "", "src/acme/calc/core.py": CORE, "tests/test_core.py": tests, "data/cases.txt": "2\n"}
    assert files_source_root(files) == "src"  # src/acme/ has no __init__.py of its own
    code, out, folder = imported(tmp_path, files, {**files, "src/acme/calc/core.py": FIXED}, ["tests/test_core.py::test_add"], ["tests/test_core.py::test_cases_file"], capsys)
    assert code == 0, out
    task = load_task(folder)
    assert task.pass_to_pass == ["tests/test_core.py::test_cases_file"] and task.dropped == {}
    assert problems(runtime, task) == {} and task.trusted


def test_a_flat_layout_with_a_root_conftest_drops_a_pass_to_pass_test_the_gold_fails(runtime, tmp_path, capsys):
    conftest = "import pytest\n\nimport calc\n\n\n@pytest.fixture\ndef zero():\n    return calc.add(0, 0)\n"
    tests = ("import os\n\nfrom calc import add\n\n\ndef test_add(zero):\n    assert add(2, 2) == 4 + zero\n\n\n"
             "def test_needs_a_service():\n    assert add(1, 1) == 2 - 0 and os.environ['CALC_SERVICE_URL']\n")  # fmt: skip
    files = {"calc/__init__.py": "from calc.core import add, Box\n", "calc/core.py": CORE, "conftest.py": conftest, "tests/test_calc.py": tests}
    code, out, folder = imported(tmp_path, files, {**files, "calc/core.py": FIXED}, ["tests/test_calc.py::test_add"], ["tests/test_calc.py::test_needs_a_service"], capsys)
    assert code == 0, out
    task = load_task(folder)
    assert task.environment == {} and task.pass_to_pass == [] and task.sandboxed == []
    assert list(task.dropped) == ["tests/test_calc.py::test_needs_a_service"]
    assert task.dropped["tests/test_calc.py::test_needs_a_service"].startswith("fails on the gold tree either way: ")
    assert "CALC_SERVICE_URL" in task.dropped["tests/test_calc.py::test_needs_a_service"]
    assert problems(runtime, task) == {} and task.trusted


def test_a_fail_to_pass_test_the_gold_fails_is_refused_with_its_reason(tmp_path, capsys):
    tests = "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 5\n"
    files = {"calc/__init__.py": "from calc.core import add\n", "calc/core.py": CORE, "tests/test_calc.py": tests}
    code, out, folder = imported(tmp_path, files, {**files, "calc/core.py": FIXED}, ["tests/test_calc.py::test_add"], [], capsys)
    assert code == 1 and not folder.exists()
    last = [line for line in out.splitlines() if line.startswith("invalid ")]
    assert len(last) == 1 and last[0].startswith("invalid acme__calc-1: FAIL_TO_PASS test tests/test_calc.py::test_add fails on the gold tree: ")
    assert last[0].endswith(" (folder removed)")


def test_a_fail_to_pass_test_only_the_sandboxed_run_passes_makes_the_task_untrusted(runtime, tmp_path, capsys):
    # The test reads a project function's code object: the split carries no code across, the sandboxed run does.
    tests = "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4 and add.__code__.co_argcount == 2\n"
    files = {"calc/__init__.py": "from calc.core import add\n", "calc/core.py": CORE, "tests/test_calc.py": tests}
    code, out, folder = imported(tmp_path, files, {**files, "calc/core.py": FIXED}, ["tests/test_calc.py::test_add"], [], capsys)
    task = load_task(folder)
    assert code == 0 and task.sandboxed == ["tests/test_calc.py::test_add"] and not task.trusted
    assert "UNTRUSTED (a FAIL_TO_PASS test runs sandboxed)" in out and "  sandboxed: tests/test_calc.py::test_add (the split: " in out
    assert problems(runtime, task) == {}
    assert validate_task(runtime, task, runs=1).trusted is False


def test_the_gold_patch_as_a_prediction_is_resolved_and_the_buggy_tree_is_not(runtime, tmp_path, capsys):
    files = {"calc/__init__.py": "from calc.core import add\n", "calc/core.py": CORE,
             "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n"}  # fmt: skip
    code, out, folder = imported(tmp_path, files, {**files, "calc/core.py": FIXED}, ["tests/test_calc.py::test_add"], ["tests/test_calc.py::test_zero"], capsys)
    assert code == 0, out
    task = load_task(folder)
    grader = Runtime(TaskCatalog([task]), runtime.sandbox)
    gold = Prediction(instance_id="acme__calc-1", model_name_or_path="gold", model_patch=task.gold_patch)
    assert evaluate(grader, gold).model_dump() == {"instance_id": "acme__calc-1", "resolution": "FULL", "detail": ""}
    untouched = make_patch({"calc/core.py": CORE}, {"calc/core.py": CORE + "\n# unchanged behaviour\n"})  # the buggy tree, as a non-empty patch
    assert evaluate(grader, gold.model_copy(update={"model_patch": untouched})).resolution == "NO"
    (tmp_path / "preds.jsonl").write_text(gold.model_dump_json() + "\n")
    capsys.readouterr()
    assert tasks_cli(["evaluate", str(tmp_path / "preds.jsonl"), str(folder)]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[0])["resolution"] == "FULL"


def test_no_place_writes_the_folder_only_and_a_host_that_cannot_run_the_verdict_says_so(tmp_path, capsys, monkeypatch, isolation):
    files = {"calc/__init__.py": "from calc.core import add\n", "calc/core.py": CORE,
             "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n\n\ndef test_nothing():\n    assert True\n"}  # fmt: skip
    code, out, folder = imported(tmp_path / "a", files, {**files, "calc/core.py": FIXED}, ["tests/test_calc.py::test_add"], ["tests/test_calc.py::test_nothing"], capsys)
    assert code == 0 and "dropped from PASS_TO_PASS: tests/test_calc.py::test_nothing" in out
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "instances.jsonl").write_text((tmp_path / "a" / "instances.jsonl").read_text())
    argv = ["import-swebench", str(tmp_path / "b" / "instances.jsonl"), "--repo", str(tmp_path / "a" / "clone"), "--out", str(tmp_path / "b" / "tasks")]
    capsys.readouterr()
    assert tasks_cli([*argv, "--no-place"]) == 0
    assert capsys.readouterr().out.splitlines() == [f"imported acme__calc-1 -> {tmp_path / 'b' / 'tasks' / 'acme__calc-1'}", f"next: python -m env.authoring validate {tmp_path / 'b' / 'tasks'}"]
    data = json.loads((tmp_path / "b" / "tasks" / "acme__calc-1" / "task.json").read_text())
    assert "sandboxed" not in data and "dropped" not in data and data["PASS_TO_PASS"] == ["tests/test_calc.py::test_nothing"]
    blind = isolation.model_copy(update={"can_execute": False, "reason": "no user namespaces on this host"})
    monkeypatch.setattr("env.authoring.__main__.probe_isolation", lambda: blind)
    assert tasks_cli(argv) == 1  # fail closed: an unplaced task is not reported as imported cleanly
    said = capsys.readouterr().out.splitlines()
    assert said[-2] == "invalid acme__calc-1: not placed: this host cannot run the verdict: no user namespaces on this host"


def test_tests_inside_the_projects_package_run_split_and_trusted(runtime, tmp_path, capsys):
    """isodate keeps its tests in src/isodate/tests/: pytest imports them as isodate.tests.test_x, a package under the
    project's own. The test package is the tests' code (the test host's), its parent the project (the sandbox's)."""
    tests = ("from calc.core import add\nfrom calc.tests import helpers\n\n\ndef test_add():\n    assert add(2, 2) == helpers.FOUR\n\n\n"
             "def test_add_zero():\n    assert add(2, 0) == 2\n")  # fmt: skip
    files = {"src/calc/__init__.py": "", "src/calc/core.py": CORE, "src/calc/tests/__init__.py": "", "src/calc/tests/helpers.py": "FOUR = 4\n",
             "src/calc/tests/test_core.py": tests}  # fmt: skip
    code, out, folder = imported(tmp_path, files, {**files, "src/calc/core.py": FIXED}, ["src/calc/tests/test_core.py::test_add"],
                                 ["src/calc/tests/test_core.py::test_add_zero"], capsys)  # fmt: skip
    assert code == 0, out
    assert out.splitlines()[1] == "  acme__calc-1: 2 test(s) run split, 0 sandboxed; trusted"
    task = load_task(folder)
    assert problems(runtime, task) == {} and task.trusted
