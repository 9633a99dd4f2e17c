"""The demo's scratch folders (where a session's trajectory download is written): nothing outlives the demo.

    folder = new_folder()   # <tmp>/adbg-demo-<pid>-<random>, one per browser session
    remove(folder)          # when its session ends
    sweep()                 # when the demo starts: the folders of demo processes that no longer exist

A session's folder goes with the session (its ``gr.State`` expires, or its tab closed an hour ago). Gradio
calls no callback at shutdown, so the folders still open go at exit (``atexit``: SIGTERM exits normally, see
``env.server.signals``). A process that was killed outright cannot clean up: its folders carry its PID, and
the next demo to start removes those whose process is gone (only this user's; a reused PID keeps them, which
errs on the safe side).
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import shutil
import tempfile
import threading
from pathlib import Path

log = logging.getLogger("adbg.demo")

PREFIX = "adbg-demo-"
NAME = re.compile(rf"{PREFIX}(\d+)-[^/]+")  # folders named before the PID was part of the name do not match

_open: set[str] = set()
_lock = threading.Lock()


def new_folder() -> str:
    folder = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-")
    with _lock:
        _open.add(folder)
    return folder


def remove(folder: str) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    with _lock:
        _open.discard(folder)


def remove_all() -> None:
    """Every folder this process still has open (at exit)."""
    with _lock:
        folders = list(_open)
        _open.clear()
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)


atexit.register(remove_all)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def sweep(root: str | Path | None = None) -> list[Path]:
    """Remove the scratch folders, under ``root`` (default: the temporary directory), of processes that no longer exist."""
    removed = []
    for path in Path(root or tempfile.gettempdir()).glob(f"{PREFIX}*"):
        found = NAME.fullmatch(path.name)
        if found is None or path.is_symlink() or not path.is_dir():
            continue
        pid = int(found.group(1))
        if pid == os.getpid() or alive(pid) or path.stat().st_uid != os.getuid():
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    if removed:
        log.info("removed %d scratch folder(s) of demo processes that no longer exist", len(removed))
    return removed
