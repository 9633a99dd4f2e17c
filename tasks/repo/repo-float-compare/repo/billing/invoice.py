"""Invoices and their lines."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from billing.errors import BillingError
from billing.money import format_money, round_money


@dataclass(frozen=True)
class InvoiceLine:
    description: str
    quantity: float
    unit_price: float
    tax_rate: float = 0.0

    @property
    def net(self) -> float:
        return round_money(self.quantity * self.unit_price)

    @property
    def tax(self) -> float:
        return round_money(self.net * self.tax_rate)


class Invoice:
    """An invoice; its total is the rounded sum of the lines plus tax, minus the discount."""

    def __init__(self, number: str, customer: str, issued: date, due: date, currency: str = "EUR"):
        if due < issued:
            raise BillingError(f"invoice {number} is due before it is issued")
        self.number = number
        self.customer = customer
        self.issued = issued
        self.due = due
        self.currency = currency
        self.lines: list[InvoiceLine] = []
        self.discount = 0.0

    def add_line(self, description: str, quantity: float, unit_price: float, tax_rate: float = 0.0) -> InvoiceLine:
        if quantity <= 0:
            raise BillingError("quantity must be positive")
        if unit_price < 0 or not 0 <= tax_rate < 1:
            raise BillingError("invalid price or tax rate")
        line = InvoiceLine(description, quantity, unit_price, tax_rate)
        self.lines.append(line)
        return line

    def apply_discount(self, amount: float) -> None:
        """A fixed discount taken off the gross total."""
        if amount < 0 or amount > self.subtotal + self.tax:
            raise BillingError("discount must be between zero and the invoice total")
        self.discount = round_money(amount)

    @property
    def subtotal(self) -> float:
        return round_money(sum(line.net for line in self.lines))

    @property
    def tax(self) -> float:
        return round_money(sum(line.tax for line in self.lines))

    @property
    def total(self) -> float:
        return round_money(self.subtotal + self.tax - self.discount)

    def summary(self) -> str:
        rows = [f"Invoice {self.number} for {self.customer}"]
        for line in self.lines:
            rows.append(f"  {line.description:<24}{format_money(line.net, self.currency):>12}")
        rows.append(f"  {'Tax':<24}{format_money(self.tax, self.currency):>12}")
        if self.discount:
            rows.append(f"  {'Discount':<24}{format_money(-self.discount, self.currency):>12}")
        rows.append(f"  {'Total':<24}{format_money(self.total, self.currency):>12}")
        return "\n".join(rows)
