from datetime import date, datetime, timedelta, timezone

from timesheet.periods import days_of_week, local_date, month_key, split_by_day, week_start
from timesheet.zones import UTC

CET = timezone(timedelta(hours=1))
EST = timezone(timedelta(hours=-5))


def test_local_date():
    moment = datetime(2024, 3, 5, 2, 0, tzinfo=UTC)
    assert local_date(moment, UTC) == date(2024, 3, 5)
    assert local_date(moment, EST) == date(2024, 3, 4)


def test_split_utc_across_midnight():
    start = datetime(2024, 3, 4, 22, 0, tzinfo=UTC)
    end = datetime(2024, 3, 5, 1, 30, tzinfo=UTC)
    assert split_by_day(start, end, UTC) == [(date(2024, 3, 4), 120), (date(2024, 3, 5), 90)]


def test_split_office_hours_in_cet():
    start = datetime(2024, 3, 4, 9, 0, tzinfo=CET)
    end = datetime(2024, 3, 4, 17, 15, tzinfo=CET)
    assert split_by_day(start, end, CET) == [(date(2024, 3, 4), 495)]


def test_week_start_monday_and_sunday():
    wednesday = date(2024, 3, 6)
    assert week_start(wednesday) == date(2024, 3, 4)
    assert week_start(wednesday, first_weekday=6) == date(2024, 3, 3)
    assert week_start(date(2024, 3, 4)) == date(2024, 3, 4)


def test_month_key_and_days_of_week():
    assert month_key(date(2024, 2, 29)) == "2024-02"
    days = days_of_week(date(2024, 2, 29))
    assert days[0] == date(2024, 2, 26)
    assert days[-1] == date(2024, 3, 3)
    assert len(days) == 7
