from datetime import timedelta

import pytest

from svcconf.durations import format_duration, parse_duration


@pytest.mark.parametrize(
    "text, expected",
    [
        ("90s", timedelta(seconds=90)),
        ("1h30m", timedelta(hours=1, minutes=30)),
        ("250ms", timedelta(milliseconds=250)),
        ("45", timedelta(seconds=45)),
        ("2D", timedelta(days=2)),
    ],
    ids=["seconds", "compound", "milliseconds", "bare-number", "upper-case-days"],
)
def test_parse_duration(text, expected):
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["", "5min", "m5", "1h-"], ids=["empty", "unknown-unit", "unit-first", "dangling"])
def test_parse_duration_rejects(text):
    with pytest.raises(ValueError):
        parse_duration(text)


def test_format_duration():
    assert format_duration(timedelta(hours=1, minutes=30)) == "1h30m"
    assert format_duration(timedelta()) == "0s"
    assert format_duration(timedelta(days=1, seconds=5)) == "1d5s"
