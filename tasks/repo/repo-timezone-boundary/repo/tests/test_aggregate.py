from datetime import date, datetime, timedelta, timezone

from timesheet.aggregate import daily_minutes, monthly_minutes, overtime, project_minutes, weekly_minutes
from timesheet.parsing import parse_text
from timesheet.zones import UTC

EST = timezone(timedelta(hours=-5))
CEST = timezone(timedelta(hours=2))

UTC_SHEET = """
2024-03-04T09:00Z 12:00 acme
2024-03-04T13:00Z 18:30 acme
2024-03-05T09:00Z 11:00 beta
2024-03-10T23:00Z 01:00 ops
"""


def test_project_minutes():
    assert project_minutes(parse_text(UTC_SHEET)) == {"acme": 510, "beta": 120, "ops": 120}


def test_daily_minutes_utc():
    assert daily_minutes(parse_text(UTC_SHEET), UTC) == {
        date(2024, 3, 4): 510,
        date(2024, 3, 5): 120,
        date(2024, 3, 10): 60,
        date(2024, 3, 11): 60,
    }


def test_weekly_minutes_utc():
    assert weekly_minutes(parse_text(UTC_SHEET), UTC) == {date(2024, 3, 4): 690, date(2024, 3, 11): 60}


def test_overtime_utc():
    assert overtime(parse_text(UTC_SHEET), UTC) == {date(2024, 3, 4): 30}


def test_daily_minutes_for_evening_work_west_of_utc():
    sheet = "2024-03-04T09:00-05:00 17:00 acme\n2024-03-04T20:00-05:00 23:00 acme\n"
    assert daily_minutes(parse_text(sheet), EST) == {date(2024, 3, 4): 660}


def test_monthly_minutes_at_month_start_east_of_utc():
    sheet = "2024-03-29T10:00+02:00 12:00 acme\n2024-04-01T00:30+02:00 02:00 acme\n"
    assert monthly_minutes(parse_text(sheet), CEST) == {"2024-03": 120, "2024-04": 90}
