"""Helpers for amounts of money, held as integer cents."""

from decimal import Decimal, InvalidOperation

from spendlog.errors import SpendlogError


def to_cents(value: int | str | Decimal) -> int:
    """Convert a user-supplied dollar amount (``150``, ``"99.50"``) to cents.

    Used for budget limits and other values typed by the user. Fractions of a
    cent are not allowed.
    """
    if isinstance(value, bool):
        raise SpendlogError(f"not an amount: {value!r}")
    try:
        dollars = Decimal(str(value).strip())
    except InvalidOperation:
        raise SpendlogError(f"not an amount: {value!r}") from None
    cents = dollars * 100
    if cents != cents.to_integral_value():
        raise SpendlogError(f"amount has fractions of a cent: {value!r}")
    return int(cents)


def format_cents(cents: int) -> str:
    """Render cents as a dollar string: ``123456`` -> ``"$1,234.56"``.

    Negative amounts (refunds) are shown as ``"-$3.25"``.
    """
    sign = "-" if cents < 0 else ""
    dollars, rest = divmod(abs(cents), 100)
    return f"{sign}${dollars:,}.{rest:02d}"
