"""CPU slots: a run holds one only while it can use the CPU, and waiting runs are served fairly across episodes.

    slots = CpuSlots(2)                       # one per core (the runtime's ``cpu``)
    with slots.owner(episode_id):             # an episode's step: every run started inside claims for it
        claim = current_claim()               # what a run takes at its start (None outside any owner: no limit)
        claim.hold()                          # blocks until a slot is free and it is this owner's turn
        meter = claim.meter(lambda: [pid])    # while the run waits for its processes:
        meter.tick()                          #   idle for a window: the slot goes back; busy again: held again
        claim.release()                       # the run ended

Why: a judgment used to hold a slot for its whole wall time. A submission that blocks (a lock wait, ``Event.wait``,
a sleep) then kept a core's slot while using none, and four such clients held up everyone else's runs for seconds.
Now the trusted side watches the run's processes (and every process below them) through ``/proc``: a window in
which they used less than ``BUSY_SHARE`` of one CPU gives the slot back; CPU use after that asks for it again. A run
is never stopped: a parked run whose processes wake up computes while it waits for a slot, so the bound is on
waiting, not on the kernel's scheduling (which the runs' ``nice`` level already tilts towards the server).

Fairness: a free slot goes to the owner (an episode) that was served least recently, and within one owner in
arrival order; so an owner with many waiting runs never delays another's first run by more than one run's CPU
burst. Where ``/proc`` cannot be read the run counts as busy: it keeps its slot, as before this module existed.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from pathlib import Path

from env import timing
from env.infra import InfraFailure

TICK_S = 0.1  # how often a waiting run's processes are sampled
BUSY_SHARE = 0.2  # below this share of one CPU over a tick, a run's processes only wait
_HZ = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class CpuSlots:
    """``count`` slots, handed out fairly across owners; safe from many threads."""

    def __init__(self, count: int, wait_bound_s: float | None = None):
        if count < 1:
            raise ValueError(f"CPU slots: need at least one, got {count}")
        self.count = count
        # ENV_SLOT_WAIT_S: a run that waits longer for a slot fails as the machine's (InfraFailure "slot_wait"), never
        # as the code's: a machine that busy decides nothing about anybody's submission
        self.wait_bound_s = wait_bound_s
        self._cond = threading.Condition()
        self._free = count
        self._waiting: dict[str, deque[Claim]] = {}  # owner -> its waiting claims, oldest first
        self._served: dict[str, int] = {}  # owner -> when it was last granted a slot (a counter, not a clock)
        self._grants = itertools.count(1)
        self.granted = 0  # grants so far (for /metrics and tests)
        self.waited_s = 0.0  # seconds runs spent waiting for a slot, in all

    @contextlib.contextmanager
    def owner(self, name: str) -> Iterator[None]:
        """Runs started inside (on this thread) claim slots for ``name``; an owner already set stays."""
        if _CURRENT.get() is not None:
            yield
            return
        token = _CURRENT.set((self, name))
        try:
            yield
        finally:
            _CURRENT.reset(token)

    def claim(self, owner: str) -> Claim:
        return Claim(self, owner)

    @property
    def busy(self) -> int:
        """Slots held now."""
        with self._cond:
            return self.count - self._free

    @property
    def queued(self) -> int:
        """Runs waiting for a slot now."""
        with self._cond:
            return sum(len(q) for q in self._waiting.values())

    def _acquire(self, claim: Claim) -> float:
        started = time.monotonic()
        with self._cond:
            if self._free > 0 and not self._waiting:
                self._grant(claim)
            else:
                self._waiting.setdefault(claim.owner, deque()).append(claim)
                self._hand_out()
                deadline = None if self.wait_bound_s is None else started + self.wait_bound_s
                while not claim.held:
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        self._give_up(claim)
                        self.waited_s += time.monotonic() - started
                        raise InfraFailure(
                            "slot_wait", f"a run waited {self.wait_bound_s:g} s for one of the server's {self.count} CPU slots (ENV_SLOT_WAIT_S): the machine is too busy"
                        )
                    self._cond.wait(left)
        waited = time.monotonic() - started
        with self._cond:
            self.waited_s += waited
        timing.add("slot", waited)
        return waited

    def _give_up(self, claim: Claim) -> None:
        """Take a claim that waited too long out of its owner's queue (under the lock)."""
        queue = self._waiting.get(claim.owner)
        if queue is not None and claim in queue:
            queue.remove(claim)
            if not queue:
                del self._waiting[claim.owner]

    def _release(self, claim: Claim) -> None:
        with self._cond:
            claim.held = False
            self._free += 1
            self._hand_out()

    def _grant(self, claim: Claim) -> None:
        self._free -= 1
        claim.held = True
        self._served[claim.owner] = next(self._grants)
        self.granted += 1

    def _hand_out(self) -> None:
        """Free slots to waiting claims: the least recently served owner first (one who never was, before all)."""
        while self._free > 0 and self._waiting:
            owner = min(self._waiting, key=lambda name: self._served.get(name, 0))
            queue = self._waiting[owner]
            self._grant(queue.popleft())
            if not queue:
                del self._waiting[owner]
        self._cond.notify_all()


class Claim:
    """One run's use of the slots: held while the run computes, given back while it only waits."""

    def __init__(self, slots: CpuSlots, owner: str):
        self.slots = slots
        self.owner = owner
        self.held = False  # written under the slots' lock

    def hold(self) -> float:
        """Hold a slot (waiting for one if needed); the seconds waited."""
        if self.held:
            return 0.0
        return self.slots._acquire(self)

    def release(self) -> None:
        """Give the slot back, if held (a run that ended, or whose processes only wait)."""
        if self.held:
            self.slots._release(self)

    def meter(self, roots: Callable[[], Iterable[int]]) -> Meter:
        return Meter(self, roots)


class Meter:
    """Samples the CPU time of a run's processes (``roots`` and everything below them) while the run waits for them."""

    def __init__(self, claim: Claim, roots: Callable[[], Iterable[int]]):
        self.claim = claim
        self.roots = roots
        self._last = time.monotonic()
        self._used = cpu_seconds(roots())

    def tick(self) -> float:
        """Call at least every ``TICK_S`` while waiting: parks the claim after an idle window, holds it again after a
        busy one. The seconds spent waiting for a slot (the processes computed meanwhile)."""
        now = time.monotonic()
        if now - self._last < TICK_S:
            return 0.0
        used = cpu_seconds(self.roots())
        busy = used is None or self._used is None or used - self._used >= BUSY_SHARE * (now - self._last)
        self._last, self._used = now, used
        if not busy:
            self.claim.release()
            return 0.0
        if self.claim.held:
            return 0.0
        waited = self.claim.hold()
        self._last, self._used = time.monotonic(), cpu_seconds(self.roots())
        return waited


_CURRENT: ContextVar[tuple[CpuSlots, str] | None] = ContextVar("adbg_cpu_owner", default=None)


def current_claim() -> Claim | None:
    """A claim for a run starting now, for the owner set on this thread (None: no owner, no limit)."""
    found = _CURRENT.get()
    return None if found is None else found[0].claim(found[1])


@functools.cache  # a fact of the kernel, the same for the process's whole life
def _children_listed() -> bool:
    """Whether this kernel lists a thread's children (``CONFIG_PROC_CHILDREN``): without it a run's subprocesses
    cannot be found, so nothing is measured and every run counts as busy."""
    return Path(f"/proc/self/task/{threading.get_native_id()}/children").exists()


def cpu_seconds(roots: Iterable[int]) -> float | None:
    """CPU seconds used so far by ``roots``, every process below them and the children they reaped; None when
    ``/proc`` cannot tell (then the caller assumes they compute). A process that ended drops out of the sum."""
    if not _children_listed():
        return None
    total = 0
    seen: set[int] = set()
    todo = [pid for pid in roots if pid > 0]
    try:
        while todo:
            pid = todo.pop()
            if pid in seen:
                continue
            seen.add(pid)
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
                # fields after the command's closing parenthesis: state is 3rd, utime 14th .. cstime 17th (proc(5))
                fields = stat[stat.rindex(")") + 2 :].split()
                total += sum(int(f) for f in fields[11:15])
                for task in os.listdir(f"/proc/{pid}/task"):
                    with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                        todo.extend(int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split())
            except (FileNotFoundError, ProcessLookupError):
                continue  # it ended: its time went with it (or into its parent's reaped-children count)
    except (OSError, ValueError):
        return None
    return total / _HZ
