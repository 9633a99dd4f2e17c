"""Physical dimensions as products of base dimensions with integer powers."""

from __future__ import annotations

from collections.abc import Mapping


class Dimension:
    """An immutable mapping ``base dimension -> exponent`` (zero exponents dropped)."""

    __slots__ = ("_powers",)

    def __init__(self, powers: Mapping[str, int] | None = None):
        cleaned = {name: exp for name, exp in (powers or {}).items() if exp}
        self._powers = tuple(sorted(cleaned.items()))

    @classmethod
    def base(cls, name: str) -> Dimension:
        return cls({name: 1})

    @property
    def powers(self) -> dict[str, int]:
        return dict(self._powers)

    @property
    def dimensionless(self) -> bool:
        return not self._powers

    def __mul__(self, other: Dimension) -> Dimension:
        powers = self.powers
        for name, exp in other._powers:
            powers[name] = powers.get(name, 0) + exp
        return Dimension(powers)

    def __truediv__(self, other: Dimension) -> Dimension:
        return self * other ** -1

    def __pow__(self, exponent: int) -> Dimension:
        return Dimension({name: exp * exponent for name, exp in self._powers})

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Dimension) and self._powers == other._powers

    def __hash__(self) -> int:
        return hash(self._powers)

    def __str__(self) -> str:
        if not self._powers:
            return "dimensionless"

        def term(name: str, exp: int) -> str:
            return name if exp == 1 else f"{name}^{exp}"

        top = [term(name, exp) for name, exp in self._powers if exp > 0]
        bottom = [term(name, -exp) for name, exp in self._powers if exp < 0]
        text = "*".join(top) or "1"
        if bottom:
            text += "/" + "/".join(bottom)
        return text

    def __repr__(self) -> str:
        return f"Dimension({self.powers!r})"
