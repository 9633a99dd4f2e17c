"""A server stopped with SIGTERM (how Docker, systemd and the tests stop it), started either way the README and
openenv.yaml name, exits normally and removes everything it made on the scratch disk: the generated procedural
tasks (gold patches included), the workspace templates, the test trees and the episodes' workspaces, all in one
directory of its own that no other uid can list, each of them closed to other uids."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import httpx
import pytest

from env.scratch import scratch_root
from env.server.local import start_local_server


@pytest.mark.parametrize("via_uvicorn", [False, True], ids=["python-m-env.server", "uvicorn-env.server.app-app"])
def test_a_stopped_server_removes_its_scratch_directories(via_uvicorn):
    root = Path(tempfile.mkdtemp(prefix="adbg-test-scratch-", dir=scratch_root()))  # this server's alone
    # ENV_DRAIN_SECONDS=0: the stop itself, not the drain before it (tests/test_replicas.py drains)
    proc, url = start_local_server(via_uvicorn=via_uvicorn, env={"SANDBOX_TMPDIR": str(root), "ENV_DRAIN_SECONDS": "0"})
    try:
        for task in ("repo-cache-stale", "proc-easy-test-0"):
            assert httpx.post(f"{url}/reset", json={"task_id": task, "seed": 1}, timeout=60).status_code == 200
        (private,) = root.iterdir()  # the server's own directory: others may pass through it, not list it
        assert private.name.startswith(f"adbg-{proc.pid}-")
        assert (private.stat().st_mode & 0o777, private.stat().st_uid) == (0o711, os.geteuid())
        # host: the test process's PYTHONPATH; run: the two children the split runs' fork server keeps ready, once the
        # fork server has reaped the child of the last run (it does so as the child exits, the reset's answer aside)
        deadline = time.monotonic() + 10
        while (made := sorted(entry.name.split("-")[1] for entry in private.iterdir())).count("run") > 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert made == ["host", "procedural", "run", "run", "templates", "tests", "ws", "ws"]
        assert {entry.stat().st_mode & 0o777 for entry in private.iterdir()} == {0o700}
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    try:
        assert proc.returncode == 0
        assert os.listdir(root) == []
    finally:
        shutil.rmtree(root, ignore_errors=True)
