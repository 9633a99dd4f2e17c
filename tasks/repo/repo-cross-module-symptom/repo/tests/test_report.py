from datetime import date

from spendlog.importer import import_statement
from spendlog.report import monthly_summary, render_monthly
from spendlog.transactions import Ledger, Transaction

RULES = [("grocer", "groceries"), ("market", "groceries"), ("cafe", "eating out"), ("fuel", "transport")]

MARCH = (
    "Date,Description,Amount\n"
    "2024-03-02,Green Grocer,19.99\n"
    "2024-03-04,Corner Cafe,4.35\n"
    "2024-03-09,Green Grocer,64.99\n"
    "2024-03-15,Fuel Stop,58.10\n"
    "2024-03-20,Sunday Market,(9.95)\n"
    "2024-04-01,Green Grocer,23.10\n"
)


def test_summary_orders_by_total_then_name():
    ledger = Ledger()
    ledger.add(Transaction(date(2024, 5, 1), "a", 500, "books"))
    ledger.add(Transaction(date(2024, 5, 2), "b", 900, "transport"))
    ledger.add(Transaction(date(2024, 5, 3), "c", 500, "art"))
    ledger.add(Transaction(date(2024, 5, 4), "d", 400, "transport"))
    rows = monthly_summary(ledger, 2024, 5)
    assert [(r["category"], r["count"], r["total"]) for r in rows] == [
        ("transport", 2, "$13.00"),
        ("art", 1, "$5.00"),
        ("books", 1, "$5.00"),
    ]


def test_render_empty_month():
    ledger = Ledger([Transaction(date(2024, 5, 1), "a", 500, "books")])
    assert render_monthly(ledger, 2024, 6) == "Spending for June 2024\n(no transactions)"


def test_render_manual_ledger():
    ledger = Ledger()
    ledger.add(Transaction(date(2024, 5, 1), "a", 123456, "rent"))
    ledger.add(Transaction(date(2024, 5, 2), "b", 1050, "books"))
    assert render_monthly(ledger, 2024, 5) == (
        "Spending for May 2024\n"
        "rent   $1,234.56  (1)\n"
        "books     $10.50  (1)\n"
        "total  $1,245.06"
    )


def test_summary_of_imported_statement():
    rows = monthly_summary(import_statement(MARCH, RULES), 2024, 3)
    assert [(r["category"], r["count"], r["total"]) for r in rows] == [
        ("groceries", 3, "$75.03"),
        ("transport", 1, "$58.10"),
        ("eating out", 1, "$4.35"),
    ]


def test_render_imported_statement():
    assert render_monthly(import_statement(MARCH, RULES), 2024, 3) == (
        "Spending for March 2024\n"
        "groceries    $75.03  (3)\n"
        "transport    $58.10  (1)\n"
        "eating out    $4.35  (1)\n"
        "total       $137.48"
    )
