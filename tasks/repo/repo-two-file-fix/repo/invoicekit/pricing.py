"""Conversions between net and gross (VAT-inclusive) prices."""

from decimal import Decimal

from invoicekit.money import quantize
from invoicekit.rates import STANDARD, vat_rate


def gross_price(net: Decimal, country: str, category: str = STANDARD) -> Decimal:
    """The VAT-inclusive shelf price for a net price."""
    return quantize(Decimal(net) * (1 + vat_rate(country, category)))


def net_from_gross(gross: Decimal, country: str, category: str = STANDARD) -> Decimal:
    """The net price behind a VAT-inclusive shelf price."""
    return quantize(Decimal(gross) / (1 + vat_rate(country, category)))
