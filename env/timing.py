"""Where a request's time goes, phase by phase (issue 51): recorded only while a recorder is active.

    with recording() as phases:          # the server's middleware, with ENV_SERVER_TIMING on
        with phase("fork"):               # anywhere below, on any thread the request's context was copied to
            ...
    phases.header()                       # "fork;dur=1.234, ..." for the response's Server-Timing header (W3C)

Without a recorder (the default: the setting is off) ``phase`` costs one context-variable lookup. Each phase counts
its own time only: a phase inside another (the fork inside a held-out run) is taken out of the outer one, so the
phases of a request add up to its ``total`` (work a phase hands to another thread and waits for, as the race check
does, counts where it ran). A phase met twice (two children forked) is summed. Nothing here reaches a reward or a
grade: it is the bench's view.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from contextvars import ContextVar

# The phases a step may record, in the order a submission meets them (the bench prints them in this order).
PHASES = (
    "reset", "queue", "lock", "policy", "slot", "fork", "load", "baseline", "visible", "held_out", "race", "reap", "grade", "observe", "step", "http", "total",
)  # fmt: skip


class Phases:
    """Seconds per phase name, added from any thread."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.lock = threading.Lock()

    def add(self, name: str, seconds: float) -> None:
        with self.lock:
            self.seconds[name] = self.seconds.get(name, 0.0) + seconds

    def header(self) -> str:
        """The Server-Timing value: each phase's milliseconds, in ``PHASES`` order."""
        with self.lock:
            known = [n for n in PHASES if n in self.seconds] + sorted(n for n in self.seconds if n not in PHASES)
            return ", ".join(f"{name};dur={self.seconds[name] * 1000:.3f}" for name in known)


class _Frame:
    """An open phase: the time its inner phases took, to be taken out of its own."""

    def __init__(self) -> None:
        self.inner = 0.0


_CURRENT: ContextVar[Phases | None] = ContextVar("adbg_phases", default=None)
_OPEN: ContextVar[_Frame | None] = ContextVar("adbg_phase_open", default=None)


@contextlib.contextmanager
def recording() -> Iterator[Phases]:
    """Record the phases of what runs inside (and of the threads its context is copied to)."""
    phases = Phases()
    token, opened = _CURRENT.set(phases), _OPEN.set(None)
    try:
        yield phases
    finally:
        _OPEN.reset(opened)
        _CURRENT.reset(token)


@contextlib.contextmanager
def phase(name: str) -> Iterator[None]:
    """Time what runs inside as ``name`` (less its inner phases), when a recorder is active."""
    phases = _CURRENT.get()
    if phases is None:
        yield
        return
    outer, frame = _OPEN.get(), _Frame()
    token = _OPEN.set(frame)
    started = time.perf_counter()
    try:
        yield
    finally:
        spent = time.perf_counter() - started
        _OPEN.reset(token)
        with phases.lock:
            phases.seconds[name] = phases.seconds.get(name, 0.0) + spent - frame.inner
            if outer is not None:
                outer.inner += spent


def add(name: str, seconds: float) -> None:
    """Record ``seconds`` measured elsewhere (a wait the caller timed itself), when a recorder is active; taken out of
    the phase it happened in."""
    phases = _CURRENT.get()
    if phases is None:
        return
    outer = _OPEN.get()
    with phases.lock:
        phases.seconds[name] = phases.seconds.get(name, 0.0) + seconds
        if outer is not None:
            outer.inner += seconds
