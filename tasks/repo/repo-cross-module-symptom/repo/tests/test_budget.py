from datetime import date

from spendlog.budget import check_budgets, over_budget
from spendlog.importer import import_statement
from spendlog.transactions import Ledger, Transaction

RULES = [("grocer", "groceries"), ("market", "groceries"), ("cafe", "eating out")]


def _manual_ledger():
    ledger = Ledger()
    ledger.add(Transaction(date(2024, 3, 2), "Green Grocer", 25000, "groceries"))
    ledger.add(Transaction(date(2024, 3, 4), "Corner Cafe", 6110, "eating out"))
    ledger.add(Transaction(date(2024, 4, 1), "Green Grocer", 90000, "groceries"))
    return ledger


def test_statuses_for_budgeted_categories_only():
    statuses = check_budgets(_manual_ledger(), {"Groceries": 300, "eating out": "50"}, 2024, 3)
    assert [s.category for s in statuses] == ["eating out", "groceries"]
    eating, groceries = statuses
    assert (eating.spent_cents, eating.remaining_cents, eating.over_budget) == (6110, -1110, True)
    assert (groceries.spent_cents, groceries.remaining_cents, groceries.over_budget) == (25000, 5000, False)
    assert groceries.used_percent == 83


def test_status_text():
    statuses = check_budgets(_manual_ledger(), {"groceries": 300, "eating out": 50}, 2024, 3)
    assert str(statuses[0]) == "eating out: over budget by $11.10 (spent $61.10 of $50.00)"
    assert str(statuses[1]) == "groceries: $50.00 left (spent $250.00 of $300.00)"


def test_budget_without_spending():
    (status,) = check_budgets(_manual_ledger(), {"transport": 120}, 2024, 3)
    assert status.spent_cents == 0
    assert not status.over_budget


def test_imported_statement_over_budget_by_one_cent():
    text = (
        "Date,Description,Amount\n"
        "2024-03-02,Green Grocer,19.99\n"
        "2024-03-16,Sunday Market,55.02\n"
        "2024-03-20,Corner Cafe,4.35\n"
    )
    ledger = import_statement(text, RULES)
    assert over_budget(ledger, {"groceries": 75, "eating out": 20}, 2024, 3) == ["groceries"]


def test_imported_statement_remaining_amounts():
    text = (
        "Date,Description,Amount\n"
        "2024-03-03,Corner Cafe,4.35\n"
        "2024-03-10,Corner Cafe,8.20\n"
        "2024-03-11,Green Grocer,64.99\n"
    )
    statuses = check_budgets(import_statement(text, RULES), {"eating out": 40, "groceries": 100}, 2024, 3)
    assert [(s.category, s.spent_cents, s.remaining_cents) for s in statuses] == [
        ("eating out", 1255, 2745),
        ("groceries", 6499, 3501),
    ]
