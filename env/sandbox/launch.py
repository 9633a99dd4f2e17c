"""Starting a sandbox process: a fresh ``python -s -P -S`` on one of this package's child-side scripts.

The runner (a child on the cold path), the zygote and run_bash's launcher start theirs alike, so
they share this: no site and no environment but what the caller passes (plus the hash seed below), stdin on
/dev/null, no inherited fd but those named, and a session of its own, whose process group ``kill_group`` ends
with everything the process left in it. Each dies with this process (``env.sandbox.lifetime``): it is started
on a thread that lives as long as the process and told its parent's pid (the last argument: the scripts pop it
before anything else reads ``sys.argv``; not through their environment), for PR_SET_PDEATHSIG.
"""

from __future__ import annotations

import compileall
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from env.sandbox.lifetime import spawn

CHILD = Path(__file__).parent / "inside" / "child.py"  # runs, the zygote and the start-up probe
SHELL_CHILD = Path(__file__).parent / "inside" / "shell_child.py"  # run_bash's launcher
LAYERS = Path(__file__).parent / "inside" / "layers.py"  # the isolation layers both apply to themselves
SHELL_QUOTA = Path(__file__).parent / "inside" / "shell_quota.py"  # run_bash's workspace quota, in the launcher
# ``-I`` but for its ``-E``: no user site (-s), not the script's folder on the path (-P). What -E would ignore, a
# PYTHON* variable, is refused instead (``python_env``), but for the hash seed a split run gives its project's
# interpreter: the seed of the trusted test process it talks to (env.verdict.repo_judge), so that a project's hash of
# a string, a number or a tuple of them is the tests' hash of the same value (a dict of the tests' keyed by strings
# finds a project's str subclass, as in process). The seed is no secret: what a hash decides on the trusted side an
# equality check confirms there. Without one, each interpreter draws its own, as Python does.
PYTHON_FLAGS = ("-s", "-P", "-S", "-B", "-X", "utf8")


def compile_child_scripts() -> None:
    """Bytecode for the child-side scripts, written by this (trusted) process next to them (``inside/__pycache__``):
    a child writes none (``-B``), so without it each fresh child compiled the whole folder again, about 30 ms of
    every repository run's start. Up to date it costs a stat per file. Where the folder is read-only (the Dockerfile
    compiles it at build) children compile as before: slower, never different."""
    with contextlib.suppress(OSError):
        compileall.compile_dir(CHILD.parent, quiet=2, maxlevels=0)


def python_command(script: Path, *args: str) -> list[str]:
    """The command line that runs ``script`` in an isolated interpreter: no site, no user paths, no bytecode written."""
    return [sys.executable, *PYTHON_FLAGS, str(script), *args]


def python_env(env: dict[str, str], hash_seed: int | None = None) -> dict[str, str]:
    """``env`` for a sandbox interpreter: ``hash_seed`` added when given (else it draws its own), no other variable
    the interpreter itself would read."""
    read = sorted(key for key in env if key.startswith("PYTHON"))
    if read:
        raise ValueError(f"a sandbox interpreter reads no PYTHON* variable but its hash seed: {', '.join(read)}")
    if hash_seed is not None and not 0 <= hash_seed < 2**32:
        raise ValueError(f"a hash seed is a number from 0 to 4294967295, not {hash_seed}")
    return env if hash_seed is None else {**env, "PYTHONHASHSEED": str(hash_seed)}


def start(
    script: Path,
    *args: str,
    stdout: int,
    stderr: int,
    env: dict[str, str],
    pass_fds: Sequence[int],
    cwd: str | Path | None = None,
    hash_seed: int | None = None,
) -> subprocess.Popen:
    """``script`` in a new session (process group): the caller's kill reaches all it starts; this process's
    death (however it comes) kills it."""
    return spawn(lambda: subprocess.Popen(
        python_command(script, *args, str(os.getpid())),
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=stderr,
        cwd=cwd,
        env=python_env(env, hash_seed),
        close_fds=True,
        pass_fds=tuple(pass_fds),
        start_new_session=True,
    ))


def kill_group(pid: int) -> None:
    """SIGKILL the process group ``start`` made for ``pid``; one already gone (or out of reach) is no error."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
