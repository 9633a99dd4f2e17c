"""Parsing and formatting of human-friendly quantities.

* durations: ``"250ms"``, ``"30s"``, ``"1.5m"``, ``"2h"``, ``"1d"``, compounds
  like ``"1h30m"``; a bare number means seconds. Parsed to integer
  **milliseconds** so that sub-second values survive exactly.
* sizes: ``"512"``, ``"10kB"``, ``"2.5MB"``, ``"1GiB"``; parsed to bytes.
* rates: a size per second, ``"10MB/s"``; parsed to bytes per second.
"""

from __future__ import annotations

import re

from syncplan.errors import UnitError

_DURATION_UNITS_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")

_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([a-z]*)")


def parse_duration(text: str) -> int:
    """Parse a duration string into integer milliseconds."""
    cleaned = text.strip().lower().replace(" ", "")
    if not cleaned:
        raise UnitError("empty duration")
    try:
        return round(float(cleaned) * 1000)
    except ValueError:
        pass
    pos = 0
    total = 0.0
    for match in _DURATION_PART.finditer(cleaned):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _DURATION_UNITS_MS[match.group(2)]
        pos = match.end()
    if pos != len(cleaned) or pos == 0:
        raise UnitError(f"invalid duration: {text!r}")
    return round(total)


def format_duration(seconds: float) -> str:
    """``5400 -> '1h 30m'``, ``45 -> '45s'``, ``0.25 -> '250ms'``."""
    if seconds < 1:
        return f"{round(seconds * 1000)}ms"
    remaining = round(seconds)
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        count, remaining = divmod(remaining, size)
        if count:
            parts.append(f"{count}{unit}")
    return " ".join(parts)


def parse_size(text: str) -> int:
    """Parse ``"2.5MB"`` (decimal) or ``"1GiB"`` (binary) into bytes."""
    match = _SIZE.fullmatch(text.strip().lower())
    if not match or match.group(2) not in _SIZE_UNITS:
        raise UnitError(f"invalid size: {text!r}")
    return round(float(match.group(1)) * _SIZE_UNITS[match.group(2)])


def parse_rate(text: str) -> float:
    """Parse ``"10MB/s"`` into bytes per second (``"/s"`` may be omitted)."""
    cleaned = text.strip()
    if cleaned.lower().endswith("/s"):
        cleaned = cleaned[:-2]
    rate = parse_size(cleaned)
    if rate <= 0:
        raise UnitError(f"rate must be positive: {text!r}")
    return float(rate)
