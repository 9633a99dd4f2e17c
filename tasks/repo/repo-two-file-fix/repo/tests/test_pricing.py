from decimal import Decimal

from invoicekit.pricing import gross_price, net_from_gross


def test_gross_price_adds_vat():
    assert gross_price(Decimal("10.00"), "DE") == Decimal("11.90")
    assert gross_price(Decimal("18.00"), "DE", "books") == Decimal("19.26")


def test_net_from_gross_removes_vat():
    assert net_from_gross(Decimal("11.90"), "DE") == Decimal("10.00")
    assert net_from_gross(Decimal("21.10"), "FR", "books") == Decimal("20.00")


def test_round_trip_for_luxembourg():
    assert net_from_gross(gross_price(Decimal("99.99"), "LU"), "LU") == Decimal("99.99")
