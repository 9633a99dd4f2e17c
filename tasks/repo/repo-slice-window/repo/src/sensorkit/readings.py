"""Reading records and the line format sensors upload.

One reading per line: ``<ISO-8601 timestamp>,<sensor id>,<value>``. Blank lines
and lines starting with ``#`` are ignored.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Iterable


class ParseError(ValueError):
    def __init__(self, line_no: int, message: str):
        super().__init__(f"line {line_no}: {message}")
        self.line_no = line_no


@dataclass(frozen=True, order=True)
class Reading:
    timestamp: datetime
    sensor: str
    value: float


def _parse_timestamp(text: str) -> datetime:
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    stamp = datetime.fromisoformat(text)
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=timezone.utc)
    return stamp.astimezone(timezone.utc)


def parse_line(line: str, line_no: int = 1) -> Reading:
    parts = [p.strip() for p in line.split(",")]
    if len(parts) != 3:
        raise ParseError(line_no, f"expected 3 fields, got {len(parts)}")
    stamp_text, sensor, value_text = parts
    if not sensor:
        raise ParseError(line_no, "missing sensor id")
    try:
        stamp = _parse_timestamp(stamp_text)
    except ValueError:
        raise ParseError(line_no, f"bad timestamp {stamp_text!r}") from None
    try:
        value = float(value_text)
    except ValueError:
        raise ParseError(line_no, f"bad value {value_text!r}") from None
    return Reading(stamp, sensor.lower(), value)


def parse_lines(text: str) -> list[Reading]:
    """Parse a whole upload, returning readings sorted by time then sensor."""
    readings = []
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        readings.append(parse_line(line, line_no))
    return sorted(readings)


def by_sensor(readings: Iterable[Reading]) -> dict[str, list[Reading]]:
    """Group readings per sensor, each group in time order."""
    groups: dict[str, list[Reading]] = defaultdict(list)
    for reading in sorted(readings):
        groups[reading.sensor].append(reading)
    return dict(groups)
