"""How much an episode's workspace holds, against its quota (``WorkspaceQuota``): the trusted side's count.

    used = measure([workspace.root], quota)      # Usage(bytes=184320, files=77)
    used.over(quota)                             # False
    quota_error(quota, used, "edit")             # the message a tool that would pass the quota raises

The server counts here where the kernel does not: before a file tool writes (``env.tools.files``), and during and
after a ``run_bash`` command on a host without the namespace layer, where no size-capped tmpfs bounds it
(``env.sandbox.shell``). With that layer the launcher's tmpfs is the bound (``inside/shell_quota.py``) and counts
the same way: a file counts its size, or the space it takes if that is larger; every name counts as one file (a
hard link too); a directory takes no bytes.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel

from env.sandbox.limits import WorkspaceQuota

PAGE = 4096  # what a RAM file system gives the smallest file


class Usage(BaseModel):
    bytes: int = 0
    files: int = 0

    def over(self, quota: WorkspaceQuota) -> bool:
        return self.bytes > quota.bytes or self.files > quota.files

    def describe(self) -> str:
        return f"{self.bytes} bytes in {self.files} files and directories"


def footprint(size: int) -> int:
    """The bytes a new file of ``size`` bytes counts for (whole pages, as a RAM file system allocates them)."""
    return -(-size // PAGE) * PAGE


def measure(roots: Iterable[str | Path], quota: WorkspaceQuota | None = None) -> Usage:
    """What the trees under ``roots`` hold (the roots themselves not counted). With ``quota``, the count stops as soon
    as it is over it: a tree of a million files costs no more to judge than one just past the quota."""
    used = Usage()
    seen: set[tuple[int, int]] = set()
    stack = [str(root) for root in roots]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue  # removed while counted
                    used.files += 1
                    if stat.S_ISDIR(info.st_mode):
                        stack.append(entry.path)
                    elif (info.st_dev, info.st_ino) not in seen:
                        seen.add((info.st_dev, info.st_ino))
                        used.bytes += max(info.st_size, info.st_blocks * 512)
                    if quota is not None and used.over(quota):
                        return used
        except OSError:
            continue  # a directory removed (or closed to us) while counted
    return used


def quota_error(quota: WorkspaceQuota, used: Usage, what: str) -> str:
    """Why ``what`` was refused: the quota, each limit with its setting, and how far ``used`` got."""
    return f"{what} would take the workspace past its quota of {quota.describe()}: it would hold {used.describe()}"
