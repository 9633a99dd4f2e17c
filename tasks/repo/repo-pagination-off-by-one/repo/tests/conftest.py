import pytest

from catalog.products import Product
from catalog.repository import ProductRepository


@pytest.fixture
def repo():
    """23 products: odd numbers are kitchen items, even numbers garden items; every 5th is sold out."""
    r = ProductRepository()
    for i in range(1, 24):
        r.add(
            Product(
                sku=f"P{i:02d}",
                name=f"Product {i:02d}",
                price=i * 100,
                category="kitchen" if i % 2 else "garden",
                tags=frozenset({"sale"}) if i % 3 == 0 else frozenset(),
                in_stock=i % 5 != 0,
            )
        )
    return r
