import pytest

from measure.errors import DefinitionError, UnitError
from measure.parser import parse_definition, parse_definitions, parse_unit_expression, split_number


@pytest.mark.parametrize(
    "text, factors",
    [
        ("m", [("m", 1)]),
        ("km/h", [("km", 1), ("h", -1)]),
        ("kg*m/s^2", [("kg", 1), ("m", 1), ("s", -2)]),
        ("m**3", [("m", 3)]),
        ("1/s", [("s", -1)]),
        ("N * m", [("N", 1), ("m", 1)]),
    ],
    ids=["single", "ratio", "force", "power", "inverse", "spaces"],
)
def test_parse_unit_expression(text, factors):
    assert parse_unit_expression(text) == factors


@pytest.mark.parametrize("text", ["", "/s", "m/", "3m", "m^x"], ids=["empty", "leading-op", "trailing-op", "digit", "bad-power"])
def test_bad_unit_expressions(text):
    with pytest.raises(UnitError):
        parse_unit_expression(text)


def test_split_number():
    assert split_number("3.5 km/h") == (3.5, "km/h")
    assert split_number("-2e3 m") == (-2000.0, "m")
    assert split_number("kg") == (1.0, "kg")
    assert split_number("2/s") == (2.0, "1/s")


def test_parse_scaled_definition_with_aliases():
    definition = parse_definition("yd = 3 ft; alias: yard, yards")
    assert definition.name == "yd"
    assert definition.scale == 3.0
    assert definition.expression == "ft"
    assert definition.aliases == ("yard", "yards")


def test_parse_base_definition():
    definition = parse_definition("m = [length]")
    assert definition.base_dimension == "length"
    assert definition.aliases == ()


@pytest.mark.parametrize(
    "line",
    ["= 3 m", "x 3 m", "x = 0 m", "x = 3 m; unit: y", "x = 3 m; alias: a b", "2x = m"],
    ids=["no-name", "no-equals", "zero", "bad-option", "bad-alias", "bad-name"],
)
def test_bad_definitions(line):
    with pytest.raises(DefinitionError):
        parse_definition(line)


def test_parse_definitions_skips_comments():
    definitions = parse_definitions("# lengths\nm = [length]\n\nft = 0.3048 m  # exact\n")
    assert [definition.name for definition in definitions] == ["m", "ft"]
