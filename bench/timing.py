"""Shared by the bench scripts: the median of repeated timings, after one warm-up call."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_ms(fn: Callable[[], object], runs: int) -> float:
    fn()  # warm-up: the fork servers, templates and caches a long-running server already has
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)
