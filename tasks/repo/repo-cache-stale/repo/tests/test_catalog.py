from decimal import Decimal

import pytest

from pricebook.catalog import Catalog
from pricebook.errors import InvalidPrice, UnknownProduct


@pytest.fixture
def catalog():
    c = Catalog()
    c.add("hose-25", "Garden hose 25m", "29.90", category="Garden")
    c.add("RAKE-1", "Leaf rake", "14.50", category="garden")
    c.add("DRILL-X", "Cordless drill", "89.00", category="tools")
    return c


def test_add_and_get_normalises_sku(catalog):
    product = catalog.get(" Hose-25 ")
    assert product.sku == "HOSE-25"
    assert product.unit_price == Decimal("29.90")
    assert product.category == "garden"
    assert "hose-25" in catalog
    assert len(catalog) == 3


def test_unknown_sku_raises(catalog):
    with pytest.raises(UnknownProduct):
        catalog.get("NOPE")
    with pytest.raises(UnknownProduct):
        catalog.remove("NOPE")


def test_negative_price_rejected(catalog):
    with pytest.raises(InvalidPrice):
        catalog.add("BAD", "Bad", "-1")
    with pytest.raises(InvalidPrice):
        catalog.set_price("RAKE-1", "-0.01")


def test_revision_increases_on_add_remove_and_set_price(catalog):
    start = catalog.revision
    catalog.set_price("RAKE-1", "15.00")
    assert catalog.revision > start
    after_price = catalog.revision
    catalog.remove("DRILL-X")
    assert catalog.revision > after_price


def test_markup_reprices_only_that_category(catalog):
    changed = catalog.apply_markup("GARDEN", 10)
    assert [p.sku for p in changed] == ["HOSE-25", "RAKE-1"]
    assert catalog.get("HOSE-25").unit_price == Decimal("32.89")
    assert catalog.get("RAKE-1").unit_price == Decimal("15.95")
    assert catalog.get("DRILL-X").unit_price == Decimal("89.00")


def test_categories_sorted(catalog):
    assert catalog.categories() == ["garden", "tools"]
    assert [p.sku for p in catalog] == ["DRILL-X", "HOSE-25", "RAKE-1"]
