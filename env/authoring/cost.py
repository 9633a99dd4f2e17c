"""What a piece of authoring work cost: CPU seconds of this process and every process under it, and wall seconds.

    with Meter() as cost:
        validate_task(runtime, task, runs=3)
    cost.cpu_seconds, cost.wall_seconds

The tests of a validation run in processes this one did not wait for: fork servers (the sandbox's zygote, the warm
test hosts) fork each run and reap it themselves, so ``getrusage(RUSAGE_CHILDREN)`` would miss them until the servers
exit. The meter reads instead, from /proc, every live process of this process's tree (user + system time, its own
and its reaped children's): a run that ended and was reaped inside the tree stays counted in its reaper. Only a
process whose parent died before it (reaped by init) is lost, which our processes avoid (``env.sandbox.lifetime``).
Meters of work done at the same time in one process would count each other's: run measured work one at a time per
process (``catalog build --jobs`` uses processes). Precision: the kernel's clock tick (10 ms).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from types import TracebackType

_TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: str) -> tuple[int, int] | None:
    """(parent pid, CPU ticks: user + system, own and reaped children's) of a process, None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # the name, in parentheses, may hold spaces
    return int(fields[1]), sum(int(f) for f in fields[11:15])  # ppid; utime, stime, cutime, cstime


def tree_cpu_seconds(root: int | None = None) -> float:
    """CPU seconds of ``root`` (this process) and every live process under it, with what they reaped."""
    root = os.getpid() if root is None else root
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (found := _stat(name)) is not None:
            parents[int(name)], ticks[int(name)] = found
    total = 0
    for pid in ticks:
        walk = pid
        while walk not in (root, 0, 1) and walk in parents:
            walk = parents[walk]
        if walk == root:
            total += ticks[pid]
    return total / _TICK


class Meter:
    """CPU and wall seconds spent between entering and leaving (see the module's docstring for what is counted)."""

    def __init__(self) -> None:
        self.cpu_seconds = 0.0
        self.wall_seconds = 0.0

    def __enter__(self) -> Meter:
        self._cpu, self._wall = tree_cpu_seconds(), time.monotonic()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, trace: TracebackType | None) -> None:
        self.cpu_seconds = round(max(0.0, tree_cpu_seconds() - self._cpu), 2)
        self.wall_seconds = round(time.monotonic() - self._wall, 2)
