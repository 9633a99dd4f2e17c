from decimal import Decimal

import pytest

from invoicekit.errors import InvoiceError
from invoicekit.lines import LineItem


def test_net_is_quantity_times_price():
    assert LineItem("Desk lamp", 2, Decimal("24.90")).net == Decimal("49.80")


def test_discount_is_a_percentage():
    line = LineItem("Chair", 3, Decimal("33.33"), discount_percent=Decimal("10"))
    assert line.net == Decimal("89.99")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"quantity": 0, "unit_price": Decimal("1")},
        {"quantity": 1, "unit_price": Decimal("-1")},
        {"quantity": 1, "unit_price": Decimal("1"), "discount_percent": Decimal("120")},
    ],
    ids=["zero-quantity", "negative-price", "discount-over-100"],
)
def test_invalid_lines_are_rejected(kwargs):
    with pytest.raises(InvoiceError):
        LineItem("Thing", **kwargs)
