"""Import the CSV export of a bank statement.

The export has a header row with (at least) the columns ``Date``,
``Description`` and ``Amount``; column order and letter case do not matter.
Dates are ISO (``2024-03-05``) or US style (``03/05/2024``). Amounts may carry a
dollar sign and thousands separators; refunds are written either with a minus
sign or in accounting style, in parentheses: ``(12.50)``.
"""

import csv
import io
from datetime import date, datetime

from spendlog.errors import StatementError
from spendlog.rules import categorize
from spendlog.transactions import Ledger, Transaction

REQUIRED_COLUMNS = ("date", "description", "amount")
DATE_FORMATS = ("%Y-%m-%d", "%m/%d/%Y")


def parse_date(text: str) -> date:
    """Parse a statement date in any of the supported formats."""
    text = text.strip()
    for fmt in DATE_FORMATS:
        try:
            return datetime.strptime(text, fmt).date()
        except ValueError:
            continue
    raise ValueError(f"unrecognized date {text!r}")


def parse_amount(text: str) -> int:
    """Parse a statement amount such as ``"$1,024.50"`` or ``"(3.25)"`` into cents."""
    cleaned = text.strip().replace("$", "").replace(",", "")
    negative = False
    if cleaned.startswith("(") and cleaned.endswith(")"):
        negative = True
        cleaned = cleaned[1:-1].strip()
    if cleaned.startswith("-"):
        negative = not negative
        cleaned = cleaned[1:]
    if not cleaned:
        raise ValueError(f"empty amount {text!r}")
    cents = int(float(cleaned) * 100)
    return -cents if negative else cents


def _header_map(header: list[str]) -> dict[str, int]:
    positions = {name.strip().lower(): i for i, name in enumerate(header)}
    missing = [col for col in REQUIRED_COLUMNS if col not in positions]
    if missing:
        raise StatementError(f"missing column(s): {', '.join(missing)}", line=1)
    return positions


def import_statement(text: str, rules: list[tuple[str, str]] | None = None) -> Ledger:
    """Read statement CSV text into a :class:`Ledger`, categorizing every row."""
    reader = csv.reader(io.StringIO(text))
    rows = [row for row in reader]
    if not rows:
        raise StatementError("statement is empty")
    columns = _header_map(rows[0])
    ledger = Ledger()
    for line_no, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        try:
            when = parse_date(row[columns["date"]])
            description = row[columns["description"]].strip()
            amount = parse_amount(row[columns["amount"]])
        except IndexError:
            raise StatementError("row has too few columns", line=line_no) from None
        except ValueError as exc:
            raise StatementError(str(exc), line=line_no) from None
        ledger.add(Transaction(when, description, amount, categorize(description, rules)))
    return ledger
