from datetime import date

import pytest

from spendlog.errors import StatementError
from spendlog.importer import import_statement, parse_date

RULES = [("grocer", "groceries"), ("fuel", "transport")]


def test_reads_rows_in_order_with_categories():
    text = (
        "Date,Description,Amount\n"
        "2024-03-02,Green Grocer,12.50\n"
        "2024-03-05,Fuel Stop,58.10\n"
        "2024-03-06,Bookshop,17.45\n"
    )
    ledger = import_statement(text, RULES)
    assert len(ledger) == 3
    assert [t.category for t in ledger] == ["groceries", "transport", "uncategorized"]
    assert [t.amount_cents for t in ledger] == [1250, 5810, 1745]
    assert ledger[0].when == date(2024, 3, 2)


def test_column_order_and_case_do_not_matter():
    text = "amount,DATE,Description,Balance\n33.33,03/07/2024,Green Grocer,100.00\n"
    ledger = import_statement(text, RULES)
    assert ledger[0].when == date(2024, 3, 7)
    assert ledger[0].amount_cents == 3333
    assert ledger[0].description == "Green Grocer"


def test_dollar_signs_separators_and_refunds():
    text = (
        "Date,Description,Amount\n"
        '2024-03-01,Laptop,"$1,024.50"\n'
        "2024-03-02,Green Grocer,(3.25)\n"
        "2024-03-03,Fuel Stop,-6.60\n"
    )
    ledger = import_statement(text, RULES)
    assert [t.amount_cents for t in ledger] == [102450, -325, -660]


def test_blank_lines_are_skipped():
    text = "Date,Description,Amount\n\n2024-03-02,Green Grocer,14.99\n,,\n"
    assert len(import_statement(text, RULES)) == 1


def test_missing_column_is_reported_on_header_line():
    with pytest.raises(StatementError) as excinfo:
        import_statement("Date,Description\n2024-03-02,Green Grocer\n")
    assert excinfo.value.line == 1
    assert "amount" in str(excinfo.value)


def test_bad_date_reports_line_number():
    text = "Date,Description,Amount\n2024-03-02,Green Grocer,14.99\n2024-13-40,Fuel Stop,3.49\n"
    with pytest.raises(StatementError) as excinfo:
        import_statement(text, RULES)
    assert excinfo.value.line == 3


def test_bad_amount_is_a_statement_error():
    text = "Date,Description,Amount\n2024-03-02,Green Grocer,twelve\n"
    with pytest.raises(StatementError):
        import_statement(text, RULES)


def test_parse_date_formats():
    assert parse_date("2024-03-05") == date(2024, 3, 5)
    assert parse_date(" 03/05/2024 ") == date(2024, 3, 5)
