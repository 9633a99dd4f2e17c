"""The work entry: one contiguous stretch of time spent on a project."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from timesheet.zones import UTC


class EntryError(ValueError):
    """An entry whose times make no sense."""


MAX_ENTRY = timedelta(hours=24)


@dataclass(frozen=True)
class Entry:
    """Work on ``project`` from ``start`` (inclusive) to ``end`` (exclusive).

    Both instants are timezone-aware and kept in UTC; use
    :func:`timesheet.periods.local_date` to see them on a user's calendar.
    """

    start: datetime
    end: datetime
    project: str
    note: str = ""

    def __post_init__(self) -> None:
        if self.start.tzinfo is None or self.end.tzinfo is None:
            raise EntryError("entry times must carry a UTC offset")
        if self.end <= self.start:
            raise EntryError(f"entry for {self.project!r} ends before it starts")
        if self.end - self.start > MAX_ENTRY:
            raise EntryError(f"entry for {self.project!r} is longer than 24 hours")
        if not self.project:
            raise EntryError("entry has no project")
        object.__setattr__(self, "start", self.start.astimezone(UTC))
        object.__setattr__(self, "end", self.end.astimezone(UTC))

    @property
    def minutes(self) -> int:
        """Length of the entry in whole minutes."""
        return int((self.end - self.start).total_seconds() // 60)

    def overlaps(self, other: Entry) -> bool:
        return self.start < other.end and other.start < self.end
