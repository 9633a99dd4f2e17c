"""Calendar helpers: local days, weeks and months for a given UTC offset."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta, tzinfo

ONE_DAY = timedelta(days=1)


def local_date(moment: datetime, tz: tzinfo) -> date:
    """The calendar day ``moment`` falls on for someone living in ``tz``."""
    return moment.astimezone(tz).date()


def local_midnight(day: date, tz: tzinfo) -> datetime:
    """The instant ``day`` begins in ``tz``."""
    return datetime.combine(day, time.min, tzinfo=tz)


def split_by_day(start: datetime, end: datetime, tz: tzinfo) -> list[tuple[date, int]]:
    """Cut ``[start, end)`` at the local midnights of ``tz``.

    Returns ``(local day, minutes worked that day)`` pairs in order, so that an
    entry from 22:00 to 02:00 counts two hours on each of the two days.
    """
    pieces: list[tuple[date, int]] = []
    day = start.date()
    cursor = start
    while cursor < end:
        boundary = local_midnight(day + ONE_DAY, tz)
        stop = min(end, boundary)
        pieces.append((day, int((stop - cursor).total_seconds() // 60)))
        cursor = stop
        day += ONE_DAY
    return pieces


def week_start(day: date, first_weekday: int = 0) -> date:
    """The first day of the week holding ``day`` (0 = Monday ... 6 = Sunday)."""
    if not 0 <= first_weekday <= 6:
        raise ValueError("first_weekday must be between 0 and 6")
    return day - timedelta(days=(day.weekday() - first_weekday) % 7)


def month_key(day: date) -> str:
    return f"{day.year:04d}-{day.month:02d}"


def days_of_week(day: date, first_weekday: int = 0) -> list[date]:
    first = week_start(day, first_weekday)
    return [first + timedelta(days=offset) for offset in range(7)]
