"""The ``Timesheet``: a user's entries plus the offset they live in."""

from __future__ import annotations

from datetime import date, tzinfo

from timesheet import aggregate
from timesheet.entries import Entry
from timesheet.parsing import parse_text
from timesheet.periods import days_of_week, local_date, local_midnight
from timesheet.zones import as_zone, format_offset


def format_minutes(minutes: int) -> str:
    """``150`` -> ``"2:30"``."""
    sign = "-" if minutes < 0 else ""
    minutes = abs(minutes)
    return f"{sign}{minutes // 60}:{minutes % 60:02d}"


class Timesheet:
    """Entries of one person, reported in their UTC offset ``tz``."""

    def __init__(self, tz: str | tzinfo | None = None, daily_limit: int = 480):
        self.tz = as_zone(tz)
        self.daily_limit = daily_limit
        self._entries: list[Entry] = []

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def entries(self) -> list[Entry]:
        return sorted(self._entries, key=lambda entry: entry.start)

    def add(self, entry: Entry) -> None:
        for existing in self._entries:
            if existing.overlaps(entry):
                raise ValueError(f"entry for {entry.project!r} overlaps an entry for {existing.project!r}")
        self._entries.append(entry)

    def load(self, text: str) -> int:
        """Add every entry of ``text``; naive times are read in the sheet's offset."""
        added = 0
        for entry in parse_text(text, default_tz=self.tz):
            self.add(entry)
            added += 1
        return added

    def entries_on(self, day: date) -> list[Entry]:
        """Entries that overlap the local day ``day``."""
        begin = local_midnight(day, self.tz)
        end = local_midnight(date.fromordinal(day.toordinal() + 1), self.tz)
        return [entry for entry in self.entries if entry.start < end and entry.end > begin]

    def daily_totals(self) -> dict[date, int]:
        return aggregate.daily_minutes(self._entries, self.tz)

    def total_for(self, day: date) -> int:
        return self.daily_totals().get(day, 0)

    def weekly_totals(self, first_weekday: int = 0) -> dict[date, int]:
        return aggregate.weekly_minutes(self._entries, self.tz, first_weekday)

    def monthly_totals(self) -> dict[str, int]:
        return aggregate.monthly_minutes(self._entries, self.tz)

    def overtime(self) -> dict[date, int]:
        return aggregate.overtime(self._entries, self.tz, self.daily_limit)

    def render_day(self, day: date) -> str:
        """A short text report of one local day, one line per project."""
        per_project = aggregate.daily_project_minutes(self._entries, self.tz).get(day, {})
        lines = [f"{day.isoformat()} ({format_offset(self.tz)})"]
        for project, minutes in per_project.items():
            lines.append(f"  {project:<12}{format_minutes(minutes):>6}")
        lines.append(f"  {'total':<12}{format_minutes(sum(per_project.values())):>6}")
        return "\n".join(lines)

    def render_week(self, day: date, first_weekday: int = 0) -> str:
        """Totals of each local day of the week holding ``day``."""
        daily = self.daily_totals()
        lines = []
        for current in days_of_week(day, first_weekday):
            lines.append(f"{current:%a %Y-%m-%d}{format_minutes(daily.get(current, 0)):>7}")
        week_total = sum(daily.get(current, 0) for current in days_of_week(day, first_weekday))
        lines.append(f"{'week':<14}{format_minutes(week_total):>7}")
        return "\n".join(lines)

    def first_day(self) -> date | None:
        entries = self.entries
        return local_date(entries[0].start, self.tz) if entries else None
