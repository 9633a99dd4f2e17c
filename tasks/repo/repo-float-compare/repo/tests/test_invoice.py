from datetime import date

import pytest

from billing import BillingError, Invoice


def make_invoice():
    invoice = Invoice("INV-7", "Globex", date(2024, 3, 1), date(2024, 3, 31))
    invoice.add_line("Consulting", 3, 450.0, tax_rate=0.2)
    invoice.add_line("Travel", 1, 86.35)
    return invoice


def test_totals():
    invoice = make_invoice()
    assert invoice.subtotal == 1436.35
    assert invoice.tax == 270.0
    assert invoice.total == 1706.35


def test_line_tax_is_rounded_per_line():
    invoice = Invoice("INV-8", "Globex", date(2024, 3, 1), date(2024, 3, 31))
    line = invoice.add_line("Widget", 3, 3.35, tax_rate=0.19)
    assert line.net == 10.05
    assert line.tax == 1.91
    assert invoice.total == 11.96


def test_discount():
    invoice = make_invoice()
    invoice.apply_discount(106.35)
    assert invoice.total == 1600.0
    with pytest.raises(BillingError):
        invoice.apply_discount(5000)


def test_invalid_invoices():
    with pytest.raises(BillingError):
        Invoice("INV-9", "Globex", date(2024, 3, 1), date(2024, 2, 1))
    invoice = make_invoice()
    with pytest.raises(BillingError):
        invoice.add_line("Nothing", 0, 10.0)
    with pytest.raises(BillingError):
        invoice.add_line("Taxed", 1, 10.0, tax_rate=1.5)


def test_summary():
    invoice = make_invoice()
    invoice.apply_discount(6.35)
    assert invoice.summary() == (
        "Invoice INV-7 for Globex\n"
        "  Consulting                 €1,350.00\n"
        "  Travel                        €86.35\n"
        "  Tax                          €270.00\n"
        "  Discount                      -€6.35\n"
        "  Total                      €1,700.00"
    )
