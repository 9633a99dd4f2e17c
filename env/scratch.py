"""Where short-lived files go: a directory of this process's own, on a RAM-backed file system when the host has one.

    scratch_base()      # "/dev/shm" on Linux hosts that allow it, else the system temp directory
    scratch_root()      # <base>/adbg-<pid>-XXXXXXXX: made on first use, removed when the process exits

Workspaces, templates, run directories, generated tasks (gold patches included) and output files are
created and removed all the time; on this machine /tmp is ext4 mounted with `discard`, where copying
a 14-file repository took 124 ms against 9 ms on /dev/shm (bench/bench_repo.py). SANDBOX_TMPDIR
overrides the base. The directory is the server's uid's with mode 0711: a run under another uid may
enter the run directory it was given, but cannot list what else is there, and every entry is 0700.
``env.sandbox.readable.exposure`` checks that no sandboxed code may read it at all.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile

RAM_DIR = "/dev/shm"
ROOT_MODE = 0o711


def scratch_base() -> str:
    chosen = os.environ.get("SANDBOX_TMPDIR")
    if chosen:
        return chosen
    if os.path.isdir(RAM_DIR) and os.access(RAM_DIR, os.W_OK | os.X_OK):
        return RAM_DIR
    return tempfile.gettempdir()


def _remove(root: str, owner: int) -> None:
    if os.getpid() == owner:  # a forked child's exit leaves its parent's directory alone
        shutil.rmtree(root, ignore_errors=True)


@functools.cache
def scratch_root() -> str:
    root = tempfile.mkdtemp(prefix=f"adbg-{os.getpid()}-", dir=scratch_base())
    os.chmod(root, ROOT_MODE)
    atexit.register(_remove, root, os.getpid())
    return root
