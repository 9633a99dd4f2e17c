"""Transactions and the ledger that holds them."""

from dataclasses import dataclass
from datetime import date

from spendlog.rules import normalize_category


@dataclass(frozen=True)
class Transaction:
    """One line of a statement. Positive amounts are spending, negative are refunds."""

    when: date
    description: str
    amount_cents: int
    category: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "category", normalize_category(self.category))


class Ledger:
    """An ordered collection of transactions."""

    def __init__(self, transactions: list[Transaction] | None = None) -> None:
        self._items: list[Transaction] = list(transactions or [])

    def add(self, transaction: Transaction) -> None:
        self._items.append(transaction)

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self):
        return iter(self._items)

    def __getitem__(self, index: int) -> Transaction:
        return self._items[index]

    def in_month(self, year: int, month: int) -> "Ledger":
        """A new ledger with only the transactions of one calendar month."""
        return Ledger([t for t in self._items if t.when.year == year and t.when.month == month])

    def total(self) -> int:
        """Net spending in cents."""
        return sum(t.amount_cents for t in self._items)

    def by_category(self) -> dict[str, int]:
        """Net spending in cents for each category, in order of first appearance."""
        totals: dict[str, int] = {}
        for t in self._items:
            totals[t.category] = totals.get(t.category, 0) + t.amount_cents
        return totals

    def categories(self) -> list[str]:
        return list(self.by_category())
