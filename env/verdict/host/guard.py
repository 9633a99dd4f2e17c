"""What the trusted test process refuses to do, whatever a task's tests ask: run a program, or open a file of the
server's scratch directory outside its own tests tree (the sandbox's copy of the project lives there: running or
reading it here would run the agent's code outside the sandbox).

    install(scratch="/dev/shm/adbg-1-x", tests=os.getcwd())   # an audit hook, for the rest of the process's life

A test that starts the project as a program (a CLI test), ``runpy``s or ``exec``s a project file fails with the
message below; it never runs the project's code here. Standard library only.
"""

from __future__ import annotations

import os
import sys
from typing import Any

PROGRAMS = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "pty.spawn")
REFUSED = "the trusted test process runs no program and reads no project file ({what}): the project's code runs only in the sandbox"


class Refused(PermissionError):
    """A test asked the trusted process for something only the sandbox may do."""


def install(scratch: str, tests: str) -> None:
    scratch_root = os.path.realpath(scratch) + os.sep
    tests_root = os.path.realpath(tests) + os.sep

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event in PROGRAMS:
            raise Refused(REFUSED.format(what=event))
        if event == "open" and args and isinstance(args[0], (str, bytes)):
            path = os.fsdecode(args[0])
            full = os.path.realpath(path if os.path.isabs(path) else os.path.join(os.getcwd(), path))
            if (full + os.sep).startswith(scratch_root) and not (full + os.sep).startswith(tests_root):
                raise Refused(REFUSED.format(what=f"open {path}"))

    sys.addaudithook(hook)
