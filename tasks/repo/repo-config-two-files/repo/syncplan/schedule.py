"""Laying out sync runs over a planning horizon."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from syncplan.mirror import Mirror


@dataclass(frozen=True, order=True)
class Run:
    at: float
    mirror: str
    deadline: float


def build_schedule(mirrors: Iterable[Mirror], horizon: float) -> list[Run]:
    """Every run that starts in ``[0, horizon)`` seconds, ordered by time then mirror.

    A mirror first runs at its ``offset`` and then every ``interval`` seconds;
    a run must be finished by ``at + timeout``.
    """
    if horizon <= 0:
        raise ValueError("horizon must be positive")
    runs = []
    for mirror in mirrors:
        at = mirror.offset
        while at < horizon:
            runs.append(Run(at, mirror.name, at + mirror.timeout))
            at += mirror.interval
    return sorted(runs)


def max_concurrency(runs: Iterable[Run]) -> int:
    """The largest number of runs whose ``[at, deadline)`` windows overlap."""
    events = []
    for run in runs:
        events.append((run.at, 1))
        events.append((run.deadline, -1))
    events.sort(key=lambda e: (e[0], e[1]))
    active = peak = 0
    for _, delta in events:
        active += delta
        peak = max(peak, active)
    return peak


def runs_per_day(mirror: Mirror) -> int:
    """How many times the mirror starts a run in a 24 hour day."""
    return len(build_schedule([mirror], 86400))
