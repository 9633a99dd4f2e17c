from datetime import datetime, timezone

import pytest

from sensorkit import AlertRule, evaluate, parse_lines
from sensorkit.readings import ParseError, parse_line
from sensorkit.report import render, summarize

UPLOAD = """\
# greenhouse upload
2024-03-01T10:00:00Z,greenhouse-1,21.0
2024-03-01T10:05:00Z,greenhouse-1,22.0
2024-03-01T10:10:00Z,greenhouse-1,29.0
2024-03-01T10:15:00Z,greenhouse-1,30.0
2024-03-01T10:20:00Z,greenhouse-1,31.0
2024-03-01T10:25:00Z,greenhouse-1,22.0
2024-03-01T10:30:00Z,greenhouse-1,21.0
2024-03-01T10:35:00Z,greenhouse-1,20.0
2024-03-01T10:00:00Z,Shed,12.5

2024-03-01T10:30:00Z,shed,13.5
"""


def at(minute):
    return datetime(2024, 3, 1, 10, minute, tzinfo=timezone.utc)


def test_parse_lines_sorted_and_normalised():
    readings = parse_lines(UPLOAD)
    assert len(readings) == 10
    assert readings[1].sensor == "shed"
    assert readings[0].timestamp == at(0)


def test_parse_errors_carry_line_numbers():
    with pytest.raises(ParseError) as excinfo:
        parse_lines("2024-03-01T10:00:00Z,a,1\n2024-03-01T10:05:00Z,a,warm\n")
    assert excinfo.value.line_no == 2
    with pytest.raises(ParseError):
        parse_line("2024-03-01,a")


def test_alert_in_middle_of_series():
    rule = AlertRule("greenhouse-1", threshold=27.0, window=3)
    alerts = evaluate([rule], parse_lines(UPLOAD))
    assert len(alerts) == 1
    alert = alerts[0]
    assert alert.start == at(10)
    assert alert.end == at(25)
    assert alert.peak == 30.0


def test_alert_still_open_at_end_of_series():
    rule = AlertRule("greenhouse-1", threshold=21.5, window=3, direction="below")
    alerts = evaluate([rule], parse_lines(UPLOAD))
    assert [(a.start, a.end, a.peak) for a in alerts] == [(at(25), at(35), 21.0)]


def test_alert_rule_validation():
    with pytest.raises(ValueError):
        AlertRule("x", 1.0, direction="sideways")


def test_summary_and_render():
    summaries = summarize(parse_lines(UPLOAD), recent=3)
    assert [s.sensor for s in summaries] == ["greenhouse-1", "shed"]
    green = summaries[0]
    assert (green.count, green.minimum, green.maximum) == (8, 20.0, 31.0)
    assert green.average == 24.5
    assert green.p90 == 31.0
    assert green.recent_average == 21.0
    assert summaries[1].recent_average == 13.0
    assert render(summaries).splitlines()[1].startswith("greenhouse-1")
