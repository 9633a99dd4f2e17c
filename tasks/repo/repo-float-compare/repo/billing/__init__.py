"""Invoices, payments and reminders."""

from billing.errors import BillingError, UnknownInvoice
from billing.invoice import Invoice, InvoiceLine
from billing.ledger import Ledger, Payment
from billing.money import format_money, round_money, to_cents
from billing.reminders import Reminder, reminders_due

__all__ = [
    "BillingError",
    "Invoice",
    "InvoiceLine",
    "Ledger",
    "Payment",
    "Reminder",
    "UnknownInvoice",
    "format_money",
    "reminders_due",
    "round_money",
    "to_cents",
]
