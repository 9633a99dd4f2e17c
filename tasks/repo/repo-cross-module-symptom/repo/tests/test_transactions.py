from datetime import date

from spendlog.transactions import Ledger, Transaction


def _ledger():
    ledger = Ledger()
    ledger.add(Transaction(date(2024, 2, 28), "Green Grocer", 4210, "Groceries"))
    ledger.add(Transaction(date(2024, 3, 1), "Green Grocer", 1999, "groceries"))
    ledger.add(Transaction(date(2024, 3, 3), "Corner Cafe", 435, "eating out"))
    ledger.add(Transaction(date(2024, 3, 9), "Green Grocer refund", -500, "groceries"))
    return ledger


def test_total_and_len():
    ledger = _ledger()
    assert len(ledger) == 4
    assert ledger.total() == 4210 + 1999 + 435 - 500


def test_in_month_filters_by_calendar_month():
    march = _ledger().in_month(2024, 3)
    assert len(march) == 3
    assert [t.description for t in march] == ["Green Grocer", "Corner Cafe", "Green Grocer refund"]


def test_by_category_nets_refunds():
    assert _ledger().in_month(2024, 3).by_category() == {"groceries": 1499, "eating out": 435}


def test_category_is_normalized():
    t = Transaction(date(2024, 1, 1), "x", 100, "  Eating  Out")
    assert t.category == "eating out"
