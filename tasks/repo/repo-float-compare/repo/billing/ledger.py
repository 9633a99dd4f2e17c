"""The ledger: invoices, the payments received against them, and their status."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from billing.errors import BillingError, UnknownInvoice
from billing.invoice import Invoice
from billing.money import round_money


@dataclass(frozen=True)
class Payment:
    invoice: str
    amount: float
    received: date
    reference: str = ""


class Ledger:
    def __init__(self) -> None:
        self._invoices: dict[str, Invoice] = {}
        self._payments: list[Payment] = []

    def add_invoice(self, invoice: Invoice) -> None:
        if invoice.number in self._invoices:
            raise BillingError(f"invoice {invoice.number} already exists")
        self._invoices[invoice.number] = invoice

    def invoice(self, number: str) -> Invoice:
        try:
            return self._invoices[number]
        except KeyError:
            raise UnknownInvoice(f"no invoice {number}") from None

    def invoices(self) -> list[Invoice]:
        return sorted(self._invoices.values(), key=lambda invoice: (invoice.due, invoice.number))

    def record_payment(self, number: str, amount: float, received: date, reference: str = "") -> Payment:
        invoice = self.invoice(number)
        if amount <= 0:
            raise BillingError("payment amount must be positive")
        if received < invoice.issued:
            raise BillingError(f"payment for {number} received before the invoice was issued")
        payment = Payment(number, round_money(amount), received, reference)
        self._payments.append(payment)
        return payment

    def payments_for(self, number: str) -> list[Payment]:
        self.invoice(number)
        return [payment for payment in self._payments if payment.invoice == number]

    def amount_paid(self, number: str, as_of: date | None = None) -> float:
        """Sum of the payments received for ``number`` (up to ``as_of`` if given)."""
        return sum(
            payment.amount
            for payment in self.payments_for(number)
            if as_of is None or payment.received <= as_of
        )

    def balance_due(self, number: str, as_of: date | None = None) -> float:
        """What the customer still owes; negative when they paid too much."""
        return round_money(self.invoice(number).total - self.amount_paid(number, as_of))

    def status(self, number: str, as_of: date | None = None) -> str:
        """``unpaid``, ``partial``, ``paid`` or ``overpaid``."""
        total = self.invoice(number).total
        paid = self.amount_paid(number, as_of)
        if paid == 0:
            return "unpaid"
        if paid == total:
            return "paid"
        if paid > total:
            return "overpaid"
        return "partial"

    def open_invoices(self, as_of: date | None = None) -> list[Invoice]:
        """Invoices not fully paid, earliest due date first."""
        return [invoice for invoice in self.invoices() if self.status(invoice.number, as_of) in ("unpaid", "partial")]
