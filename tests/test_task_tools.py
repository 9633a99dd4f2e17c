"""python -m env.authoring: the validator catches invalid tasks; SWE-bench / SWE-smith import; predictions round trip."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from env.authoring.predictions import Prediction, evaluate
from env.authoring.validate import validate_task
from env.families.catalog import TaskCatalog
from env.families.registry import load_task
from env.families.repo.family import REPO
from env.models import DebugAction
from env.patches import make_patch
from env.runtime import Runtime
from tests import repo_fixture

ROOT = Path(__file__).resolve().parents[1]


def failing(report) -> dict[str, str]:
    return {c.name: c.detail for c in report.checks if not c.ok}


def test_the_fixture_task_is_valid(runtime, tmp_path):
    report = validate_task(runtime, load_task(repo_fixture.write_task(tmp_path / "ok")), runs=3)
    assert failing(report) == {}
    assert [c.name for c in report.checks] == [
        "gold patch applies", "gold patch changes only source files", "every run set up", "every listed test ran",
        "buggy state fails every FAIL_TO_PASS test", "buggy state passes every PASS_TO_PASS test", "gold patch passes every test",
        "identical results over 3 runs", "no test passes vacuously",
    ]


def test_a_gold_patch_that_fails_is_caught(runtime, tmp_path):
    gold = repo_fixture.gold_files()
    gold["shop/prices.py"] = gold["shop/prices.py"].replace('"0.50"', '"0.55"')
    report = validate_task(runtime, load_task(repo_fixture.write_task(tmp_path / "bad", gold=gold)), runs=2)
    assert failing(report) == {"gold patch passes every test": "tests/test_cart.py::test_total_and_contents"}


def test_a_flaky_test_is_caught(runtime, tmp_path):
    files = repo_fixture.buggy_files()
    # String hashes differ between processes: which letter comes first out of a set changes run to run.
    files["shop/prices.py"] += "\n\ndef first_letter():\n    return next(iter(set('abcdefghijklmnopqrstuvwxyz')))\n"
    files["tests/test_cart.py"] += "\n\ndef test_first_letter():\n    from shop.prices import first_letter\n    assert first_letter() in 'abcdefghijklm'\n"
    gold = {**repo_fixture.gold_files(), "shop/prices.py": files["shop/prices.py"], "tests/test_cart.py": files["tests/test_cart.py"]}
    folder = repo_fixture.write_task(tmp_path / "flaky", files, gold, PASS_TO_PASS=repo_fixture.P2P + ["tests/test_cart.py::test_first_letter"])
    problems = failing(validate_task(runtime, load_task(folder), runs=10))
    # Each state passes about half its runs: both are stable over 10 runs with probability 2 x 2^-10.
    one = "state differs (tests/test_cart.py::test_first_letter)"
    assert problems["identical results over 10 runs"] in (f"buggy {one} and gold {one}", f"buggy {one}", f"gold {one}")


def test_a_flaky_test_the_grade_does_not_count_is_no_instability(runtime, tmp_path):
    """The same flaky test, in neither list: the verdict never counts it (more-itertools' suite has such tests)."""
    files = repo_fixture.buggy_files()
    files["shop/prices.py"] += "\n\ndef first_letter():\n    return next(iter(set('abcdefghijklmnopqrstuvwxyz')))\n"
    files["tests/test_cart.py"] += "\n\ndef test_first_letter():\n    from shop.prices import first_letter\n    assert first_letter() in 'abcdefghijklm'\n"
    gold = {**repo_fixture.gold_files(), "shop/prices.py": files["shop/prices.py"], "tests/test_cart.py": files["tests/test_cart.py"]}
    folder = repo_fixture.write_task(tmp_path / "flaky-unlisted", files, gold)
    assert "identical results over 10 runs" not in failing(validate_task(runtime, load_task(folder), runs=10))


def test_a_vacuous_test_is_caught(runtime, tmp_path):
    files = repo_fixture.buggy_files()
    files["tests/test_cart.py"] += "\n\ndef test_nothing():\n    assert Cart is not None\n"
    gold = {**repo_fixture.gold_files(), "tests/test_cart.py": files["tests/test_cart.py"]}
    folder = repo_fixture.write_task(tmp_path / "vacuous", files, gold, PASS_TO_PASS=repo_fixture.P2P + ["tests/test_cart.py::test_nothing"])
    assert failing(validate_task(runtime, load_task(folder), runs=2)) == {
        "no test passes vacuously": "tests/test_cart.py::test_nothing never reached the project's code"
    }


def test_wrong_lists_are_caught(runtime, tmp_path):
    folder = repo_fixture.write_task(tmp_path / "lists", FAIL_TO_PASS=repo_fixture.P2P[:1], PASS_TO_PASS=repo_fixture.F2P + ["tests/test_cart.py::test_gone"])
    assert failing(validate_task(runtime, load_task(folder), runs=1)) == {
        "every listed test ran": "tests/test_cart.py::test_gone",
        "buggy state fails every FAIL_TO_PASS test": "tests/test_cart.py::test_total_and_contents",
        "buggy state passes every PASS_TO_PASS test": "tests/test_cart.py::test_gone, tests/test_cart.py::test_new_carts_start_empty",
        "gold patch passes every test": "tests/test_cart.py::test_gone",
    }


def test_cli_prints_a_table_and_fails_on_an_invalid_task(tmp_path):
    good = repo_fixture.write_task(tmp_path / "good")
    bad = repo_fixture.write_task(tmp_path / "bad", gold=repo_fixture.buggy_files(), id="shop-bad")
    (bad / "gold.patch").write_text(make_patch(repo_fixture.buggy_files(), {**repo_fixture.buggy_files(), "shop/errors.py": "oops = (\n"}))
    done = subprocess.run([sys.executable, "-m", "env.authoring", "validate", str(good), str(bad), "--runs", "2"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["task", "family", "valid", "trusted", "runs", "seconds", "problems"]
    assert lines[1].split()[:5] == ["shop-cart", "repo", "yes", "yes", "2"]
    assert lines[2].split()[:5] == ["shop-bad", "repo", "NO", "yes", "2"]
    assert lines[-1] == "1 invalid task(s): shop-bad"


# -- import ---------------------------------------------------------------------------------------


def git(cwd: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout.strip()


def commit(repo: Path, files: dict[str, str]) -> str:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "snapshot")
    return git(repo, "rev-parse", "HEAD")


HIDDEN_TEST = "\n\ndef test_new_carts_start_empty():\n    Cart('ann').add('apple')\n    assert len(Cart('bob')) == 0\n"


def swebench_clone(root: Path) -> tuple[Path, dict]:
    """A clone whose base commit has the bug and no F2P test; the instance hides it in test_patch."""
    files = repo_fixture.buggy_files()
    visible_tests = files["tests/test_cart.py"].split("\n\ndef test_new_carts_start_empty")[0] + "\n\n\ndef test_total_and_contents" + files["tests/test_cart.py"].split("def test_total_and_contents", 1)[1]
    files["tests/test_cart.py"] = visible_tests
    root.mkdir(parents=True)
    git(root, "init", "-q")
    base = commit(root, files)
    commit(root, {"shop/cart.py": "# a later commit the agent must never see\n"})
    instance = {
        "instance_id": "acme__shop-1",
        "repo": "acme/shop",
        "base_commit": base,
        "patch": make_patch({"shop/cart.py": files["shop/cart.py"]}, {"shop/cart.py": repo_fixture.gold_files()["shop/cart.py"]}),
        "test_patch": make_patch({"tests/test_cart.py": visible_tests}, {"tests/test_cart.py": visible_tests + HIDDEN_TEST}),
        "problem_statement": "New carts are not empty.",
        "FAIL_TO_PASS": json.dumps(["tests/test_cart.py::test_new_carts_start_empty"]),
        "PASS_TO_PASS": json.dumps(repo_fixture.P2P),
        "created_at": "2024-01-01",
        "version": "1.0",
    }
    return root, instance


def test_import_swebench_then_validate_solve_and_evaluate(runtime, tmp_path):
    clones = tmp_path / "clones"
    _, instance = swebench_clone(clones / "acme__shop-1")  # a directory of clones, matched by instance_id
    (tmp_path / "instances.jsonl").write_text(json.dumps(instance) + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "env.authoring", "import-swebench", str(tmp_path / "instances.jsonl"), "--repo", str(clones), "--out", str(tmp_path / "tasks")],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    folder = tmp_path / "tasks" / "acme__shop-1"
    assert done.stdout.splitlines()[0] == f"imported acme__shop-1 -> {folder}"
    task = load_task(folder)
    assert task.fail_to_pass == ["tests/test_cart.py::test_new_carts_start_empty"] and task.base_commit == instance["base_commit"]
    assert "test_new_carts_start_empty" not in task.files["tests/test_cart.py"]  # hidden until grading
    assert "a later commit" not in task.files["shop/cart.py"]
    assert failing(validate_task(runtime, task, runs=2)) == {}

    solver = Runtime(TaskCatalog([task]), runtime.sandbox)
    episode = REPO.episode(solver, task, seed=1, episode_id="imp")
    obs = episode.step(DebugAction(action_type="run_tests"))
    assert obs.tool_output == "3 passed"  # the agent's runs use the visible tests only
    for old, new in (("items=[]", "items=None"), ("self.items = items", "self.items = [] if items is None else items")):
        episode.step(DebugAction(action_type="replace_text", path="shop/cart.py", old_text=old, new_text=new))
    final = episode.step(DebugAction(action_type="submit"))
    assert final.info["resolved"] is True

    prediction = Prediction.from_observation(final, model="test-agent", catalog=solver.catalog)
    assert prediction.instance_id == "acme__shop-1" and prediction.model_patch == final.info["model_patch"]
    assert evaluate(solver, prediction).resolution == "FULL"
    assert evaluate(solver, prediction.model_copy(update={"model_patch": ""})).model_dump() == {"instance_id": "acme__shop-1", "resolution": "NO", "detail": "empty patch"}
    assert evaluate(solver, prediction.model_copy(update={"model_patch": "junk\n"})).detail == "the patch contains no file changes"


def test_import_swe_smith_reverses_the_bug_patch(runtime, tmp_path):
    clone = tmp_path / "clone"
    clone.mkdir()
    git(clone, "init", "-q")
    base = commit(clone, repo_fixture.gold_files())  # SWE-smith: the clean repository
    instance = {
        "instance_id": "acme__shop.abc123.func_pm_remove_cond",
        "base_commit": base,
        "patch": make_patch(repo_fixture.gold_files(), repo_fixture.buggy_files()),  # introduces the bug
        "problem_statement": "New carts are not empty.",
        "FAIL_TO_PASS": repo_fixture.F2P,
        "PASS_TO_PASS": repo_fixture.P2P,
    }
    (tmp_path / "smith.json").write_text(json.dumps([instance]))
    from env.authoring.__main__ import main

    assert main(["import-swebench", str(tmp_path / "smith.json"), "--repo", str(clone), "--out", str(tmp_path / "out"), "--smith"]) == 0
    task = load_task(tmp_path / "out" / instance["instance_id"])
    assert task.files == repo_fixture.buggy_files() and task.gold_files == repo_fixture.gold_files()
    assert failing(validate_task(runtime, task, runs=1)) == {}


def test_import_reports_a_missing_clone(tmp_path, capsys):
    from env.authoring.__main__ import main

    (tmp_path / "i.json").write_text(json.dumps({"instance_id": "x__y-1", "base_commit": "a" * 40, "patch": "", "problem_statement": "p", "FAIL_TO_PASS": "[\"t\"]"}))
    assert main(["import-swebench", str(tmp_path / "i.json"), "--repo", str(tmp_path), "--out", str(tmp_path / "o")]) == 1
    assert f"skipped x__y-1: x__y-1: no git clone at {tmp_path} or {tmp_path / 'x__y-1'}" in capsys.readouterr().out


@pytest.mark.parametrize("variant", ["ENV_TASK_DIRS"])
def test_server_serves_task_dirs(monkeypatch, tmp_path, variant):
    repo_fixture.write_task(tmp_path / "dir" / "shop-cart")
    monkeypatch.setenv(variant, str(tmp_path / "dir"))
    ids = TaskCatalog.from_env().ids()
    builtin = TaskCatalog.builtin().ids()
    # served after every task built at start, before the procedural and race ids generated when first asked for
    later = [i for i in builtin if (i.startswith("proc-") and "-test-" not in i) or i.startswith("race-")]
    assert ids == [i for i in builtin if i not in later] + ["shop-cart"] + later and ids[:3] == ["easy", "medium", "hard"]
