"""`python -m env.server`'s command line (issue 52's front door): the usual flags, each a setting; --help and a bad
argument start nothing; --list-tasks lists what the server would serve; by default it listens on this machine only."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx

from env import settings
from env.config import Settings
from tests.conftest import free_port

ROOT = Path(__file__).resolve().parents[1]


def server(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "env.server", *args], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})  # fmt: skip


def test_help_names_every_flag_and_starts_nothing():
    done = server("--help")
    assert done.returncode == 0 and done.stderr == ""
    text = " ".join(done.stdout.split())  # argparse wraps to the terminal's width
    assert text.startswith("usage: python -m env.server [-h] [--host HOST] [--port PORT] [--workers WORKERS] [--list-tasks] [TASK_DIR ...]")
    for flag in ("--host HOST", "--port PORT", "--workers WORKERS", "--list-tasks", "TASK_DIR"):
        assert flag in text
    assert "(HOST; default 127.0.0.1: this machine only)" in text


def test_a_bad_argument_is_refused_naming_it():
    for args, message in (
        (["--port", "0"], "--port 0: a port is 1 to 65535"),
        (["--workers", "0"], "--workers 0: at least 1"),
        (["/no/such/folder"], "no such task folder: /no/such/folder"),
        (["--colour"], "unrecognized arguments: --colour"),
    ):
        done = server(*args)
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.splitlines()[-1] == f"python -m env.server: error: {message}"


def test_list_tasks_lists_the_built_in_tasks_and_a_folder_given(tmp_path):
    folder = tmp_path / "mine"
    shutil.copytree(ROOT / "tasks" / "repo" / "repo-slice-window", folder / "repo-my-window")
    data = json.loads((folder / "repo-my-window" / "task.json").read_text())
    (folder / "repo-my-window" / "task.json").write_text(json.dumps({**data, "id": "repo-my-window"}))
    plain = server("--list-tasks", env={"ENV_TASK_DIRS": ""})
    assert plain.returncode == 0, plain.stderr
    rows = [line.split() for line in plain.stdout.splitlines()]
    assert rows[:3] == [["easy", "classic", "test"], ["medium", "classic", "test"], ["hard", "classic", "test"]]
    assert "repo-my-window" not in plain.stdout
    given = server("--list-tasks", str(folder), env={"ENV_TASK_DIRS": ""})
    assert given.returncode == 0, given.stderr
    more = [line.split() for line in given.stdout.splitlines()]
    assert ["repo-my-window", "repo", "test"] in more and [r for r in more if r[0] != "repo-my-window"] == rows


def test_by_default_the_server_listens_on_this_machine_only():
    assert settings.default("HOST") == "127.0.0.1"
    assert Settings().host == "127.0.0.1"
    assert "ENV HOST=0.0.0.0" in (ROOT / "Dockerfile").read_text()  # the image listens beyond its container


def test_the_flags_set_the_server_s_settings():
    port = free_port()
    environ = {k: v for k, v in os.environ.items() if k not in ("HOST", "PORT", "ENV_WORKERS")}
    proc = subprocess.Popen([sys.executable, "-m", "env.server", "--host", "127.0.0.1", "--port", str(port), "--workers", "3"],
                            cwd=ROOT, env=environ, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                assert httpx.get(f"http://127.0.0.1:{port}/health", timeout=10).status_code == 200
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline, "the server did not start on the port given"
                time.sleep(0.2)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
