"""Monthly spending summaries."""

import calendar

from spendlog.money import format_cents
from spendlog.transactions import Ledger


def monthly_summary(ledger: Ledger, year: int, month: int) -> list[dict]:
    """One row per category for the month, largest spending first.

    Each row is ``{"category", "count", "total_cents", "total"}`` where
    ``total`` is the formatted amount. Ties are broken by category name.
    """
    month_ledger = ledger.in_month(year, month)
    counts: dict[str, int] = {}
    for t in month_ledger:
        counts[t.category] = counts.get(t.category, 0) + 1
    rows = [
        {"category": category, "count": counts[category], "total_cents": cents, "total": format_cents(cents)}
        for category, cents in month_ledger.by_category().items()
    ]
    rows.sort(key=lambda r: (-r["total_cents"], r["category"]))
    return rows


def render_monthly(ledger: Ledger, year: int, month: int) -> str:
    """A plain-text table of the month's spending with a grand total line."""
    title = f"Spending for {calendar.month_name[month]} {year}"
    rows = monthly_summary(ledger, year, month)
    if not rows:
        return f"{title}\n(no transactions)"
    width = max(len(r["category"]) for r in rows + [{"category": "total"}])
    amount_width = max(len(r["total"]) for r in rows)
    grand = sum(r["total_cents"] for r in rows)
    amount_width = max(amount_width, len(format_cents(grand)))
    lines = [title]
    for r in rows:
        lines.append(f"{r['category']:<{width}}  {r['total']:>{amount_width}}  ({r['count']})")
    lines.append(f"{'total':<{width}}  {format_cents(grand):>{amount_width}}")
    return "\n".join(lines)
