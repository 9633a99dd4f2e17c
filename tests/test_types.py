"""mypy, strict on the server, the tools, the interface and the episodes (the modules and flags are in pyproject.toml's
[tool.mypy]); the rest of env/ is followed for its types. mypy's cache (.mypy_cache/) makes a second run take a second."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def mypy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mypy", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_the_strict_modules_type_check():
    result = mypy()  # the files named in [tool.mypy]
    assert result.returncode == 0, f"mypy found type errors:\n{result.stdout}{result.stderr}"
    assert "Success: no issues found" in result.stdout, result.stdout + result.stderr


def test_the_check_finds_a_wrong_type(tmp_path):
    probe = tmp_path / "probe_wrong_types.py"
    probe.write_text(
        "from env.families.classic.family import CLASSIC\n"
        "from env.families.repo.episode import RepoEpisode\n"
        "from env.project import RepoTask\n"
        "from env.runtime import Runtime\n"
        "\n"
        "\n"
        "def misuse(episode: RepoEpisode, runtime: Runtime, task: RepoTask) -> None:\n"
        "    episode.step('view_file')  # an action is a DebugAction, not a tool's name\n"
        "    CLASSIC.episode(runtime, task, 1, 'e1')  # a classic episode of a repository task\n",
        encoding="utf-8",
    )
    result = mypy("--config-file", str(ROOT / "pyproject.toml"), str(probe))
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert 'Argument 1 to "step" of "Episode" has incompatible type "str"; expected "DebugAction"  [arg-type]' in output, output
    assert 'Argument 2 to "episode" of "ClassicFamily" has incompatible type "RepoTask"; expected "TaskSpec"  [arg-type]' in output, output
    assert "Found 2 errors in 1 file" in output, output
