"""The unit registry: definitions, aliases and resolution to base units."""

from __future__ import annotations

from dataclasses import dataclass

from measure.definitions import DEFAULT_DEFINITIONS, PREFIXES
from measure.dimensions import Dimension
from measure.errors import DefinitionError, DimensionError, UnitError
from measure.parser import Definition, parse_definition, parse_definitions, parse_unit_expression, split_number


@dataclass(frozen=True)
class Unit:
    """A unit resolved to ``factor`` times the base units of ``dimension``."""

    factor: float
    dimension: Dimension

    def __mul__(self, other: Unit) -> Unit:
        return Unit(self.factor * other.factor, self.dimension * other.dimension)

    def __pow__(self, exponent: int) -> Unit:
        return Unit(self.factor ** exponent, self.dimension ** exponent)


DIMENSIONLESS = Unit(1.0, Dimension())


class UnitRegistry:
    """Known units. The built-in definitions are read on first use."""

    def __init__(self, defaults: str | None = DEFAULT_DEFINITIONS):
        self._definitions: dict[str, Definition] = {}
        self._aliases: dict[str, str] = {}
        self._pending_defaults = defaults
        self._cache: dict[str, Unit] = {}
        self._resolving: set[str] = set()

    # -- definitions -------------------------------------------------------

    def _ensure_defaults(self) -> None:
        if self._pending_defaults is None:
            return
        text, self._pending_defaults = self._pending_defaults, None
        for definition in parse_definitions(text):
            self._register(definition)

    def _register(self, definition: Definition) -> None:
        self._definitions[definition.name] = definition
        for alias in definition.aliases:
            self._aliases[alias] = definition.name
        self._cache.clear()

    def define(self, line: str) -> None:
        """Add or replace a unit; the definition must resolve."""
        definition = parse_definition(line)
        previous = self._definitions.get(definition.name)
        self._register(definition)
        try:
            self.resolve(definition.name)
        except UnitError as exc:
            if previous is None:
                del self._definitions[definition.name]
            else:
                self._definitions[definition.name] = previous
            for alias in definition.aliases:
                self._aliases.pop(alias, None)
            self._cache.clear()
            raise DefinitionError(f"cannot define {definition.name!r}: {exc}") from None

    def load(self, text: str) -> int:
        """Define every line of ``text``; returns how many units were defined."""
        count = 0
        for line in text.splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                self.define(line)
                count += 1
        return count

    # -- lookup --------------------------------------------------------------

    def _lookup(self, name: str) -> Unit:
        self._ensure_defaults()
        canonical = self._aliases.get(name, name)
        if canonical in self._definitions:
            return self._from_definition(self._definitions[canonical])
        for prefix, scale in PREFIXES.items():
            if name.startswith(prefix) and len(name) > len(prefix):
                rest = name[len(prefix):]
                rest = self._aliases.get(rest, rest)
                if rest in self._definitions:
                    base = self._from_definition(self._definitions[rest])
                    return Unit(base.factor * scale, base.dimension)
        raise UnitError(f"unknown unit {name!r}")

    def _from_definition(self, definition: Definition) -> Unit:
        if definition.base_dimension is not None:
            return Unit(1.0, Dimension.base(definition.base_dimension))
        if definition.name in self._resolving:
            raise DefinitionError(f"circular definition of {definition.name!r}")
        self._resolving.add(definition.name)
        try:
            unit = self.resolve(definition.expression)
        finally:
            self._resolving.discard(definition.name)
        return Unit(unit.factor * definition.scale, unit.dimension)

    def resolve(self, expression: str) -> Unit:
        """The factor and dimension of a unit expression such as ``km/h``."""
        if expression in self._cache:
            return self._cache[expression]
        unit = DIMENSIONLESS
        for name, exponent in parse_unit_expression(expression):
            unit = unit * self._lookup(name) ** exponent
        self._cache[expression] = unit
        return unit

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        try:
            self._lookup(name)
        except UnitError:
            return False
        return True

    def units(self) -> list[str]:
        """Names of all defined units (aliases and prefixed forms excluded)."""
        self._ensure_defaults()
        return sorted(self._definitions)

    def dimension_of(self, expression: str) -> Dimension:
        return self.resolve(expression).dimension

    # -- conversion --------------------------------------------------------

    def convert(self, value: float, source: str, target: str) -> float:
        src, dst = self.resolve(source), self.resolve(target)
        if src.dimension != dst.dimension:
            raise DimensionError(f"cannot convert {source!r} ({src.dimension}) to {target!r} ({dst.dimension})")
        return value * src.factor / dst.factor

    def quantity(self, value: float, unit: str):
        from measure.quantity import Quantity

        self.resolve(unit)
        return Quantity(value, unit, self)

    def parse_quantity(self, text: str):
        """``'3.5 km/h'`` -> a Quantity; a missing unit means dimensionless."""
        value, unit = split_number(text)
        return self.quantity(value, unit or "1")
