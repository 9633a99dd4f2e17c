from decimal import Decimal

import pytest

from pricebook.catalog import Catalog
from pricebook.errors import UnknownTier
from pricebook.pricing import PriceEngine


@pytest.fixture
def engine():
    c = Catalog()
    c.add("HOSE-25", "Garden hose 25m", "29.90", category="garden")
    c.add("RAKE-1", "Leaf rake", "14.50", category="garden")
    c.add("DRILL-X", "Cordless drill", "89.00", category="tools")
    return PriceEngine(c)


def test_standard_quote(engine):
    q = engine.quote("HOSE-25", 2)
    assert q.unit_price == Decimal("29.90")
    assert q.discount_pct == Decimal("0")
    assert q.total == Decimal("59.80")


@pytest.mark.parametrize(
    "tier, qty, pct, total",
    [
        ("silver", 1, "5", "84.55"),
        ("gold", 10, "12", "783.20"),
        ("gold", 100, "15", "7565.00"),
        ("standard", 50, "5", "4227.50"),
    ],
)
def test_tier_and_volume_discounts(engine, tier, qty, pct, total):
    q = engine.quote("DRILL-X", qty, tier=tier)
    assert q.discount_pct == Decimal(pct)
    assert q.total == Decimal(total)


def test_unknown_tier(engine):
    with pytest.raises(UnknownTier):
        engine.quote("HOSE-25", 1, tier="platinum")


def test_repeated_quotes_are_cached(engine):
    first = engine.quote("rake-1", 3, "gold")
    second = engine.quote("RAKE-1", 3, "GOLD")
    assert first == second
    info = engine.cache_info()
    assert info["hits"] == 1
    assert info["misses"] == 1


def test_quote_follows_set_price(engine):
    assert engine.quote("RAKE-1", 1).total == Decimal("14.50")
    engine.catalog.set_price("RAKE-1", "16.00")
    assert engine.quote("RAKE-1", 1).total == Decimal("16.00")


def test_quote_follows_markup_after_earlier_quote(engine):
    before = engine.quote("HOSE-25", 4, tier="silver")
    assert before.total == Decimal("113.62")
    engine.catalog.apply_markup("garden", 10)
    after = engine.quote("HOSE-25", 4, tier="silver")
    assert after.unit_price == Decimal("32.89")
    assert after.total == Decimal("124.98")


def test_invalid_quantity(engine):
    with pytest.raises(ValueError):
        engine.quote("HOSE-25", 0)
