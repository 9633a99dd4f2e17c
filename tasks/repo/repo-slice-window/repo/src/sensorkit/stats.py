"""Small statistics helpers that tolerate empty input where it makes sense."""

from __future__ import annotations

import math
import statistics
from typing import Sequence


def mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def spread(values: Sequence[float]) -> float:
    """Population standard deviation; 0.0 for fewer than two values."""
    return statistics.pstdev(values) if len(values) > 1 else 0.0


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile (``pct`` in 0..100)."""
    if not values:
        raise ValueError("percentile of an empty sequence")
    if not 0 <= pct <= 100:
        raise ValueError(f"percentile must be within 0..100, got {pct}")
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]
