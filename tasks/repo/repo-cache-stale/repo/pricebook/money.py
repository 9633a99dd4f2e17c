"""Decimal helpers: every amount in pricebook is a Decimal rounded to cents."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

CENT = Decimal("0.01")


def to_money(value: Decimal | int | str) -> Decimal:
    """Parse ``value`` into a Decimal rounded half-up to cents.

    Floats are rejected on purpose: ``0.1 + 0.2`` style surprises are exactly
    what this module exists to avoid.
    """
    if isinstance(value, float):
        raise TypeError("use str or Decimal for money, not float")
    try:
        amount = Decimal(value)
    except (InvalidOperation, ValueError) as exc:
        from pricebook.errors import InvalidPrice

        raise InvalidPrice(f"not a valid amount: {value!r}") from exc
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


def percent_of(amount: Decimal, percent: Decimal | int | str) -> Decimal:
    """``percent`` % of ``amount``, rounded to cents."""
    return to_money(amount * Decimal(percent) / Decimal(100))


def apply_percent(amount: Decimal, percent: Decimal | int | str) -> Decimal:
    """``amount`` increased (or decreased, for a negative percent) by ``percent`` %."""
    return to_money(amount + amount * Decimal(percent) / Decimal(100))


def format_money(amount: Decimal, currency: str = "EUR") -> str:
    """Render ``amount`` as ``'1,234.50 EUR'``."""
    return f"{to_money(amount):,.2f} {currency}"
