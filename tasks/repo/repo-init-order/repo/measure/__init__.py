"""Units, dimensions and quantities."""

from measure.config import create_registry
from measure.dimensions import Dimension
from measure.errors import DefinitionError, DimensionError, UnitError
from measure.quantity import Quantity
from measure.registry import Unit, UnitRegistry

__all__ = [
    "DefinitionError",
    "Dimension",
    "DimensionError",
    "Quantity",
    "Unit",
    "UnitError",
    "UnitRegistry",
    "create_registry",
]
