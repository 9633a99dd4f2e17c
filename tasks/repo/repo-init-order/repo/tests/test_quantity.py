import pytest

from measure import DimensionError, UnitRegistry, create_registry


@pytest.fixture
def units():
    return UnitRegistry()


def test_to_and_str(units):
    speed = units.parse_quantity("3.5 km/h")
    assert str(speed) == "3.5 km/h"
    assert speed.to("m/s").magnitude == pytest.approx(0.9722222)
    assert speed.to("m/s").unit == "m/s"


def test_addition_converts_to_left_unit(units):
    total = units.quantity(1, "km") + units.quantity(250, "m")
    assert total.unit == "km"
    assert total.magnitude == pytest.approx(1.25)
    with pytest.raises(DimensionError):
        units.quantity(1, "km") + units.quantity(1, "s")


def test_multiplication_and_division(units):
    work = units.quantity(10, "N") * units.quantity(3, "m")
    assert work.unit == "N*m"
    assert work.to("J").magnitude == pytest.approx(30)
    speed = units.quantity(100, "km") / units.quantity(2, "h")
    assert speed.unit == "km/h"
    assert (speed * 2).magnitude == pytest.approx(100)


def test_comparisons_across_units(units):
    assert units.quantity(1, "mile") == units.quantity(1.609344, "km")
    assert units.quantity(1, "ft") < units.quantity(1, "m")
    assert units.quantity(1, "m") != units.quantity(1, "s")


def test_dimensionless_quantity(units):
    ratio = units.parse_quantity("0.5")
    assert ratio.dimension.dimensionless
    assert units.parse_quantity("3 /s").to("Hz").magnitude == pytest.approx(3)


def test_shipment_in_metric_tons():
    units = create_registry("ton = 1000 kg; alias: t\npallet = 1.2 m^2")
    load = units.parse_quantity("2.5 t") + units.parse_quantity("500 kg")
    assert load.unit == "t"
    assert load.to("kg").magnitude == pytest.approx(3000)
