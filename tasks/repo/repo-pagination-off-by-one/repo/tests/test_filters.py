import pytest

from catalog.errors import CatalogError
from catalog.filters import apply_filters
from catalog.sorting import sort_products


def test_filter_by_category_and_price(repo):
    found = apply_filters(repo.all(), category="garden", min_price=500, max_price=1000)
    assert [p.sku for p in found] == ["P06", "P08", "P10"]


def test_filter_by_text_and_stock(repo):
    found = apply_filters(repo.all(), query="SALE kitchen", in_stock_only=True)
    assert [p.sku for p in found] == ["P03", "P09", "P21"]


def test_sort_by_price_descending(repo):
    ordered = sort_products(repo.all(), "-price")
    assert [p.price for p in ordered[:3]] == [2300, 2200, 2100]


def test_unknown_sort_order(repo):
    with pytest.raises(CatalogError):
        sort_products(repo.all(), "colour")
