from decimal import Decimal

from invoicekit.invoice import Invoice
from invoicekit.lines import LineItem
from invoicekit.render import render_invoice, render_lines, render_totals


def test_render_lines_shows_quantity_and_discount():
    inv = Invoice("7", "AT")
    inv.add(LineItem("Chair", 3, Decimal("33.33"), discount_percent=Decimal("10")))
    inv.add(LineItem("Desk", 1, Decimal("1250.00")))
    assert render_lines(inv) == [
        "3 x Chair (-10%)                   89.99 EUR",
        "1 x Desk                        1,250.00 EUR",
    ]


def test_render_invoice():
    inv = Invoice("2024-0042", "DE")
    inv.add(LineItem("Desk lamp", 2, Decimal("24.90")))
    inv.add(LineItem("Cookbook", 1, Decimal("18.00"), category="books"))
    assert render_invoice(inv) == "\n".join(
        [
            "Invoice 2024-0042 (DE)",
            "--------------------------------------------",
            "2 x Desk lamp                      49.80 EUR",
            "1 x Cookbook                       18.00 EUR",
            "--------------------------------------------",
            "Net                                67.80 EUR",
            "VAT 19%                             9.46 EUR",
            "VAT 7%                              1.26 EUR",
            "Total                              78.52 EUR",
        ]
    )


def test_vat_rows_for_french_reduced_rate():
    inv = Invoice("9", "FR")
    inv.add(LineItem("Novel", 2, Decimal("10.00"), category="books"))
    inv.add(LineItem("Poster", 1, Decimal("20.00")))
    assert render_totals(inv) == [
        "Net                                40.00 EUR",
        "VAT 20%                             4.00 EUR",
        "VAT 5.5%                            1.10 EUR",
        "Total                              45.10 EUR",
    ]
