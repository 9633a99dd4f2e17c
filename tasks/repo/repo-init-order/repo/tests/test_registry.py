import pytest

from measure import DefinitionError, Dimension, DimensionError, UnitError, UnitRegistry


@pytest.mark.parametrize(
    "value, source, target, expected",
    [
        (1, "mile", "km", 1.609344),
        (60, "mph", "m/s", 26.8224),
        (1, "ft", "inch", 12),
        (1, "ton", "kg", 907.18474),
        (1, "tonne", "lb", 2204.6226218),
        (2, "h", "s", 7200),
        (1, "kN", "N", 1000),
        (3, "gal", "L", 11.356235352),
        (1, "kW*h", "J", 3.6e6),
        (1013.25, "hPa", "Pa", 101325),
        (250, "ml", "L", 0.25),
        (10, "knot", "kph", 18.52),
    ],
    ids=["mile", "mph", "ft", "ton", "tonne", "hours", "kilonewton", "gallon", "kwh", "hpa", "ml", "knot"],
)
def test_builtin_conversions(value, source, target, expected):
    assert UnitRegistry().convert(value, source, target) == pytest.approx(expected)


def test_aliases_and_prefixed_aliases():
    units = UnitRegistry()
    assert units.convert(1, "kilogram", "gram") == pytest.approx(1000)
    assert units.convert(1, "kmetre", "m") == pytest.approx(1000)
    assert "short_ton" in units
    assert "parsec" not in units


def test_dimension_checks():
    units = UnitRegistry()
    assert units.dimension_of("J") == Dimension({"length": 2, "mass": 1, "time": -2})
    with pytest.raises(DimensionError):
        units.convert(1, "m", "s")
    with pytest.raises(UnitError):
        units.convert(1, "parsec", "m")


def test_define_new_unit():
    units = UnitRegistry()
    units.define("furlong = 220 yd; alias: fur")
    assert units.convert(1, "fur", "m") == pytest.approx(201.168)
    assert "furlong" in units.units()


def test_redefine_replaces_unit():
    units = UnitRegistry()
    assert units.convert(1, "ton", "kg") == pytest.approx(907.18474)
    units.define("ton = 1000 kg")
    assert units.convert(1, "ton", "kg") == pytest.approx(1000)
    assert units.convert(1, "short_ton", "kg") == pytest.approx(1000)


def test_failed_definition_is_rolled_back():
    units = UnitRegistry()
    with pytest.raises(DefinitionError):
        units.define("bale = 3 sack")
    assert "bale" not in units
    units.define("mile = 1609 m")
    with pytest.raises(DefinitionError):
        units.define("mile = 2 parsec")
    assert units.convert(1, "mile", "m") == pytest.approx(1609)


def test_circular_definition():
    units = UnitRegistry()
    with pytest.raises(DefinitionError):
        units.define("loop = 2 loop")


def test_registry_without_defaults():
    units = UnitRegistry(defaults=None)
    assert units.units() == []
    units.define("px = [screen]")
    units.define("pt = 1.333 px")
    assert units.convert(12, "pt", "px") == pytest.approx(15.996)
    assert "m" not in units
