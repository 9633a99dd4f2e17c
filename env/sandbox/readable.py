"""What sandboxed code may read: the trees Landlock opens to each kind of run, and nothing of the server's.

    run_paths()                    # verdict runs: the standard library and the system's shared libraries
    debug_paths()                  # scripts and the debugger: those plus the installed packages
    shell_paths()                  # run_bash: system directories, Python, a few files of /etc; never the project
    exposure("/dev/shm/adbg-1-x")  # "" when no such tree holds the path, else the tree that does

The server's scratch directory (workspaces, generated tasks with their gold patches, test trees) must
lie outside every one of them: ``probe_isolation`` refuses to run anything where it does not.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Not /etc as a whole: where the server is root and keeps its uid, /etc/shadow and private keys
# would be readable. These are what bash, coreutils, git and Python read there.
ETC_READABLE = (
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime", "/etc/timezone",
    "/etc/nsswitch.conf", "/etc/passwd", "/etc/group", "/etc/hosts", "/etc/host.conf", "/etc/resolv.conf", "/etc/protocols",
    "/etc/services", "/etc/mime.types", "/etc/os-release", "/etc/magic", "/etc/magic.mime", "/etc/terminfo", "/etc/ssl/certs",
)  # fmt: skip
# The system's time zone database (public data): zoneinfo and dateutil's gettz read it, as in any Python process.
TIME_ZONES = ("/usr/share/zoneinfo", "/etc/localtime", "/etc/timezone")
DEVICES_READABLE = ("/dev/urandom", "/dev/random", "/dev/zero")


def run_paths() -> list[str]:
    paths = sysconfig.get_paths()
    candidates = [paths["stdlib"], paths["platstdlib"], "/usr/lib", "/lib", "/lib64", "/usr/lib64", "/etc/ld.so.cache", *TIME_ZONES]
    return sorted({p for p in candidates if p and os.path.exists(p)})


def site_paths() -> list[str]:
    """The installed packages (nothing there is secret): debugging sessions run pytest inside the child."""
    paths = sysconfig.get_paths()
    return sorted({p for p in (paths["purelib"], paths["platlib"]) if os.path.isdir(p)})


def debug_paths() -> list[str]:
    return sorted({*run_paths(), *site_paths()})


def _beneath_except(path: str, excluded: Path) -> list[str]:
    """``path``, or where it holds ``excluded``, each of its entries except the branch leading there."""
    here = Path(path)
    if not excluded.is_relative_to(here):
        return [path]
    if here == excluded:
        return []
    granted: list[str] = []
    for entry in os.scandir(here):
        real = os.path.realpath(entry.path)
        if excluded.is_relative_to(real):
            if not entry.is_symlink():
                granted += _beneath_except(real, excluded)
            continue  # a link to the project or to one of its parents: never followed
        granted.append(real)
    return granted


def shell_paths(project_root: Path = PROJECT_ROOT) -> list[str]:
    """System directories, Python and its site-packages: read and execute, never the project's tree."""
    paths = sysconfig.get_paths()
    wanted = [*SYSTEM_DIRS, *ETC_READABLE, *DEVICES_READABLE, sys.base_prefix, sys.prefix, paths["purelib"], paths["platlib"]]
    granted: list[str] = []
    for path in wanted:
        if path and os.path.exists(path):
            granted += _beneath_except(os.path.realpath(path), project_root.resolve())
    return sorted(set(granted))


def exposure(path: str) -> str:
    """The readable tree (of any kind of run, links resolved) that holds ``path``, or "" when none does."""
    real = Path(os.path.realpath(path))
    for tree in sorted({os.path.realpath(p) for p in (*debug_paths(), *shell_paths())}):
        if real.is_relative_to(tree):
            return tree
    return ""
