"""The demo's scratch folders (where a session's trajectory download is written): nothing outlives the demo.

    folder = new_folder()   # <tmp>/adbg-demo-<pid>-<start>-<random>, one per browser session
    remove(folder)          # when its session ends
    sweep()                 # when the demo starts: the folders of demo processes that no longer exist

A session's folder goes with the session (its ``gr.State`` expires, or its tab closed an hour ago). Gradio
calls no callback at shutdown, so the folders still open go at exit (``atexit``: SIGTERM exits normally, see
``env.server.signals``). A process that was killed outright cannot clean up: its folders carry its PID, and
the next demo to start removes those whose process is gone (only this user's; ``env.scratch.sweep``, which also
tells a reused PID by the process's start time).
"""

from __future__ import annotations

import atexit
import logging
import shutil
import tempfile
import threading
from pathlib import Path

from env.scratch import own_prefix
from env.scratch import sweep as sweep_dead

log = logging.getLogger("adbg.demo")

PREFIX = "adbg-demo-"

_open: set[str] = set()
_lock = threading.Lock()


def new_folder() -> str:
    folder = tempfile.mkdtemp(prefix=own_prefix(PREFIX))
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


def sweep(root: str | Path | None = None) -> list[Path]:
    """Remove the scratch folders, under ``root`` (default: the temporary directory), of processes that no longer exist."""
    removed = sweep_dead(root or tempfile.gettempdir(), PREFIX)
    if removed:
        log.info("removed %d scratch folder(s) of demo processes that no longer exist", len(removed))
    return removed
