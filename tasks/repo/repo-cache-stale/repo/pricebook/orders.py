"""Orders: a list of (sku, quantity) lines priced through a PriceEngine."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from pricebook.money import format_money, percent_of, to_money
from pricebook.pricing import PriceEngine, Quote

DEFAULT_TAX_RATE = Decimal("20")


@dataclass(frozen=True)
class OrderSummary:
    lines: tuple[Quote, ...]
    subtotal: Decimal
    tax: Decimal
    total: Decimal

    def render(self, currency: str = "EUR") -> str:
        rows = [
            f"{q.sku:<12} x{q.quantity:<4} {format_money(q.total, currency):>16}" for q in self.lines
        ]
        rows.append(f"{'subtotal':<18} {format_money(self.subtotal, currency):>16}")
        rows.append(f"{'tax':<18} {format_money(self.tax, currency):>16}")
        rows.append(f"{'total':<18} {format_money(self.total, currency):>16}")
        return "\n".join(rows)


class Order:
    def __init__(self, tier: str = "standard", tax_rate: Decimal | int | str = DEFAULT_TAX_RATE) -> None:
        self.tier = tier
        self.tax_rate = Decimal(tax_rate)
        self._lines: dict[str, int] = {}

    def add(self, sku: str, quantity: int = 1) -> None:
        """Add ``quantity`` units; adding the same SKU again merges the lines."""
        if quantity <= 0:
            raise ValueError(f"quantity must be positive, got {quantity}")
        key = sku.strip().upper()
        self._lines[key] = self._lines.get(key, 0) + quantity

    def remove(self, sku: str) -> None:
        self._lines.pop(sku.strip().upper(), None)

    @property
    def lines(self) -> dict[str, int]:
        return dict(self._lines)

    def summarize(self, engine: PriceEngine) -> OrderSummary:
        quotes = tuple(engine.quote(sku, qty, self.tier) for sku, qty in sorted(self._lines.items()))
        subtotal = to_money(sum((q.total for q in quotes), Decimal("0")))
        tax = percent_of(subtotal, self.tax_rate)
        return OrderSummary(lines=quotes, subtotal=subtotal, tax=tax, total=subtotal + tax)
