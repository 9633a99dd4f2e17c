"""Issue 33 item 5: `python -m env.server` checks its port before the heavy imports and names the process holding it."""

import subprocess
import sys

from env.server.port import port_holder, port_problem
from tests.conftest import free_port

HOLD = "import socket, sys, time; s = socket.socket(); s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(); print('ready', flush=True); time.sleep(60)"


def test_a_port_in_use_is_reported_at_once_with_its_holder():
    port = free_port()
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(port)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "ready\n"
        command = f"{sys.executable} -c {HOLD} {port}"
        assert port_holder(port) == f"process {holder.pid} ({command})"
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "env.server"], env={"HOST": "127.0.0.1", "PORT": str(port)},
            capture_output=True, text=True, timeout=60, check=False,
        )
    finally:
        holder.kill()
        holder.wait()
    assert done.returncode == 1
    said = [line for line in done.stderr.splitlines() if not line.startswith("import time:")]
    assert said == [
        f"env.server: port {port} on 127.0.0.1 is in use by process {holder.pid} ({command}); stop it, or start this "
        "server on another port (PORT=...)"
    ]
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "openenv" not in imported and "gradio" not in imported and "fastapi" not in imported


def test_a_free_port_is_no_problem():
    assert port_problem("127.0.0.1", free_port()) is None
