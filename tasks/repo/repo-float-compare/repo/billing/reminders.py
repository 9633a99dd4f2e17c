"""Deciding which customers get a payment reminder."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from billing.ledger import Ledger
from billing.money import format_money

GRACE_DAYS = 3
LATE_FEE_LEVEL = 2


@dataclass(frozen=True)
class Reminder:
    invoice: str
    customer: str
    days_overdue: int
    amount: float
    level: int

    def text(self, currency: str = "EUR") -> str:
        opening = "Friendly reminder" if self.level == 1 else "Second notice"
        return (
            f"{opening}: invoice {self.invoice} is {self.days_overdue} days overdue; "
            f"{format_money(self.amount, currency)} is still open."
        )


def reminders_due(ledger: Ledger, today: date) -> list[Reminder]:
    """Reminders for invoices still open ``GRACE_DAYS`` after their due date.

    Level 1 up to 30 days overdue, level 2 after that.
    """
    reminders = []
    for invoice in ledger.open_invoices(as_of=today):
        overdue = (today - invoice.due).days
        if overdue <= GRACE_DAYS:
            continue
        level = 1 if overdue <= 30 else LATE_FEE_LEVEL
        reminders.append(
            Reminder(invoice.number, invoice.customer, overdue, ledger.balance_due(invoice.number, today), level)
        )
    return reminders
