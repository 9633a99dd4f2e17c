from decimal import Decimal

import pytest

from invoicekit.errors import InvoiceError
from invoicekit.rates import supported_countries, vat_rate


def test_standard_and_reduced_rates():
    assert vat_rate("DE") == Decimal("0.19")
    assert vat_rate("DE", "books") == Decimal("0.07")
    assert vat_rate("fr", "food") == Decimal("0.055")


def test_unknown_category_uses_standard_rate():
    assert vat_rate("NL", "garden") == Decimal("0.21")


def test_unknown_country():
    with pytest.raises(InvoiceError):
        vat_rate("US")


def test_supported_countries_sorted():
    assert supported_countries() == ["AT", "DE", "FR", "LU", "NL"]
