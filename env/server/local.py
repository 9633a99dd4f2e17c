"""Start the server (or the demo) on a free local port and wait until it answers.

    proc, url = start_local_server()      # used by validator.py and the bench scripts
    proc, url = start_local_server(via_uvicorn=True)   # as openenv.yaml starts it: uvicorn env.server.main:app
    proc, url = start_local_demo()        # app.py: the demo's browser test and bench
    proc, url = start_balancer({"r1": "127.0.0.1:8001", "r2": "127.0.0.1:8002"})   # HAProxy with deploy/haproxy/haproxy.cfg
    ...
    proc.terminate()
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]


def _ready(proc: subprocess.Popen[bytes], url: str, timeout_s: float) -> bool:
    """Whether ``url`` answered 200 before the process ended or the time ran out (then the process is killed)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return True
        except httpx.HTTPError:
            pass
        time.sleep(0.1)  # still starting (importing Gradio alone takes seconds)
    proc.kill()
    return False


def _start(
    args: list[str], ready_path: str, env: dict[str, str], log_path: str | None, timeout_s: float, root: Path = ROOT
) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    args = [a.replace("{port}", str(port)) for a in args]
    log = open(log_path or os.devnull, "w")  # noqa: SIM115 (lives as long as the process)
    proc = subprocess.Popen([sys.executable, *args], cwd=root, env={**os.environ, **env, "PORT": str(port)}, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    if not _ready(proc, f"{url}{ready_path}", timeout_s):
        raise RuntimeError(f"{' '.join(args)} did not start" + (f"; its log is {log_path}" if log_path else ""))
    return proc, url


def start_local_server(
    log_path: str | None = None, timeout_s: float = 60.0, via_uvicorn: bool = False, env: dict[str, str] | None = None, root: Path = ROOT
) -> tuple[subprocess.Popen[bytes], str]:
    """``root``: the checkout whose code the server runs (``python -m`` puts the working directory first on the path),
    e.g. another commit's worktree that a bench compares with, run with this interpreter."""
    args = ["-m", "uvicorn", "env.server.main:app", "--host", "127.0.0.1", "--port", "{port}"] if via_uvicorn else ["-m", "env.server"]
    return _start(args, "/health", {"HOST": "127.0.0.1", **(env or {})}, log_path, timeout_s, root)


def start_local_demo(log_path: str | None = None, timeout_s: float = 120.0) -> tuple[subprocess.Popen[bytes], str]:
    return _start(["app.py"], "/", {"GRADIO_SERVER_NAME": "127.0.0.1", "GRADIO_ANALYTICS_ENABLED": "False"}, log_path, timeout_s)


HAPROXY_CFG = ROOT / "deploy" / "haproxy" / "haproxy.cfg"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_balancer(replicas: dict[str, str], timeout_s: float = 30.0) -> tuple[subprocess.Popen[bytes], str]:
    """HAProxy (Debian's) with the deployment's own configuration, on a free loopback port, in front of the replicas
    ``{"r1": "host:port", "r2": ...}``; ready once a replica answers through it."""
    haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
    if not Path(haproxy).exists():
        raise RuntimeError("haproxy is not installed: `make test` installs Debian's (apt-get install haproxy)")
    port, stats = free_port(), free_port()
    env = {**os.environ, "ADBG_BIND": f"127.0.0.1:{port}", "ADBG_STATS_BIND": f"127.0.0.1:{stats}", "ADBG_LOG_LEVEL": "err"}
    env.update({f"ADBG_{name.upper()}": address for name, address in replicas.items()})
    proc = subprocess.Popen([haproxy, "-W", "-db", "-f", str(HAPROXY_CFG)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    if not _ready(proc, f"{url}/health", timeout_s):
        proc.wait(timeout=5)
        said = proc.stderr.read().decode(errors="replace")[-2000:] if proc.stderr else ""
        raise RuntimeError(f"haproxy did not start or reach a replica: {said}")
    return proc, url
