"""TRL's OpenRewardSpec over ORS (issue 50, item 1): examples/trainers/trl_openreward.py run as a user runs it, against a
live server. TRL's wheel is downloaded from PyPI at test time and imported without its dependencies (its openreward
module needs none of torch, transformers or accelerate): the suite's install stays free of torch."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import LiveServer

ROOT = Path(__file__).resolve().parents[1]
TRL = "trl==1.16.0"


@pytest.fixture(scope="module")
def trl_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("trl")
    got = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--disable-pip-version-check", "-q", TRL, "-d", str(folder)],
        capture_output=True, text=True, timeout=300,
    )
    wheels = list(folder.glob("trl-*.whl"))
    assert got.returncode == 0 and wheels, f"pip could not download {TRL} from PyPI: {got.stderr[-800:]}"
    with zipfile.ZipFile(wheels[0]) as wheel:
        wheel.extractall(folder / "site")
    return folder / "site"


def test_trl_open_reward_spec_drives_episodes_without_a_model(trl_path, app):
    with LiveServer(app) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENREWARD_")}
        env["PYTHONPATH"] = str(trl_path)
        done = subprocess.run(
            [sys.executable, "examples/trainers/trl_openreward.py", server.url], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
        )
    assert done.returncode == 0, done.stderr[-3000:]
    # the output docs/training.md shows (the suite's fixed secret: the held-out cases, and so `progress`, follow it)
    assert done.stdout.splitlines() == [
        "dataset: 2 rows; task ids ['easy', 'medium']",
        "task easy: Task: binary_search(arr, target) should return the index of target in a sorted l",
        "  query_context -> (step 1/8, reward 0.0, tests passed 6/8)",
        "  submit_fix -> (step 2/8, reward 0.55, tests passed 8/8)",
        "  rewards per call [0.0, 0.55], finished True, grade 0.96",
        "task medium: Task: Users with the right password cannot log in: authenticate_user returns Fal",
        "  give_up -> (step 1/15, reward 0.0, tests passed 6/10)",
        "  rewards per call [0.0], finished True, grade 0.0",
        "reward_funcs (the last call's reward): [0.55, 0.0]",
        "grade_reward (the episode's grade): [0.96, 0.0]",
    ]
