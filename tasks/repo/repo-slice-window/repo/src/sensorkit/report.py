"""Per-sensor text summaries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from sensorkit.readings import Reading, by_sensor
from sensorkit.stats import mean, percentile, spread
from sensorkit.window import last_n


@dataclass(frozen=True)
class SensorSummary:
    sensor: str
    count: int
    minimum: float
    maximum: float
    average: float
    p90: float
    stddev: float
    recent_average: float


def summarize(readings: Iterable[Reading], recent: int = 5) -> list[SensorSummary]:
    """One summary per sensor, sorted by sensor id."""
    summaries = []
    for sensor, group in sorted(by_sensor(readings).items()):
        values = [r.value for r in group]
        summaries.append(
            SensorSummary(
                sensor=sensor,
                count=len(values),
                minimum=min(values),
                maximum=max(values),
                average=round(mean(values), 3),
                p90=percentile(values, 90),
                stddev=round(spread(values), 3),
                recent_average=round(mean(last_n(values, recent)), 3),
            )
        )
    return summaries


def render(summaries: Iterable[SensorSummary]) -> str:
    lines = [f"{'sensor':<16}{'n':>5}{'min':>8}{'max':>8}{'avg':>8}{'recent':>8}"]
    for s in summaries:
        lines.append(f"{s.sensor:<16}{s.count:>5}{s.minimum:>8g}{s.maximum:>8g}{s.average:>8g}{s.recent_average:>8g}")
    return "\n".join(lines)
