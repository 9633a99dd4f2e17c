import pytest

from catalog.errors import CatalogError
from catalog.products import Product


def test_all_keeps_insertion_order(repo):
    assert len(repo) == 23
    assert [p.sku for p in repo.all()[:3]] == ["P01", "P02", "P03"]


def test_duplicate_sku_rejected(repo):
    with pytest.raises(CatalogError):
        repo.add(Product("P01", "Copy", 100, "kitchen"))


def test_get_unknown_sku(repo):
    assert repo.get("P07").name == "Product 07"
    with pytest.raises(CatalogError):
        repo.get("NOPE")


def test_to_dict():
    product = Product("MUG-01", "Enamel mug", 1250, "kitchen", frozenset({"sale", "blue"}))
    assert product.to_dict() == {
        "sku": "MUG-01",
        "name": "Enamel mug",
        "price": 1250,
        "category": "kitchen",
        "tags": ["blue", "sale"],
        "in_stock": True,
    }
