"""Smoothing filters for noisy series."""

from __future__ import annotations

from typing import Sequence

from sensorkit.stats import mean
from sensorkit.window import sliding


def moving_average(values: Sequence[float], size: int) -> list[float]:
    """Simple moving average: one value per full window of ``size`` readings.

    The result has ``len(values) - size + 1`` entries; entry ``i`` averages
    ``values[i : i + size]``.
    """
    return [round(mean(window), 6) for window in sliding(values, size)]


def ewma(values: Sequence[float], alpha: float) -> list[float]:
    """Exponentially weighted moving average, same length as ``values``."""
    if not 0 < alpha <= 1:
        raise ValueError(f"alpha must be in (0, 1], got {alpha}")
    smoothed: list[float] = []
    for value in values:
        previous = smoothed[-1] if smoothed else value
        smoothed.append(round(alpha * value + (1 - alpha) * previous, 6))
    return smoothed
