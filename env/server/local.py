"""Start ``python -m env.server`` on a free local port and wait until it is healthy.

    proc, url = start_local_server()      # used by validator.py and the bench scripts
    ...
    proc.terminate()
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]


def start_local_server(log_path: str | None = None, timeout_s: float = 60.0) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, PORT=str(port), HOST="127.0.0.1")
    log = open(log_path or os.devnull, "w")  # noqa: SIM115 (lives as long as the server)
    proc = subprocess.Popen([sys.executable, "-m", "env.server"], cwd=ROOT, env=env, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.1)  # the server is still starting
    proc.kill()
    raise RuntimeError("the server did not start")
