"""A value together with its unit."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from measure.errors import DimensionError

if TYPE_CHECKING:
    from measure.registry import UnitRegistry


def _join(left: str, operator: str, right: str) -> str:
    if left == "1" and operator == "*":
        return right
    if right == "1":
        return left
    wrap = "(" in right or "/" in right or (operator == "/" and "*" in right)
    if wrap:
        raise DimensionError(f"cannot combine {left!r} {operator} {right!r}; convert to a single unit first")
    return f"{left}{operator}{right}"


class Quantity:
    """``magnitude`` in ``unit``, tied to the registry that knows the unit."""

    __slots__ = ("magnitude", "unit", "_registry")

    def __init__(self, magnitude: float, unit: str, registry: UnitRegistry):
        self.magnitude = magnitude
        self.unit = unit
        self._registry = registry

    @property
    def dimension(self):
        return self._registry.dimension_of(self.unit)

    def to(self, unit: str) -> Quantity:
        return Quantity(self._registry.convert(self.magnitude, self.unit, unit), unit, self._registry)

    def to_base(self) -> float:
        """The magnitude expressed in base units."""
        return self.magnitude * self._registry.resolve(self.unit).factor

    def _coerce(self, other: Quantity) -> float:
        return self._registry.convert(other.magnitude, other.unit, self.unit)

    def __add__(self, other: Quantity) -> Quantity:
        return Quantity(self.magnitude + self._coerce(other), self.unit, self._registry)

    def __sub__(self, other: Quantity) -> Quantity:
        return Quantity(self.magnitude - self._coerce(other), self.unit, self._registry)

    def __mul__(self, other: Quantity | float) -> Quantity:
        if isinstance(other, Quantity):
            return Quantity(self.magnitude * other.magnitude, _join(self.unit, "*", other.unit), self._registry)
        return Quantity(self.magnitude * other, self.unit, self._registry)

    __rmul__ = __mul__

    def __truediv__(self, other: Quantity | float) -> Quantity:
        if isinstance(other, Quantity):
            return Quantity(self.magnitude / other.magnitude, _join(self.unit, "/", other.unit), self._registry)
        return Quantity(self.magnitude / other, self.unit, self._registry)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        if self.dimension != other.dimension:
            return False
        return math.isclose(self.to_base(), other.to_base(), rel_tol=1e-9)

    def __lt__(self, other: Quantity) -> bool:
        return self.magnitude < self._coerce(other)

    def __le__(self, other: Quantity) -> bool:
        return self < other or self == other

    __hash__ = None  # type: ignore[assignment]

    def __str__(self) -> str:
        return f"{self.magnitude:g} {self.unit}"

    def __repr__(self) -> str:
        return f"<Quantity({self.magnitude!r}, {self.unit!r})>"
