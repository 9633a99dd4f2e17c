"""The CPU time a run's processes use, held against the run's limit where a run decides validity (``clock="cpu"``).

    budget = CpuBudget(10.0, [child_pid])      # Limits.cpu_budget; more processes join with budget.add(pid)
    budget.over()                              # sample now (every slots.TICK_S while waiting): True once past the limit
    budget.used                                # CPU seconds seen so far; budget.measured: whether /proc could tell

Why: a wall-clock limit stops the same run on a busy machine that it lets finish on an idle one, so a task valid idle
was invalid at full load. CPU time is what the run itself spends; load changes it little. Each process counts its own
user and system time (every thread of it) from ``/proc/PID/stat``, and the processes below the roots are found through
``/proc/PID/task/TID/children``; a process keeps the most it was seen to use after it ends, so a process that starts
and ends between two samples (``env.sandbox.slots.TICK_S`` apart) is not counted. Where ``/proc`` cannot tell, ``measured`` is False:
the caller then treats its wall-clock backstop as a time-out, as a wall limit would.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path

_HZ = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def own_seconds(pid: int) -> tuple[int, float] | None:
    """When ``pid`` started (clock ticks after boot: a reused pid is another process) and the CPU seconds (user and
    system, every thread) it used itself; None when it is gone or unreadable."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2 :].split()  # after the command's closing parenthesis (proc(5)): utime is the
        return int(fields[19]), (int(fields[11]) + int(fields[12])) / _HZ  # 12th, stime the 13th, starttime the 20th
    except (OSError, ValueError, IndexError):
        return None


def tree(roots: Iterable[int]) -> list[int]:
    """``roots`` and every live process below them (where the kernel lists a thread's children)."""
    found: list[int] = []
    todo = [pid for pid in roots if pid > 0]
    while todo:
        pid = todo.pop()
        if pid in found:
            continue
        found.append(pid)
        with contextlib.suppress(OSError, ValueError):
            for task in os.listdir(f"/proc/{pid}/task"):
                with contextlib.suppress(OSError, ValueError):
                    todo.extend(int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split())
    return found


class CpuBudget:
    """A run's CPU limit and what its processes used so far (see the module's docstring)."""

    def __init__(self, seconds: float, roots: Iterable[int] = ()):
        self.seconds = seconds
        self.roots: list[int] = list(roots)
        self.seen: dict[tuple[int, int], float] = {}  # each process (pid, start): the most CPU time it was seen to use

    def add(self, pid: int) -> None:
        """Another process of the run (the test process that takes the conversation over)."""
        self.roots.append(pid)

    @property
    def used(self) -> float:
        return sum(self.seen.values())

    @property
    def measured(self) -> bool:
        """Whether ``/proc`` told anything of the run's processes."""
        return bool(self.seen)

    def sample(self) -> float:
        """Read every process of the run now; the CPU seconds used so far."""
        for pid in tree(self.roots):
            read = own_seconds(pid)
            if read is not None:
                key = (pid, read[0])
                self.seen[key] = max(self.seen.get(key, 0.0), read[1])
        return self.used

    def over(self) -> bool:
        """Sample, then whether the run used more than its limit."""
        return self.sample() > self.seconds


def cpu_exceeded(seconds: float) -> str:
    """Why a run that decides validity was stopped for its CPU time."""
    return f"CPU time limit of {seconds:g} s exceeded (the run's processes together)"


STARVED = "the machine was too busy"  # how every account of a starved run begins (a run's, the race check's threads')


def busy(backstop: float, used: float, seconds: float) -> str:
    """Why a run stopped by its wall-clock backstop under its CPU limit has no outcome: the machine was too busy."""
    return (
        f"{STARVED}: the run was stopped by its wall-clock backstop of {backstop:g} s having used {used:.1f} s "
        f"of its {seconds:g} s of CPU time (an infrastructure fault, not the run's outcome)"
    )
