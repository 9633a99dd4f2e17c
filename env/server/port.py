"""Is the server's port free? Checked before the heavy imports (OpenEnv, Gradio: seconds), so a port in use is
reported at once, naming the process that holds it when /proc shows it. Standard library only.

    problem = port_problem("0.0.0.0", 8000)   # None, or "port 8000 on 0.0.0.0 is in use by process 1234 (...)"
"""

from __future__ import annotations

import errno
import os
import socket
from pathlib import Path


def port_problem(host: str, port: int) -> str | None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: a TIME_WAIT socket is no obstacle
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                return f"cannot listen on {host}:{port}: {exc.strerror} (set HOST and PORT)"
        else:
            return None
    holder = port_holder(port)
    held = f" by {holder}" if holder else " (by a process this user cannot see)"
    return f"port {port} on {host} is in use{held}; stop it, or start this server on another port (PORT=...)"


def port_holder(port: int, proc: Path = Path("/proc")) -> str | None:
    """'process <pid> (<command line>)' listening on ``port``, when /proc shows it."""
    inodes = set()
    for table in ("net/tcp", "net/tcp6"):
        try:
            lines = (proc / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 9 and fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                inodes.add(f"socket:[{fields[9]}]")
    if not inodes:
        return None
    for pid in (p for p in os.listdir(proc) if p.isdigit()):
        try:
            fds = os.listdir(proc / pid / "fd")
        except OSError:
            continue  # another user's process, or gone
        for fd in fds:
            try:
                if os.readlink(proc / pid / "fd" / fd) in inodes:
                    command = (proc / pid / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
                    return f"process {pid} ({command[:200]})"
            except OSError:
                continue
    return None
