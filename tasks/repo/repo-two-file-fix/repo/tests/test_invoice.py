from decimal import Decimal

import pytest

from invoicekit.errors import InvoiceError
from invoicekit.invoice import Invoice
from invoicekit.lines import LineItem


def _invoice(country="DE"):
    inv = Invoice("2024-0042", country)
    inv.add(LineItem("Desk lamp", 2, Decimal("24.90")))
    inv.add(LineItem("Cookbook", 1, Decimal("18.00"), category="books"))
    return inv


def test_net_total_and_length():
    inv = _invoice()
    assert len(inv) == 2
    assert inv.net_total == Decimal("67.80")


def test_country_is_validated():
    with pytest.raises(InvoiceError):
        Invoice("2024-0043", "CH")


def test_country_code_is_normalized():
    assert Invoice("2024-0044", "nl").country == "NL"


def test_gross_total_includes_vat():
    inv = _invoice()
    assert inv.tax_total == Decimal("10.72")
    assert inv.gross_total == Decimal("78.52")


def test_gross_total_in_france():
    assert _invoice("FR").gross_total == Decimal("78.75")
