"""spendlog: import bank statements, categorize spending, report and budget."""

from spendlog.budget import BudgetStatus, check_budgets
from spendlog.errors import SpendlogError, StatementError
from spendlog.importer import import_statement
from spendlog.report import monthly_summary, render_monthly
from spendlog.transactions import Ledger, Transaction

__version__ = "0.4.2"

__all__ = [
    "BudgetStatus",
    "Ledger",
    "SpendlogError",
    "StatementError",
    "Transaction",
    "check_budgets",
    "import_statement",
    "monthly_summary",
    "render_monthly",
]
