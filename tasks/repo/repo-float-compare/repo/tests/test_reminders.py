from datetime import date

from billing import Invoice, Ledger, reminders_due


def build_ledger():
    ledger = Ledger()
    for number, due, amount in [("R-1", date(2024, 3, 10), 500.0), ("R-2", date(2024, 1, 31), 120.0), ("R-3", date(2024, 3, 20), 75.5)]:
        invoice = Invoice(number, "Umbrella", date(2024, 1, 1), due)
        invoice.add_line("Supplies", 1, amount)
        ledger.add_invoice(invoice)
    return ledger


def test_reminder_levels_and_grace_period():
    ledger = build_ledger()
    reminders = reminders_due(ledger, date(2024, 3, 22))
    assert [(r.invoice, r.days_overdue, r.level) for r in reminders] == [("R-2", 51, 2), ("R-1", 12, 1)]


def test_partial_payment_reminds_remaining_amount():
    ledger = build_ledger()
    ledger.record_payment("R-1", 200.0, date(2024, 3, 1))
    reminder = [r for r in reminders_due(ledger, date(2024, 3, 22)) if r.invoice == "R-1"][0]
    assert reminder.amount == 300.0
    assert reminder.text() == "Friendly reminder: invoice R-1 is 12 days overdue; €300.00 is still open."


def test_paid_invoice_gets_no_reminder():
    ledger = build_ledger()
    ledger.record_payment("R-2", 120.0, date(2024, 2, 1))
    assert [r.invoice for r in reminders_due(ledger, date(2024, 3, 22))] == ["R-1"]


def test_invoice_paid_in_instalments_gets_no_reminder():
    ledger = build_ledger()
    ledger.record_payment("R-2", 120.0, date(2024, 2, 1))
    ledger.record_payment("R-1", 500.0, date(2024, 3, 9))
    late = Invoice("R-4", "Umbrella", date(2024, 1, 15), date(2024, 2, 15))
    late.add_line("Repairs", 1, 100.40)
    ledger.add_invoice(late)
    ledger.record_payment("R-4", 70.10, date(2024, 2, 10))
    ledger.record_payment("R-4", 30.30, date(2024, 3, 1))
    assert reminders_due(ledger, date(2024, 3, 22)) == []
