import pytest

from syncplan.errors import UnitError
from syncplan.units import format_duration, parse_duration, parse_rate, parse_size


@pytest.mark.parametrize(
    "text, ms",
    [
        ("250ms", 250),
        ("30s", 30_000),
        ("1.5m", 90_000),
        ("1h30m", 5_400_000),
        ("2 h", 7_200_000),
        ("45", 45_000),
        ("1d", 86_400_000),
    ],
    ids=["ms", "s", "fractional-m", "compound", "spaced", "bare", "d"],
)
def test_parse_duration_milliseconds(text, ms):
    assert parse_duration(text) == ms


@pytest.mark.parametrize("bad", ["", "fast", "10x", "m5", "1h junk"], ids=["empty", "word", "unit", "order", "trailing"])
def test_parse_duration_rejects(bad):
    with pytest.raises(UnitError):
        parse_duration(bad)


def test_format_duration():
    assert format_duration(5400) == "1h 30m"
    assert format_duration(45) == "45s"
    assert format_duration(0.25) == "250ms"
    assert format_duration(90061) == "1d 1h 1m 1s"


def test_sizes_and_rates():
    assert parse_size("2.5MB") == 2_500_000
    assert parse_size("1GiB") == 2**30
    assert parse_size("512") == 512
    assert parse_rate("10MB/s") == 10_000_000.0
    assert parse_rate("512KiB") == 524_288.0
    with pytest.raises(UnitError):
        parse_size("12 parsecs")
    with pytest.raises(UnitError):
        parse_rate("0MB/s")
