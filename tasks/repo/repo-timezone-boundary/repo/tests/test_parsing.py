from datetime import datetime, timedelta, timezone

import pytest

from timesheet.parsing import ParseError, parse_line, parse_text
from timesheet.zones import UTC

CET = timezone(timedelta(hours=1))


def test_clock_end_same_day():
    entry = parse_line("2024-03-04T09:00+01:00 12:30 acme planning")
    assert entry.start == datetime(2024, 3, 4, 8, 0, tzinfo=UTC)
    assert entry.end == datetime(2024, 3, 4, 11, 30, tzinfo=UTC)
    assert entry.project == "acme"
    assert entry.note == "planning"
    assert entry.minutes == 210


def test_clock_end_earlier_than_start_is_next_day():
    entry = parse_line("2024-03-04T22:00+01:00 01:00 ops release night")
    assert entry.end == datetime(2024, 3, 5, 0, 0, tzinfo=UTC)
    assert entry.minutes == 180
    assert entry.note == "release night"


@pytest.mark.parametrize("token, minutes", [("45m", 45), ("2h", 120), ("1h30m", 90)])
def test_duration_end(token, minutes):
    entry = parse_line(f"2024-03-04T09:00Z {token} acme")
    assert entry.minutes == minutes


def test_iso_end_with_other_offset():
    entry = parse_line("2024-03-04T09:00+01:00 2024-03-04T10:00Z acme")
    assert entry.minutes == 120


def test_naive_times_use_default_zone():
    entry = parse_line("2024-03-04T09:00 10:00 acme", default_tz=CET)
    assert entry.start == datetime(2024, 3, 4, 8, 0, tzinfo=UTC)


def test_comments_and_blank_lines_are_skipped():
    text = "# my week\n\n2024-03-04T09:00Z 10:00 acme  # morning\n   \n2024-03-04T11:00Z 30m beta\n"
    entries = parse_text(text)
    assert [entry.project for entry in entries] == ["acme", "beta"]
    assert entries[0].note == ""


@pytest.mark.parametrize(
    "line",
    ["2024-03-04T09:00Z 10:00", "yesterday 10:00 acme", "2024-03-04T09:00Z 25:00 acme", "2024-03-04T09:00Z soon acme"],
    ids=["no-project", "bad-start", "bad-clock", "bad-end"],
)
def test_bad_lines(line):
    with pytest.raises(ParseError):
        parse_line(line)


def test_error_reports_line_number():
    with pytest.raises(ParseError) as excinfo:
        parse_text("2024-03-04T09:00Z 10:00 acme\n2024-03-04T09:00Z 2024-03-04T08:00Z acme\n")
    assert excinfo.value.lineno == 2
    assert str(excinfo.value).startswith("line 2:")
