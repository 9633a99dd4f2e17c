"""Threshold alerts on rolling averages.

A rule fires when the moving average over ``window`` consecutive readings of a
sensor goes above (or below) a threshold. Consecutive firing windows are merged
into one alert that starts at the first reading of the first window and ends
at the last reading of the last one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Iterable

from sensorkit.readings import Reading, by_sensor
from sensorkit.smoothing import moving_average


@dataclass(frozen=True)
class AlertRule:
    sensor: str
    threshold: float
    window: int = 3
    direction: str = "above"

    def __post_init__(self) -> None:
        if self.direction not in ("above", "below"):
            raise ValueError(f"direction must be 'above' or 'below', got {self.direction!r}")
        if self.window < 1:
            raise ValueError("window must be at least 1")

    def breached(self, average: float) -> bool:
        return average > self.threshold if self.direction == "above" else average < self.threshold


@dataclass(frozen=True)
class Alert:
    sensor: str
    start: datetime
    end: datetime
    peak: float

    def describe(self) -> str:
        return f"{self.sensor}: {self.start:%H:%M}-{self.end:%H:%M} peak {self.peak:g}"


def _alerts_for(rule: AlertRule, readings: list[Reading]) -> list[Alert]:
    averages = moving_average([r.value for r in readings], rule.window)
    alerts: list[Alert] = []
    run_start: int | None = None
    run_peak = 0.0
    for i, average in enumerate(averages + [None]):
        firing = average is not None and rule.breached(average)
        if firing:
            if run_start is None:
                run_start, run_peak = i, average
            else:
                run_peak = max(run_peak, average) if rule.direction == "above" else min(run_peak, average)
        elif run_start is not None:
            last = i - 1 + rule.window - 1
            alerts.append(Alert(rule.sensor, readings[run_start].timestamp, readings[last].timestamp, run_peak))
            run_start = None
    return alerts


def evaluate(rules: Iterable[AlertRule], readings: Iterable[Reading]) -> list[Alert]:
    """All alerts for ``rules`` over ``readings``, ordered by start time then sensor."""
    groups = by_sensor(readings)
    alerts: list[Alert] = []
    for rule in rules:
        alerts.extend(_alerts_for(rule, groups.get(rule.sensor.lower(), [])))
    return sorted(alerts, key=lambda a: (a.start, a.sensor))
