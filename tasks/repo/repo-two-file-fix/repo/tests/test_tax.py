from decimal import Decimal

from invoicekit.lines import LineItem
from invoicekit.tax import group_by_rate, tax_breakdown, total_tax

LINES = [
    LineItem("Desk lamp", 2, Decimal("24.90")),
    LineItem("Cookbook", 1, Decimal("18.00"), category="books"),
    LineItem("Bulb", 4, Decimal("3.15")),
]


def test_group_by_rate_sums_nets_highest_rate_first():
    assert group_by_rate(LINES, "DE") == {Decimal("0.19"): Decimal("62.40"), Decimal("0.07"): Decimal("18.00")}
    assert list(group_by_rate(LINES, "DE")) == [Decimal("0.19"), Decimal("0.07")]


def test_tax_breakdown_per_rate():
    assert tax_breakdown(LINES, "DE") == {
        Decimal("0.19"): (Decimal("62.40"), Decimal("11.86")),
        Decimal("0.07"): (Decimal("18.00"), Decimal("1.26")),
    }


def test_total_tax():
    assert total_tax(LINES, "DE") == Decimal("13.12")


def test_total_tax_of_no_lines_is_zero():
    assert total_tax([], "DE") == Decimal("0")
