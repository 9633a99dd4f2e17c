import pytest

from measure import create_registry

PROJECT_UNITS = """
# units of the Rotterdam depot
pallet = 1.2 m^2; alias: plt
teu = 33.2 m^3
"""


def test_default_registry_has_builtins():
    units = create_registry()
    assert "mile" in units
    assert units.convert(1, "day", "min") == pytest.approx(1440)


def test_project_units_are_added():
    units = create_registry(PROJECT_UNITS)
    assert units.convert(10, "plt", "ft^2") == pytest.approx(129.16693)
    assert units.convert(2, "teu", "L") == pytest.approx(66400)


def test_registry_without_builtins():
    units = create_registry("m = [length]\nstep = 0.75 m", include_defaults=False)
    assert units.units() == ["m", "step"]
    assert "ft" not in units


def test_units_file_overrides_builtin():
    units = create_registry("ton = 1000 kg; alias: t\n" + PROJECT_UNITS)
    assert units.convert(3, "ton", "kg") == pytest.approx(3000)
    assert units.convert(1, "t", "lb") == pytest.approx(2204.6226218)


def test_override_is_used_by_later_definitions():
    units = create_registry("ton = 1000 kg\ntruckload = 24 ton\n")
    assert units.convert(1, "truckload", "kg") == pytest.approx(24000)
