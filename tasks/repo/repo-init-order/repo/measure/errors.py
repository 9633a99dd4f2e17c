"""Exceptions of the measure package."""


class UnitError(ValueError):
    """A unit name or expression that cannot be resolved."""


class DefinitionError(UnitError):
    """A definition line that is malformed or refers to unknown units."""


class DimensionError(UnitError):
    """Units of different dimensions were mixed."""
