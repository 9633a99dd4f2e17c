"""Totals over a list of entries, always in minutes and per local calendar."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import date, tzinfo

from timesheet.entries import Entry
from timesheet.periods import month_key, split_by_day, week_start


def daily_minutes(entries: Iterable[Entry], tz: tzinfo) -> dict[date, int]:
    """Minutes worked per local day, days in ascending order."""
    totals: dict[date, int] = defaultdict(int)
    for entry in entries:
        for day, minutes in split_by_day(entry.start, entry.end, tz):
            totals[day] += minutes
    return dict(sorted(totals.items()))


def daily_project_minutes(entries: Iterable[Entry], tz: tzinfo) -> dict[date, dict[str, int]]:
    """Minutes per local day and project."""
    totals: dict[date, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for entry in entries:
        for day, minutes in split_by_day(entry.start, entry.end, tz):
            totals[day][entry.project] += minutes
    return {day: dict(sorted(per_project.items())) for day, per_project in sorted(totals.items())}


def project_minutes(entries: Iterable[Entry]) -> dict[str, int]:
    """Minutes per project over all entries, projects sorted by name."""
    totals: dict[str, int] = defaultdict(int)
    for entry in entries:
        totals[entry.project] += entry.minutes
    return dict(sorted(totals.items()))


def weekly_minutes(entries: Iterable[Entry], tz: tzinfo, first_weekday: int = 0) -> dict[date, int]:
    """Minutes per week, keyed by the week's first local day."""
    totals: dict[date, int] = defaultdict(int)
    for day, minutes in daily_minutes(entries, tz).items():
        totals[week_start(day, first_weekday)] += minutes
    return dict(sorted(totals.items()))


def monthly_minutes(entries: Iterable[Entry], tz: tzinfo) -> dict[str, int]:
    """Minutes per month, keyed ``YYYY-MM``."""
    totals: dict[str, int] = defaultdict(int)
    for day, minutes in daily_minutes(entries, tz).items():
        totals[month_key(day)] += minutes
    return dict(sorted(totals.items()))


def overtime(entries: Iterable[Entry], tz: tzinfo, daily_limit: int = 480) -> dict[date, int]:
    """Minutes above ``daily_limit`` for each local day that exceeds it."""
    return {
        day: minutes - daily_limit
        for day, minutes in daily_minutes(entries, tz).items()
        if minutes > daily_limit
    }
