"""Compare a month's spending with per-category budget limits."""

from dataclasses import dataclass

from spendlog.money import format_cents, to_cents
from spendlog.rules import normalize_category
from spendlog.transactions import Ledger


@dataclass(frozen=True)
class BudgetStatus:
    """How one category did against its monthly limit."""

    category: str
    limit_cents: int
    spent_cents: int

    @property
    def remaining_cents(self) -> int:
        return self.limit_cents - self.spent_cents

    @property
    def over_budget(self) -> bool:
        return self.spent_cents > self.limit_cents

    @property
    def used_percent(self) -> int:
        """Share of the limit used, rounded down to a whole percent."""
        if self.limit_cents <= 0:
            return 100 if self.spent_cents > 0 else 0
        return self.spent_cents * 100 // self.limit_cents

    def __str__(self) -> str:
        if self.over_budget:
            return (
                f"{self.category}: over budget by {format_cents(-self.remaining_cents)} "
                f"(spent {format_cents(self.spent_cents)} of {format_cents(self.limit_cents)})"
            )
        return (
            f"{self.category}: {format_cents(self.remaining_cents)} left "
            f"(spent {format_cents(self.spent_cents)} of {format_cents(self.limit_cents)})"
        )


def check_budgets(ledger: Ledger, limits: dict, year: int, month: int) -> list[BudgetStatus]:
    """Return one :class:`BudgetStatus` per budgeted category, sorted by category.

    ``limits`` maps category names to monthly limits in dollars (``400`` or
    ``"99.50"``). Categories without a limit are not reported.
    """
    spent = ledger.in_month(year, month).by_category()
    statuses = []
    for name, limit in limits.items():
        category = normalize_category(name)
        statuses.append(BudgetStatus(category, to_cents(limit), spent.get(category, 0)))
    return sorted(statuses, key=lambda s: s.category)


def over_budget(ledger: Ledger, limits: dict, year: int, month: int) -> list[str]:
    """Names of the categories whose limit was exceeded in the month."""
    return [s.category for s in check_budgets(ledger, limits, year, month) if s.over_budget]
