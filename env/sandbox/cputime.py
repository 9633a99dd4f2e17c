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
        stat = _proc(f"/proc/{pid}/stat")
        fields = stat[stat.rindex(b")") + 2 :].split()  # after the command's closing parenthesis (proc(5)): utime is the
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


def waited_for_cpu(processes: Iterable[int]) -> float | None:
    """The time ``processes`` lost waiting for a CPU (the kernel's schedstat: runnable but not running, in seconds):
    each process's longest-waiting live thread, summed over the processes (a split run's two take turns, never
    computing at once); None where the kernel does not say."""
    total: float | None = None
    for pid in processes:
        longest: float | None = None
        with contextlib.suppress(OSError, ValueError):
            for task in os.listdir(f"/proc/{pid}/task"):
                waited = _schedstat_wait(f"/proc/{pid}/task/{task}/schedstat")
                if waited is not None:
                    longest = waited if longest is None else max(longest, waited)
        if longest is not None:
            total = longest + (total or 0.0)
    return total


def _schedstat_wait(path: str) -> float | None:
    """The second field of a task's schedstat: its time runnable but not running, in seconds."""
    try:
        return int(_proc(path).split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


def _proc(path: str, size: int = 1 << 16) -> bytes:
    """A /proc file's text (its first ``size`` bytes), read in one system call (a run reads a few at its start: this
    is the hot path)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, size)
    finally:
        os.close(fd)


def machine_busy(cpus: Iterable[int]) -> float | None:
    """The CPU seconds every process together used on ``cpus`` since boot (``/proc/stat``: all but idle and I/O wait);
    None where the kernel does not say."""
    wanted = {f"cpu{n}".encode() for n in cpus}
    if not wanted:
        return None
    try:
        # the per-CPU lines come first, under 256 bytes each: the rest (the interrupt counts) is not read
        head = _proc("/proc/stat", 256 * (max(cpus) + 3))
        lines = [f for f in (line.split() for line in head.split(b"\n")[:-1]) if f and f[0] in wanted]
        if len(lines) != len(wanted):
            return None
        ticks = sum(int(f[1]) + int(f[2]) + int(f[3]) + int(f[6]) + int(f[7]) + int(f[8]) for f in lines)
    except (OSError, ValueError, IndexError):
        return None
    return ticks / _HZ


def starved_for(waited: float, machine: float, own: float, cpus: int) -> float:
    """The seconds a run was kept from a CPU by others: its threads' longest wait (``waited``), at most what the
    machine used on the run's ``cpus`` CPUs (``machine`` CPU seconds) beyond the run's own use (``own``), per CPU."""
    return max(0.0, min(waited, (machine - own) / max(1, cpus)))


class WaitCredit:
    """What a wall-clock run is owed for the time its process waited for a CPU that others on the machine took.

    On a busy machine a run that needs half a second of CPU can take several of wall clock (its code is niced, and
    shares each CPU with whatever else runs there): the agent would be charged the machine's load. Its deadline moves by the
    longest wait of any of its threads (a thread only waits this way while it could compute; sleeping, blocking or
    waiting on the trusted side is not counted), but never by more than the CPU time the rest of the machine used
    on the run's CPUs in the meantime, per CPU: the code's own threads crowding each other wait as long on an idle
    machine, and buy nothing. Up to a ceiling (``Limits.ceiling_seconds``), which the caller keeps. Where the
    kernel does not say (no schedstat, no /proc/stat) nothing is owed: the wall clock counts as it is.
    ``owed()`` is the new credit since the last credit, or since ``restart()``; ``total`` what was owed in all.
    Several processes (a split run's child and its trusted test process) are one run: their waits add up."""

    MIN_SECONDS = 0.05  # less than this is no starvation worth crediting

    def __init__(self, *pids: int):
        self.pids = list(pids)
        cpus: set[int] = set()
        for pid in pids:
            with contextlib.suppress(OSError):
                cpus |= os.sched_getaffinity(pid)
        self.cpus = sorted(cpus)
        self.total = 0.0
        # each is a new process of one thread yet (a run's child, its code not loaded; a test process just forked):
        # its own files say all
        waits = [_schedstat_wait(f"/proc/{pid}/schedstat") for pid in pids]
        used = [own_seconds(pid) for pid in pids]
        self._base = self._read(
            None if None in waits else sum(w for w in waits if w is not None),
            None if None in used else sum(u[1] for u in used if u is not None),
        )

    def _read(self, waited: float | None, own: float | None) -> tuple[float, float, float] | None:
        """(longest wait of a thread, the machine's busy CPU seconds on the run's CPUs, the run's own CPU seconds)."""
        busy_now = machine_busy(self.cpus)
        return None if waited is None or busy_now is None or own is None else (waited, busy_now, own)

    def _now(self) -> tuple[float, float, float] | None:
        # the run's processes are those named: a run's code starts none (seccomp lets clone make threads only)
        used = [read[1] for pid in self.pids if (read := own_seconds(pid)) is not None]
        return self._read(waited_for_cpu(self.pids), sum(used) if used else None)

    def restart(self) -> None:
        """Count from now on (what the process waited before: an earlier phase, a command before)."""
        self._base, self.total = self._now(), 0.0

    def owed(self) -> float:
        now = self._now()
        if now is None or self._base is None:
            return 0.0
        credit = starved_for(now[0] - self._base[0], now[1] - self._base[1], now[2] - self._base[2], len(self.cpus))
        if credit < self.MIN_SECONDS:
            return 0.0
        self._base = now
        self.total += credit
        return credit


class Stretch:
    """The deadline of a run handed over to another process that waits on it (a split run's test process): moved,
    as the run's own would be, by what its processes are owed (``WaitCredit``), as far as ``ceiling``. Its waiter
    calls ``tick()`` every ``slots.TICK_S``: from ``AHEAD`` seconds before the deadline on, the deadline moves by
    what is owed, so that the test process, which reads the moved deadline only once its own has passed, finds it
    moved in time."""

    AHEAD = 0.3

    def __init__(self, credit: WaitCredit, deadline: float, ceiling: float):
        self.credit, self.deadline, self.ceiling = credit, deadline, ceiling
        self.moved = 0.0  # how far the deadline moved in all


    def tick(self, now: float) -> bool:
        """Whether the deadline moved."""
        if now < self.deadline - self.AHEAD or self.deadline >= self.ceiling:
            return False
        owed = self.credit.owed()
        if owed <= 0:
            return False
        moved = min(self.ceiling, self.deadline + owed) - self.deadline
        self.deadline += moved
        self.moved += moved
        return True

    def starved(self, wall_seconds: float, share: float) -> bool:
        """Whether the deadline moved as far as it may, the run having waited at least ``share`` of its limit."""
        return self.deadline >= self.ceiling and self.credit.total >= share * wall_seconds


def starved_run(ceiling: float, waited: float, wall_seconds: float) -> str:
    """Why a wall-clock run stopped at its ceiling is the machine's failure (``infra_cause`` ``run_starved``)."""
    return (
        f"the run was stopped after {ceiling:g} s of wall clock, {waited:.1f} s of it waiting for a CPU the machine gave "
        f"to others, before its {wall_seconds:g} s ran out: the machine is too busy"
    )


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
