"""A task folder is input, checked when it loads: nothing a loader reads from it may lie outside it.

    check_links(Path("tasks/repo/repo-slice-window"))    # FolderError naming the first link that leaves the folder

A symbolic link anywhere in a task folder (``repo/`` itself, ``gold.patch``, ``tests.py``, a file deep in the
snapshot) that resolves outside the folder is refused, with its path and where it leads: a loader that followed it
would serve another task's ``fix.py`` and ``held_out.py`` as this task's project, or any file of the host, and run
another folder's code as this task's trusted tests. A link that stays inside the folder is left alone (a project's
``README -> README.md``; the snapshot reader skips links anyway); one that cannot be resolved (a loop) is refused.
Each family checks the rest of what its folder holds (``env.project.RepoTask.check_folder``: the patches).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["FolderError", "check_links"]


class FolderError(ValueError):
    """A task folder that must not be served; the message names the path and why."""


def check_links(folder: Path) -> None:
    """Raise :class:`FolderError` for the first symbolic link under ``folder`` (in sorted order) that leaves it."""
    root = folder.resolve()
    pending = [root]
    while pending:
        directory = pending.pop()
        try:
            with os.scandir(directory) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as exc:
            raise FolderError(f"{_shown(directory, root)} cannot be read: {exc.strerror or exc}") from None
        inside = []
        for entry in entries:
            if entry.is_symlink():
                _check_link(Path(entry.path), root)
            elif entry.is_dir(follow_symlinks=False):
                inside.append(Path(entry.path))
        pending += reversed(inside)  # depth first, in name order


def _check_link(path: Path, root: Path) -> None:
    try:
        target = path.resolve(strict=False)
    except (OSError, RuntimeError):  # a loop: RuntimeError up to Python 3.12
        target = path
    if target.is_symlink():  # still a link once resolved: a loop (Python 3.13 returns it unresolved)
        raise FolderError(f"{_shown(path, root)} is a symbolic link that cannot be resolved (a loop): refused")
    if not target.is_relative_to(root):
        raise FolderError(
            f"{_shown(path, root)} is a symbolic link to {target}, outside the task folder: refused (every file a task "
            "folder serves must lie inside it; copy the files instead of linking them)"
        )


def _shown(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix() if path != root else "the task folder"
