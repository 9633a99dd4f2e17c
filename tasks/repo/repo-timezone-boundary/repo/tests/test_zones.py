from datetime import timedelta, timezone

import pytest

from timesheet.zones import UTC, ZoneError, as_zone, format_offset, parse_offset


@pytest.mark.parametrize(
    "text, minutes",
    [("+02:00", 120), ("-05:00", -300), ("+0530", 330), ("-09", -540), (" +01:00 ", 60)],
    ids=["colon", "negative", "compact", "hours-only", "padded"],
)
def test_parse_offset(text, minutes):
    assert parse_offset(text).utcoffset(None) == timedelta(minutes=minutes)


@pytest.mark.parametrize("text", ["Z", "utc", "GMT", "+00:00", "-00:00"])
def test_utc_spellings(text):
    assert parse_offset(text) == UTC


@pytest.mark.parametrize(
    "text",
    ["", "02:00", "+2:00", "+15:00", "+01:75", "CET"],
    ids=["empty", "no-sign", "one-digit", "too-far", "bad-minutes", "name"],
)
def test_bad_offsets(text):
    with pytest.raises(ZoneError):
        parse_offset(text)


def test_format_offset_round_trip():
    for text in ["+02:00", "-05:30", "+00:00", "+14:00"]:
        assert format_offset(parse_offset(text)) == text


def test_as_zone_accepts_strings_and_none():
    assert as_zone(None) == UTC
    assert as_zone("-03:00") == timezone(timedelta(hours=-3))
