"""Fixed UTC offsets as they appear in timesheet files and settings.

Accepted spellings: ``Z``, ``UTC``, ``GMT``, ``+02:00``, ``-0530``, ``+09``.
"""

from __future__ import annotations

import re
from datetime import timedelta, timezone, tzinfo

UTC = timezone.utc

_OFFSET_RE = re.compile(r"^([+-])(\d{2})(?::?(\d{2}))?$")
_MAX_OFFSET = timedelta(hours=14)


class ZoneError(ValueError):
    """An offset that cannot be understood."""


def parse_offset(text: str) -> timezone:
    """Return the fixed-offset zone written as ``text``."""
    cleaned = text.strip()
    if cleaned.upper() in {"Z", "UTC", "GMT"}:
        return UTC
    match = _OFFSET_RE.match(cleaned)
    if match is None:
        raise ZoneError(f"not a UTC offset: {text!r}")
    sign, hours, minutes = match.groups()
    if int(minutes or 0) >= 60:
        raise ZoneError(f"minutes out of range in offset {text!r}")
    delta = timedelta(hours=int(hours), minutes=int(minutes or 0))
    if delta > _MAX_OFFSET:
        raise ZoneError(f"offset {text!r} is beyond +/-14:00")
    if sign == "-":
        delta = -delta
    if not delta:
        return UTC
    return timezone(delta)


def as_zone(value: str | tzinfo | None) -> tzinfo:
    """Accept a zone object, an offset string or None (meaning UTC)."""
    if value is None:
        return UTC
    if isinstance(value, str):
        return parse_offset(value)
    return value


def format_offset(zone: tzinfo) -> str:
    """Render a zone as ``+HH:MM`` (``+00:00`` for UTC)."""
    delta = zone.utcoffset(None)
    if delta is None:
        raise ZoneError("zone has no fixed offset")
    sign = "-" if delta < timedelta(0) else "+"
    total = abs(int(delta.total_seconds())) // 60
    return f"{sign}{total // 60:02d}:{total % 60:02d}"
