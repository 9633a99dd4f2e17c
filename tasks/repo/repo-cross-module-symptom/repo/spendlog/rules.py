"""Keyword rules that put transactions into spending categories.

A rule set is a list of ``(keyword, category)`` pairs. The first rule whose
keyword occurs in the transaction description (ignoring case) wins.
"""

UNCATEGORIZED = "uncategorized"

DEFAULT_RULES: list[tuple[str, str]] = [
    ("grocer", "groceries"),
    ("market", "groceries"),
    ("cafe", "eating out"),
    ("restaurant", "eating out"),
    ("fuel", "transport"),
    ("transit", "transport"),
]


def normalize_category(name: str) -> str:
    """Categories are compared in lower case with single spaces."""
    return " ".join(name.lower().split())


def categorize(description: str, rules: list[tuple[str, str]] | None = None) -> str:
    """Return the category of a transaction description."""
    if rules is None:
        rules = DEFAULT_RULES
    text = description.lower()
    for keyword, category in rules:
        if keyword.lower() in text:
            return normalize_category(category)
    return UNCATEGORIZED
