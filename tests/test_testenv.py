"""A repository run's trusted test process runs in a test environment of its own: pytest and the task's declared
requirements, built once with uv from PyPI, content-addressed and read-only; nothing of the server."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

import pytest

from env.project import load_repo_task
from env.verdict.repo_judge import run_tests
from env.verdict.testenv import PYTEST, TestEnvError, cache_root, ensure, spec
from tests import repo_fixture

ROOT = Path(__file__).resolve().parents[1]


def make_task(folder: Path, files: dict[str, str], **fields: object):
    ids = ["tests/test_case.py::test_case"]
    return load_repo_task(repo_fixture.write_task(folder, files, files, FAIL_TO_PASS=ids, PASS_TO_PASS=[], **fields))


def test_an_environment_is_named_by_what_it_holds():
    assert spec(["b==1", "a", " a "]).key == spec(["a", "b==1"]).key
    assert spec(["a"]).key != spec([]).key != spec(["a", "b==1"]).key
    assert spec([]).root == cache_root() / spec([]).key and spec(["b==1", "a"]).requirements == ("a", "b==1")


def test_a_built_environment_is_read_only_and_holds_pytest_only():
    env = ensure([])
    assert env.ready and env.python.is_file()
    assert not env.root.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
    probe = "import importlib.util as u, pytest; print(pytest.__version__, [n for n in ('pydantic', 'fastapi', 'dateutil', 'env') if u.find_spec(n)])"
    done = subprocess.run([str(env.python), "-c", probe], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}, cwd="/")
    assert done.stdout.split() == [PYTEST.split("==")[1], "[]"], done.stderr


def test_a_missing_environment_fails_closed_where_building_is_off(runtime, tmp_path, monkeypatch):
    monkeypatch.setenv("ENV_TEST_ENVS", str(tmp_path / "envs"))
    monkeypatch.setenv("ENV_TEST_ENVS_BUILD", "off")
    env = spec([])
    message = (
        f"the test environment for {PYTEST} is not prepared on this server (ENV_TEST_ENVS_BUILD=off); "
        f"run `python -m env.authoring prepare <task folders>` where PyPI is reachable (it writes {env.root})"
    )
    with pytest.raises(TestEnvError) as caught:
        ensure([])
    assert str(caught.value) == message
    task = load_repo_task(repo_fixture.write_task(tmp_path / "shop"))
    verdict = run_tests(runtime.sandbox, task, task.gold_files)
    assert verdict.outcomes == {} and verdict.error == message + "; no test was run"


def test_the_test_process_imports_nothing_of_the_server(runtime, tmp_path):
    test = (
        "import importlib.util, sys\nimport pytest\nfrom calc import add\n\n\ndef test_case():\n"
        "    assert add(1, 2) == 3\n"
        "    assert [n for n in ('pydantic', 'fastapi', 'env', 'openenv', 'gradio') if n in sys.modules or importlib.util.find_spec(n)] == []\n"
        f"    assert pytest.__version__ == {PYTEST.split('==')[1]!r}\n"
    )
    task = make_task(tmp_path / "t", {"calc/__init__.py": "def add(a, b):\n    return a + b\n", "tests/test_case.py": test})
    verdict = run_tests(runtime.sandbox, task, task.files)
    assert verdict.outcomes == {"tests/test_case.py::test_case": "PASSED"}, verdict.excerpts


def test_an_installed_copy_never_stands_in_for_the_project(runtime, tmp_path):
    """The server has python-dateutil installed (pandas needs it); a dateutil task is tested against its own code."""
    import dateutil  # noqa: F401  (the server's copy exists: otherwise this test proves nothing)

    project = {"dateutil/__init__.py": "", "dateutil/easter.py": "def easter(year):\n    return ('project', year)\n"}
    test = "from dateutil.easter import easter\n\n\ndef test_case():\n    assert easter(2024) == ('project', 2024)\n"
    task = make_task(tmp_path / "t", {**project, "tests/test_case.py": test})
    verdict = run_tests(runtime.sandbox, task, task.files)
    assert verdict.outcomes == {"tests/test_case.py::test_case": "PASSED"}, verdict.excerpts
    assert verdict.ops["tests/test_case.py::test_case"] == 1  # the call reached the sandbox


def test_declared_requirements_are_installed_for_the_tests(runtime, tmp_path):
    test = "import six\nfrom calc import add\n\n\ndef test_case():\n    assert six.__version__ == '1.16.0' and add(2, 2) == 4\n"
    project = {"calc/__init__.py": "import six\n\n\ndef add(a, b):\n    return a + b if six.PY3 else None\n"}  # the project needs it too
    task = make_task(tmp_path / "t", {**project, "tests/test_case.py": test}, requirements=["six==1.16.0"])
    verdict = run_tests(runtime.sandbox, task, task.files)
    assert verdict.outcomes == {"tests/test_case.py::test_case": "PASSED"}, (verdict.error, verdict.excerpts)
    assert spec(["six==1.16.0"]).ready


def test_prepare_builds_them_ahead_for_a_server_without_network(runtime, tmp_path, monkeypatch):
    envs = tmp_path / "envs"
    folder = repo_fixture.write_task(tmp_path / "shop")
    done = subprocess.run(
        [sys.executable, "-m", "env.authoring", "prepare", str(folder)], capture_output=True, text=True, cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "HOME": str(Path.home()), "ENV_TEST_ENVS": str(envs)}, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    monkeypatch.setenv("ENV_TEST_ENVS", str(envs))
    assert done.stdout.splitlines() == [f"ready {spec([]).root} (pytest only)", f"1 of 1 test environment(s) ready under {envs}"]
    monkeypatch.setenv("ENV_TEST_ENVS_BUILD", "off")
    task = load_repo_task(folder)
    assert run_tests(runtime.sandbox, task, task.gold_files).outcomes == {t: "PASSED" for t in repo_fixture.F2P + repo_fixture.P2P}
