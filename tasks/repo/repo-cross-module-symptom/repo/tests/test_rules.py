from spendlog.rules import UNCATEGORIZED, categorize, normalize_category


def test_default_rules_match_case_insensitively():
    assert categorize("GREEN GROCER #12") == "groceries"
    assert categorize("Corner Cafe") == "eating out"


def test_first_matching_rule_wins():
    rules = [("cafe", "Eating Out"), ("corner", "misc")]
    assert categorize("Corner Cafe", rules) == "eating out"


def test_unknown_description_is_uncategorized():
    assert categorize("ACME Widgets", [("grocer", "groceries")]) == UNCATEGORIZED


def test_normalize_category():
    assert normalize_category("  Eating   OUT ") == "eating out"
