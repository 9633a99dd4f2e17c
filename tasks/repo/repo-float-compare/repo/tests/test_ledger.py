from datetime import date

import pytest

from billing import BillingError, Invoice, Ledger, UnknownInvoice


def ledger_with(number, amount, due=date(2024, 3, 31)):
    ledger = Ledger()
    invoice = Invoice(number, "Initech", date(2024, 3, 1), due)
    invoice.add_line("Services", 1, amount)
    ledger.add_invoice(invoice)
    return ledger


def test_unpaid_and_partial():
    ledger = ledger_with("A-1", 250.0)
    assert ledger.status("A-1") == "unpaid"
    ledger.record_payment("A-1", 100.0, date(2024, 3, 10))
    assert ledger.status("A-1") == "partial"
    assert ledger.balance_due("A-1") == 150.0


def test_paid_in_one_payment():
    ledger = ledger_with("A-2", 1706.35)
    ledger.record_payment("A-2", 1706.35, date(2024, 3, 15), reference="wire 8812")
    assert ledger.status("A-2") == "paid"
    assert ledger.balance_due("A-2") == 0.0
    assert ledger.payments_for("A-2")[0].reference == "wire 8812"


def test_overpaid():
    ledger = ledger_with("A-3", 80.0)
    ledger.record_payment("A-3", 50.0, date(2024, 3, 5))
    ledger.record_payment("A-3", 50.0, date(2024, 3, 6))
    assert ledger.status("A-3") == "overpaid"
    assert ledger.balance_due("A-3") == -20.0


def test_status_as_of_date():
    ledger = ledger_with("A-4", 300.0)
    ledger.record_payment("A-4", 100.0, date(2024, 3, 5))
    ledger.record_payment("A-4", 200.0, date(2024, 4, 2))
    assert ledger.status("A-4", as_of=date(2024, 3, 31)) == "partial"
    assert ledger.status("A-4", as_of=date(2024, 4, 30)) == "paid"


def test_payment_validation():
    ledger = ledger_with("A-5", 10.0)
    with pytest.raises(UnknownInvoice):
        ledger.record_payment("Z-1", 10.0, date(2024, 3, 5))
    with pytest.raises(BillingError):
        ledger.record_payment("A-5", -1.0, date(2024, 3, 5))
    with pytest.raises(BillingError):
        ledger.record_payment("A-5", 10.0, date(2024, 2, 5))
    with pytest.raises(BillingError):
        ledger.add_invoice(ledger.invoice("A-5"))


def test_paid_in_two_instalments():
    ledger = ledger_with("B-1", 100.40)
    ledger.record_payment("B-1", 70.10, date(2024, 3, 10))
    ledger.record_payment("B-1", 30.30, date(2024, 3, 20))
    assert ledger.balance_due("B-1") == 0.0
    assert ledger.status("B-1") == "paid"


def test_instalments_adding_up_exactly_are_not_overpaid():
    ledger = ledger_with("B-2", 93.80)
    ledger.record_payment("B-2", 36.10, date(2024, 3, 10))
    ledger.record_payment("B-2", 57.70, date(2024, 3, 11))
    assert ledger.status("B-2") == "paid"


def test_open_invoices():
    ledger = ledger_with("C-1", 100.40, due=date(2024, 3, 20))
    other = Invoice("C-2", "Initech", date(2024, 3, 1), date(2024, 3, 25))
    other.add_line("Support", 2, 40.0)
    ledger.add_invoice(other)
    ledger.record_payment("C-1", 70.10, date(2024, 3, 10))
    ledger.record_payment("C-1", 30.30, date(2024, 3, 12))
    assert [invoice.number for invoice in ledger.open_invoices()] == ["C-2"]
