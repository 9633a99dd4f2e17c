import pytest

from spendlog.errors import SpendlogError
from spendlog.money import format_cents, to_cents


@pytest.mark.parametrize(
    "cents, expected",
    [
        (0, "$0.00"),
        (5, "$0.05"),
        (1999, "$19.99"),
        (123456, "$1,234.56"),
        (-325, "-$3.25"),
    ],
    ids=["zero", "cents-only", "plain", "thousands", "refund"],
)
def test_format_cents(cents, expected):
    assert format_cents(cents) == expected


def test_to_cents_accepts_whole_dollars_and_strings():
    assert to_cents(400) == 40000
    assert to_cents("99.50") == 9950
    assert to_cents(" 12 ") == 1200


def test_to_cents_rejects_fractions_of_a_cent():
    with pytest.raises(SpendlogError):
        to_cents("10.005")


def test_to_cents_rejects_garbage():
    with pytest.raises(SpendlogError):
        to_cents("ten dollars")
