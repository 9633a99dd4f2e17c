from decimal import Decimal

import pytest

from invoicekit.money import format_money, quantize


@pytest.mark.parametrize(
    "amount, expected",
    [("2.345", "2.35"), ("2.344", "2.34"), ("-2.345", "-2.35"), ("10", "10.00")],
)
def test_quantize_rounds_half_up(amount, expected):
    assert quantize(Decimal(amount)) == Decimal(expected)


def test_format_money():
    assert format_money(Decimal("1234.5")) == "1,234.50 EUR"
    assert format_money(Decimal("0.125"), "CHF") == "0.13 CHF"
