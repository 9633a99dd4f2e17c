"""The ``reports`` kind: back-office reports.

``build`` writes the module a service with this kind holds and the tests every such service carries;
the tests that reveal a particular defect live with the defect, in ``bugs``."""

from __future__ import annotations

from env.families.procedural.blocks.world import Module, Ref, World, lit, q, render, t


def build(w: World, present: frozenset[str]) -> Module:
    ref = Ref(w)
    a, b, c = w.a, w.b, w.normal[2]
    acc = w.accounts
    by_cat: dict[str, int] = {}
    for p, qty in ((a, 3), (b, 1), (c, 2)):
        by_cat[p.category] = by_cat.get(p.category, 0) + ref.quote(p, qty)[1]
    source = render(
        '''
        """Back-office reports of $pkg: sales by category, best sellers, what to restock.

            sales_by_category()      # {"$cat": 5197, ...}: cents of the orders still placed
            best_sellers(3)          # [("$sku", 7), ...]: most units first, ties by SKU
            restock_report()         # ["$sku: 2 left", ...]
        """

        from __future__ import annotations

        import logging

        from $pkg import catalog, inventory, metrics, money, orders

        log = logging.getLogger(__name__)

        CURRENCY = "$currency"


        def sales_by_category() -> dict[str, int]:
            totals: dict[str, int] = {}
            for order in orders.placed():
                for line in order.lines:
                    category = catalog.get(line.sku).category
                    totals[category] = totals.get(category, 0) + line.total_cents
            metrics.incr("reports.sales")
            return dict(sorted(totals.items()))


        def best_sellers(limit: int) -> list[tuple[str, int]]:
            units: dict[str, int] = {}
            for order in orders.placed():
                for line in order.lines:
                    units[line.sku] = units.get(line.sku, 0) + line.quantity
            rows = sorted(units.items(), key=lambda row: (-row[1], row[0]))
            metrics.incr("reports.best_sellers")
            return rows[:limit]


        def restock_report() -> list[str]:
            lines = [f"{sku}: {inventory.available(sku)} left" for sku in inventory.low_stock()]
            log.info("restock report: %d products low", len(lines))
            return lines


        def revenue_line() -> str:
            placed = orders.placed()
            total = sum(order.subtotal_cents for order in placed)
            return f"{len(placed)} orders, {money.format_cents(total, CURRENCY)}"
        ''',
        pkg=w.pkg, cat=a.category, sku=a.sku, currency=w.currency,
    )
    place = f"""
        first = cart.Cart({q(acc[0].name)})
        first.add({q(a.sku)}, 3)
        first.add({q(b.sku)})
        orders.place(first, {q(acc[0].email)})
        second = cart.Cart({q(acc[1].name)})
        second.add({q(c.sku)}, 2)
        orders.place(second, {q(acc[1].email)})
    """
    tests = [
        t("test_sales_by_category", place + f"""
        assert reports.sales_by_category() == {lit(dict(sorted(by_cat.items())))}
        """, ("cart", "orders", "reports")),
        t("test_best_sellers", place + f"""
        assert reports.best_sellers(2) == {lit([(a.sku, 3), (c.sku, 2)])}
        """, ("cart", "orders", "reports")),
    ]
    return Module(source, tests)
