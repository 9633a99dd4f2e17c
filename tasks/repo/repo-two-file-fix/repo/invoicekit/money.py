"""Money helpers. Amounts are ``Decimal`` values in the invoice currency."""

from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")


def quantize(amount: Decimal) -> Decimal:
    """Round to whole cents, halves away from zero (commercial rounding)."""
    return Decimal(amount).quantize(CENT, rounding=ROUND_HALF_UP)


def format_money(amount: Decimal, currency: str = "EUR") -> str:
    """``Decimal("1234.5")`` -> ``"1,234.50 EUR"``."""
    return f"{quantize(amount):,.2f} {currency}"
