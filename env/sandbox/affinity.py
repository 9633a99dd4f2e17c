"""One CPU for the two processes of a split run: the trusted test host and the sandbox child that runs the project.

    with PAIRS.pinned() as cpu:          # the least used of the CPUs this server may run on (None: not pinning)
        pin(child_pid, cpu)              # every thread of the child and of every process below it
        pin(host_pid, cpu)

Why: under the split every project call is a round trip between the two processes, and they never compute at the
same time (one waits for the other's reply). On two CPUs the kernel often wakes the other process on the other CPU,
and a wake-up across CPUs costs far more than one on the same CPU: on the 2-core VM this was measured on, a pipe
ping-pong took about 70-85 µs across CPUs and about 7 µs on one, and a proxied call about 150 µs unpinned against
50 µs pinned (docs/performance.md, "The split's per-call cost"). Pairs are spread over the CPUs, least used first,
so concurrent runs still use every core; the server's own threads are never pinned.

Pinning is an optimisation, not a guarantee: where the kernel refuses it (a process that already ended, a CPU taken
away by a cgroup) the run goes on unpinned. ``SANDBOX_PAIR_CPU=off`` turns it off.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path

from env import settings
from env.process_state import process_wide


class CpuPairs:
    """Hands out CPUs to split runs, least used first (the lowest-numbered among equals)."""

    def __init__(self, cpus: set[int] | None = None) -> None:
        allowed = cpus if cpus is not None else (os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set())
        self._use = dict.fromkeys(sorted(allowed), 0)
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def pinned(self) -> Iterator[int | None]:
        """A CPU for one pair while the block runs; None when pinning is off or there is only one CPU to choose."""
        if len(self._use) < 2 or not settings.switch("SANDBOX_PAIR_CPU"):
            yield None
            return
        with self._lock:
            cpu = min(self._use, key=lambda c: (self._use[c], c))
            self._use[cpu] += 1
        try:
            yield cpu
        finally:
            with self._lock:
                self._use[cpu] -= 1

    def in_use(self) -> dict[int, int]:
        with self._lock:
            return dict(self._use)


def pin(pid: int, cpu: int | None) -> bool:
    """Pin every thread of ``pid`` and of every process below it to ``cpu``; False if any refused (it runs on as it
    was: a process that ended, a CPU no longer allowed). Threads and processes started later inherit the pinning."""
    if cpu is None or not hasattr(os, "sched_setaffinity"):
        return False
    done, todo, seen = True, [pid], set()
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        try:
            threads = [int(t) for t in os.listdir(f"/proc/{current}/task")]
        except OSError:
            done = False
            continue
        for tid in threads:
            try:
                os.sched_setaffinity(tid, {cpu})
            except OSError:
                done = False
            with contextlib.suppress(OSError, ValueError):
                todo.extend(int(c) for c in Path(f"/proc/{current}/task/{tid}/children").read_text().split())
    return done


PAIRS = process_wide("cpu_pairs", CpuPairs)  # the machine's CPUs: every split run of this process counts (env.process_state)
