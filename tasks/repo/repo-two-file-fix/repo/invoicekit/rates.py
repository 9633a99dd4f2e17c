"""VAT rates by destination country and product category.

Rates are fractions of the net amount: ``Decimal("0.19")`` is 19 %.
"""

from decimal import Decimal

from invoicekit.errors import InvoiceError

STANDARD = "standard"
REDUCED_CATEGORIES = frozenset({"books", "food"})

VAT_RATES: dict[str, dict[str, Decimal]] = {
    "DE": {"standard": Decimal("0.19"), "reduced": Decimal("0.07")},
    "FR": {"standard": Decimal("0.20"), "reduced": Decimal("0.055")},
    "NL": {"standard": Decimal("0.21"), "reduced": Decimal("0.09")},
    "AT": {"standard": Decimal("0.20"), "reduced": Decimal("0.10")},
    "LU": {"standard": Decimal("0.17"), "reduced": Decimal("0.03")},
}


def supported_countries() -> list[str]:
    return sorted(VAT_RATES)


def vat_rate(country: str, category: str = STANDARD) -> Decimal:
    """The VAT rate that applies to a product category in a destination country."""
    try:
        table = VAT_RATES[country.upper()]
    except KeyError:
        raise InvoiceError(f"no VAT rates for country {country!r}") from None
    kind = "reduced" if category in REDUCED_CATEGORIES else "standard"
    return table[kind]
