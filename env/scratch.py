"""Where short-lived files go: a directory of this process's own, on a RAM-backed file system when the host has one.

    scratch_base()      # "/dev/shm" on Linux hosts that allow it, else the system temp directory
    scratch_root()      # <base>/adbg-<pid>-<start>-XXXXXXXX: made on first use, removed when the process exits
    sweep(base, prefix) # the folders under ``base`` named ``<prefix><pid>-...`` whose process no longer exists

Workspaces, templates, run directories, generated tasks (gold patches included) and output files are
created and removed all the time; on this machine /tmp is ext4 mounted with `discard`, where copying
a 14-file repository took 124 ms against 9 ms on /dev/shm (bench/bench_repo.py). SANDBOX_TMPDIR
overrides the base. The directory is the server's uid's with mode 0711: a run under another uid may
enter the run directory it was given, but cannot list what else is there, and every entry is 0700.
``env.sandbox.readable.exposure`` checks that no sandboxed code may read it at all.

A process killed outright (SIGKILL, a crash) cannot remove its directory, so the name carries its PID and the
process's start time (clock ticks since boot, /proc/<pid>/stat): the first ``scratch_root()`` of any later
process removes the directories of this user whose process is gone, or whose PID now belongs to a process
started at another time (a reused PID). A directory named without a start time is kept while its PID is in use.
"""

from __future__ import annotations

import atexit
import functools
import logging
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import TypeVar, cast

from pydantic import BaseModel

from env import settings

RAM_DIR = "/dev/shm"
ROOT_MODE = 0o711
PREFIX = "adbg-"
log = logging.getLogger("adbg.scratch")
T = TypeVar("T")


def scratch_base() -> str:
    chosen = settings.raw("SANDBOX_TMPDIR")
    if chosen:
        return chosen
    if os.path.isdir(RAM_DIR) and os.access(RAM_DIR, os.W_OK | os.X_OK):
        return RAM_DIR
    return tempfile.gettempdir()


def _stat(pid: int) -> tuple[str, int] | None:
    """The state and start time (clock ticks after boot) of ``pid``; None if it does not exist or there is no /proc."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: count fields after its last ")".
    fields = stat[stat.rindex(b")") + 2 :].split()
    return fields[0].decode(), int(fields[19])


def process_start(pid: int) -> int | None:
    """When ``pid`` started (clock ticks after boot), or None if it does not exist or this host has no /proc."""
    stat = _stat(pid)
    return None if stat is None else stat[1]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def _owner_gone(pid: int, started: int | None) -> bool:
    if pid == os.getpid():
        return False
    if not alive(pid):
        return True
    stat = _stat(pid)
    if stat is None:
        return False  # no /proc: a live PID is all we know
    if stat[0] == "Z":  # ended, not yet reaped (its parent died too, and this container's init does not reap)...
        try:
            return len(os.listdir(f"/proc/{pid}/task")) <= 1  # ... unless only its first thread has ended
        except OSError:
            return True
    return started is not None and stat[1] != started  # the PID was reused


def sweep(base: str | Path | None = None, prefix: str = PREFIX) -> list[Path]:
    """Remove the folders under ``base`` (default: ``scratch_base()``) named ``<prefix><pid>-[<start>-]XXXXXXXX`` (as
    ``mkdtemp`` names them) that belong to this user and whose process is gone. Nothing else is touched: other
    users' folders, live processes' folders, symbolic links, names of any other form."""
    name = re.compile(rf"{re.escape(prefix)}(\d+)-(?:(\d+)-)?[a-z0-9_]{{8}}")
    removed = []
    try:
        entries = list(Path(base or scratch_base()).iterdir())
    except OSError:
        return []
    for path in entries:
        found = name.fullmatch(path.name)
        if found is None:
            continue
        try:
            info = path.lstat()
        except OSError:
            continue
        if not path.is_dir() or path.is_symlink() or info.st_uid != os.getuid():
            continue
        if _owner_gone(int(found.group(1)), int(found.group(2)) if found.group(2) else None):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    if removed:
        log.info("removed %d scratch folder(s) of processes that no longer exist", len(removed))
    return removed


def own_prefix(prefix: str) -> str:
    """``<prefix><pid>-<start>-``: a folder name ``sweep`` can tell the owner of."""
    started = process_start(os.getpid())
    return f"{prefix}{os.getpid()}-" + (f"{started}-" if started is not None else "")


def _remove(root: str, owner: int) -> None:
    if os.getpid() == owner:  # a forked child's exit leaves its parent's directory alone
        shutil.rmtree(root, ignore_errors=True)


@functools.cache
def scratch_root() -> str:
    sweep()  # what processes killed outright left behind
    root = tempfile.mkdtemp(prefix=own_prefix(PREFIX), dir=scratch_base())
    os.chmod(root, ROOT_MODE)
    atexit.register(_remove, root, os.getpid())
    return root


@functools.cache
def _under(roots: tuple[str, ...]) -> re.Pattern[str]:
    # a path under one of the roots: the root, one directory (a run's, a workspace's), then the rest if any
    alternatives = "|".join(re.escape(root.rstrip("/")) for root in sorted(roots, key=len, reverse=True))
    return re.compile(rf"(?:{alternatives})/[^/\s'\"]+(/?)")


def relative_paths(text: str, roots: tuple[str, ...]) -> str:
    """``text`` with every path under the scratch ``roots`` made relative to its run's own directory (a run directory
    or a workspace): ``<root>/adbg-run-x/a.py`` -> ``a.py``, the directory itself -> ``.``. Those directories are
    random, so an agent would otherwise see host paths that differ between two identical episodes."""
    if not any(root in text for root in roots):
        return text
    return _under(roots).sub(lambda found: "" if found.group(1) else ".", text)


def without_scratch_paths(value: T, roots: tuple[str, ...]) -> T:
    """``value`` (text, a list, a dict or a pydantic model, nested) with ``relative_paths`` applied to every text."""
    cleaned: object
    if isinstance(value, str):
        cleaned = relative_paths(value, roots)
    elif isinstance(value, list):
        cleaned = [without_scratch_paths(item, roots) for item in value]
    elif isinstance(value, dict):
        cleaned = {key: without_scratch_paths(item, roots) for key, item in value.items()}
    elif isinstance(value, BaseModel):
        cleaned = value.model_copy(update={name: without_scratch_paths(getattr(value, name), roots) for name in type(value).model_fields})
    else:
        return value
    return cast(T, cleaned)
