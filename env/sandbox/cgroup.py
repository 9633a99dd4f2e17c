"""A pids cgroup per sandboxed command tree, where the server may make one.

RLIMIT_NPROC does not bind root, and outside a user namespace it counts every process of the uid;
a cgroup of the command's own does neither: ``pids.max`` contains a fork bomb, and
``cgroup.procs`` names every process left to kill, ``setsid`` escapes included. Used by run_bash
(``env.sandbox.shell``) for each command.
"""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import signal
import time
from pathlib import Path


@functools.cache
def pids_cgroup_parent() -> Path | None:
    """The server's own cgroup in a hierarchy with the pids controller, if it may create children there."""
    try:
        own = Path("/proc/self/cgroup").read_text().splitlines()
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    member: dict[str, str] = {}  # controller ("" for cgroup v2) -> the server's cgroup path
    for line in own:
        parts = line.split(":", 2)
        if len(parts) == 3:
            for controller in parts[1].split(","):
                member[controller] = parts[2]
    for line in mounts:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        fstype, options = tail[0], tail[2].split(",")
        if fstype == "cgroup" and "pids" in options:
            own_path = member.get("pids")
        elif fstype == "cgroup2":
            own_path = member.get("")
        else:
            continue
        root = fields[3].rstrip("/")
        if own_path is None or not (own_path + "/").startswith(root + "/"):
            continue
        directory = Path(fields[4]) / own_path[len(root) :].lstrip("/")
        try:
            if fstype == "cgroup2" and "pids" not in (directory / "cgroup.subtree_control").read_text().split():
                continue
        except OSError:
            continue
        if os.access(directory, os.W_OK):
            return directory
    return None


class PidsCgroup:
    """One call's cgroup: pids.max contains a fork bomb, and cgroup.procs finds every process to kill."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls, limit: int) -> PidsCgroup | None:
        """A new cgroup of at most ``limit`` processes and threads; None where none can be made here."""
        parent = pids_cgroup_parent()
        if parent is None:
            return None
        path = parent / f"adbg-shell-{secrets.token_hex(8)}"
        try:
            path.mkdir()
        except OSError:
            return None
        group = cls(path)
        try:
            (path / "pids.max").write_text(str(limit))
        except OSError:
            group.remove()
            return None
        return group

    def add(self, pid: int) -> None:
        (self.path / "cgroup.procs").write_text(str(pid))

    def kill_all(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                pids = [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
            except OSError:
                return
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.002)

    def remove(self) -> None:
        for _ in range(500):  # exited tasks leave the group a moment after their SIGKILL
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.002)
