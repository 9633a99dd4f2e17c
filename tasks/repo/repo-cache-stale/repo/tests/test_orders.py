from decimal import Decimal

import pytest

from pricebook import Catalog, Order, PriceEngine


@pytest.fixture
def engine():
    c = Catalog()
    c.add("HOSE-25", "Garden hose 25m", "29.90", category="garden")
    c.add("RAKE-1", "Leaf rake", "14.50", category="garden")
    c.add("DRILL-X", "Cordless drill", "89.00", category="tools")
    return PriceEngine(c)


def test_order_merges_lines():
    order = Order()
    order.add("hose-25", 1)
    order.add("HOSE-25", 2)
    assert order.lines == {"HOSE-25": 3}


def test_order_summary_totals(engine):
    order = Order(tier="gold")
    order.add("HOSE-25", 2)
    order.add("DRILL-X", 1)
    summary = order.summarize(engine)
    assert [q.sku for q in summary.lines] == ["DRILL-X", "HOSE-25"]
    assert summary.subtotal == Decimal("133.92")
    assert summary.tax == Decimal("26.78")
    assert summary.total == Decimal("160.70")


def test_render_lists_every_line(engine):
    order = Order(tax_rate="0")
    order.add("RAKE-1", 2)
    text = order.summarize(engine).render()
    assert "RAKE-1" in text
    assert "29.00 EUR" in text
    assert text.splitlines()[-1].endswith("29.00 EUR")


def test_order_after_seasonal_markup(engine):
    order = Order(tier="standard", tax_rate="0")
    order.add("RAKE-1", 1)
    order.add("DRILL-X", 1)
    assert order.summarize(engine).total == Decimal("103.50")
    engine.catalog.apply_markup("garden", 20)
    summary = order.summarize(engine)
    assert [q.unit_price for q in summary.lines] == [Decimal("89.00"), Decimal("17.40")]
    assert summary.total == Decimal("106.40")
