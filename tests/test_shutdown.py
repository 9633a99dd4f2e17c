"""A server stopped with SIGTERM (how Docker, systemd and the tests stop it) exits normally and removes what it
made on the scratch disk: the generated procedural tasks and the workspace templates."""

from __future__ import annotations

import os
from pathlib import Path

import httpx

from env.scratch import scratch_root
from env.server.local import start_local_server

MADE = ("adbg-procedural-", "adbg-templates-")


def test_a_stopped_server_removes_its_scratch_directories():
    root = Path(scratch_root())
    before = set(os.listdir(root))
    proc, url = start_local_server()
    try:
        assert httpx.get(f"{url}/tasks", timeout=60).status_code == 200
        made = {d for d in set(os.listdir(root)) - before if d.startswith(MADE)}
        assert {d.split("-")[1] for d in made} == {"procedural", "templates"}
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert proc.returncode == 0
    assert [d for d in made if (root / d).exists()] == []
