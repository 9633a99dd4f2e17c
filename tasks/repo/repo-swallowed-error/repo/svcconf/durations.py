"""Durations written as ``"90s"``, ``"5m"``, ``"1h30m"`` or a bare number of seconds."""

import re
from datetime import timedelta

_UNITS = {"ms": "milliseconds", "s": "seconds", "m": "minutes", "h": "hours", "d": "days"}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")


def parse_duration(text: str) -> timedelta:
    """Parse a duration; raise ``ValueError`` for anything else."""
    text = text.strip().lower()
    if not text:
        raise ValueError("empty duration")
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        return timedelta(seconds=float(text))
    pos = 0
    total = timedelta()
    for match in _PART.finditer(text):
        if match.start() != pos:
            break
        total += timedelta(**{_UNITS[match.group(2)]: float(match.group(1))})
        pos = match.end()
    if pos != len(text):
        raise ValueError(f"not a duration: {text!r}")
    return total


def format_duration(value: timedelta) -> str:
    """The shortest ``1h30m``-style spelling of a whole number of seconds."""
    seconds = int(value.total_seconds())
    if seconds == 0:
        return "0s"
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)
