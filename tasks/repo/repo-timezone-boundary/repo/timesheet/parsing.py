"""Reading timesheet text.

One entry per line: ``START END PROJECT [NOTE...]``. ``START`` is an ISO
timestamp (its offset may be omitted, the sheet's default zone is then used);
``END`` is an ISO timestamp, a local ``HH:MM`` or a duration (``45m``,
``2h``, ``1h30m``). ``#`` starts a comment.
"""

from __future__ import annotations

import re
from datetime import datetime, time, timedelta, tzinfo

from timesheet.entries import Entry, EntryError
from timesheet.zones import UTC

_CLOCK_RE = re.compile(r"^(\d{1,2}):(\d{2})$")
_DURATION_RE = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?$")


class ParseError(ValueError):
    """A line that is not a valid entry; ``lineno`` is 1-based."""

    def __init__(self, message: str, lineno: int = 0):
        super().__init__(f"line {lineno}: {message}" if lineno else message)
        self.lineno = lineno


def _parse_start(token: str, default_tz: tzinfo) -> datetime:
    try:
        moment = datetime.fromisoformat(token)
    except ValueError:
        raise ParseError(f"bad start time {token!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=default_tz)
    return moment


def _parse_end(token: str, start: datetime) -> datetime:
    """Resolve the end token against ``start`` (still in its own offset)."""
    clock = _CLOCK_RE.match(token)
    if clock:
        hour, minute = int(clock.group(1)), int(clock.group(2))
        if hour > 23 or minute > 59:
            raise ParseError(f"bad clock time {token!r}")
        end = datetime.combine(start.date(), time(hour, minute), tzinfo=start.tzinfo)
        if end <= start:
            end += timedelta(days=1)
        return end
    duration = _DURATION_RE.match(token)
    if duration and any(duration.groups()):
        hours, minutes = (int(part or 0) for part in duration.groups())
        return start + timedelta(hours=hours, minutes=minutes)
    try:
        end = datetime.fromisoformat(token)
    except ValueError:
        raise ParseError(f"bad end {token!r}") from None
    if end.tzinfo is None:
        end = end.replace(tzinfo=start.tzinfo)
    return end


def parse_line(line: str, default_tz: tzinfo = UTC, lineno: int = 0) -> Entry | None:
    """Parse one line; blank lines and comments give ``None``."""
    text = line.split("#", 1)[0].strip()
    if not text:
        return None
    parts = text.split(None, 3)
    if len(parts) < 3:
        raise ParseError("expected START END PROJECT", lineno)
    try:
        start = _parse_start(parts[0], default_tz)
        end = _parse_end(parts[1], start)
        note = parts[3] if len(parts) > 3 else ""
        return Entry(start=start, end=end, project=parts[2], note=note)
    except ParseError as exc:
        raise ParseError(str(exc), lineno) from None
    except EntryError as exc:
        raise ParseError(str(exc), lineno) from None


def parse_text(text: str, default_tz: tzinfo = UTC) -> list[Entry]:
    """Parse a whole sheet, keeping the order of the lines."""
    entries = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        entry = parse_line(line, default_tz, lineno)
        if entry is not None:
            entries.append(entry)
    return entries
