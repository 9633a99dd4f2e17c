"""Money helpers: amounts are floats, rounded to cents half up."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")
SYMBOLS = {"EUR": "€", "USD": "$", "GBP": "£"}


def round_money(amount: float) -> float:
    """Round to cents, halves away from zero (``2.675 -> 2.68``)."""
    return float(Decimal(repr(amount)).quantize(CENT, rounding=ROUND_HALF_UP))


def to_cents(amount: float) -> int:
    """The amount as a whole number of cents."""
    return int(Decimal(repr(amount)).quantize(CENT, rounding=ROUND_HALF_UP) * 100)


def format_money(amount: float, currency: str = "EUR") -> str:
    """``1234.5 -> '€1,234.50'``; negative amounts get a leading minus."""
    cents = to_cents(amount)
    sign = "-" if cents < 0 else ""
    units, rest = divmod(abs(cents), 100)
    symbol = SYMBOLS.get(currency, currency + " ")
    return f"{sign}{symbol}{units:,}.{rest:02d}"
