from datetime import date

import pytest

from timesheet import Timesheet, format_minutes

SHEET = """
2024-03-04T09:00 12:30 acme sprint planning
2024-03-04T13:30 2h15m acme code review
2024-03-04T16:00 17:00 beta
"""


@pytest.mark.parametrize("minutes, text", [(0, "0:00"), (59, "0:59"), (150, "2:30"), (-75, "-1:15")])
def test_format_minutes(minutes, text):
    assert format_minutes(minutes) == text


def test_load_counts_entries():
    sheet = Timesheet(tz="+01:00")
    assert sheet.load(SHEET) == 3
    assert len(sheet) == 3
    assert sheet.first_day() == date(2024, 3, 4)


def test_overlapping_entries_are_rejected():
    sheet = Timesheet(tz="+01:00")
    sheet.load(SHEET)
    with pytest.raises(ValueError):
        sheet.load("2024-03-04T12:00 13:00 beta")


def test_entries_on_uses_local_day():
    sheet = Timesheet(tz="-05:00")
    sheet.load("2024-03-04T21:00 23:00 acme\n2024-03-05T08:00 09:00 beta\n")
    assert [entry.project for entry in sheet.entries_on(date(2024, 3, 4))] == ["acme"]
    assert [entry.project for entry in sheet.entries_on(date(2024, 3, 5))] == ["beta"]


def test_render_day_in_cet():
    sheet = Timesheet(tz="+01:00")
    sheet.load(SHEET)
    assert sheet.render_day(date(2024, 3, 4)) == (
        "2024-03-04 (+01:00)\n"
        "  acme          5:45\n"
        "  beta          1:00\n"
        "  total         6:45"
    )


def test_render_day_evening_shift_west_of_utc():
    sheet = Timesheet(tz="-05:00")
    sheet.load("2024-03-04T14:00 17:00 support\n2024-03-04T20:00 23:30 support\n")
    assert sheet.total_for(date(2024, 3, 4)) == 390
    assert sheet.render_day(date(2024, 3, 4)) == (
        "2024-03-04 (-05:00)\n"
        "  support       6:30\n"
        "  total         6:30"
    )


def test_render_week_places_late_work_on_its_own_day():
    sheet = Timesheet(tz="-05:00")
    sheet.load("2024-03-08T19:30 23:30 support\n2024-03-09T10:00 12:00 support\n")
    assert sheet.render_week(date(2024, 3, 6)) == (
        "Mon 2024-03-04   0:00\n"
        "Tue 2024-03-05   0:00\n"
        "Wed 2024-03-06   0:00\n"
        "Thu 2024-03-07   0:00\n"
        "Fri 2024-03-08   4:00\n"
        "Sat 2024-03-09   2:00\n"
        "Sun 2024-03-10   0:00\n"
        "week             6:00"
    )


def test_daily_totals_split_night_shift_at_local_midnight():
    sheet = Timesheet(tz="-05:00")
    sheet.load("2024-03-04T22:00 02:00 ops\n2024-03-05T09:00 10:00 ops\n")
    assert sheet.daily_totals() == {date(2024, 3, 4): 120, date(2024, 3, 5): 180}
    assert sheet.overtime() == {}
