import pytest

from billing.money import format_money, round_money, to_cents


@pytest.mark.parametrize("amount, expected", [(2.675, 2.68), (1.005, 1.01), (-1.005, -1.01), (3.0, 3.0), (0.1 + 0.2, 0.3)],
                         ids=["half-up", "half-up-small", "negative", "whole", "float-noise"])
def test_round_money(amount, expected):
    assert round_money(amount) == expected


def test_to_cents():
    assert to_cents(19.99) == 1999
    assert to_cents(0.1 + 0.2) == 30
    assert to_cents(-4.5) == -450


def test_format_money():
    assert format_money(1234.5) == "€1,234.50"
    assert format_money(-12.3, "USD") == "-$12.30"
    assert format_money(7, "CHF") == "CHF 7.00"
