"""The ``pricing`` kind: quotes and cached price lists.

``build`` writes the module a service with this kind holds and the tests every such service carries;
the tests that reveal a particular defect live with the defect, in ``bugs``."""

from __future__ import annotations

from env.families.procedural.blocks.world import Module, Ref, World, lit, q, render, t


def build(w: World, present: frozenset[str]) -> Module:
    ref = Ref(w)
    a, b = w.a, w.b
    cat = w.doubles[0]
    rows = [(p.sku, p.price) for p in w.in_category(cat)]
    cheapest = sorted(rows, key=lambda r: (r[1], r[0]))[:1]
    n_categories = len({p.category for p in w.products})
    gold_disc, gold_total = ref.quote(b, 3, "gold")
    source = render(
        '''
        """Quotes for $pkg: catalog price less discounts, and cached price lists per category.

            quote("$sku", 3, "gold")          # Quote(unit_cents=..., discount_cents=..., total_cents=...)
            price_list("$cat")               # [(sku, price), ...] by SKU, cached
            cheapest("$cat", 1)
            apply_price_list(feed_text)       # "sku;price" lines from a supplier
        """

        from __future__ import annotations

        import logging
        from dataclasses import dataclass

        from $pkg import cache, catalog, discounts, money

        log = logging.getLogger(__name__)


        @dataclass(frozen=True)
        class Quote:
            sku: str
            quantity: int
            unit_cents: int
            discount_cents: int
            total_cents: int


        # One entry per category: the whole catalog's price lists stay cached.
        _LISTS = cache.Cache("price-lists", $capacity)


        def quote(sku: str, quantity: int, tier: str = "standard") -> Quote:
            """The price of ``quantity`` units for a customer of ``tier``."""
            if quantity <= 0:
                log.warning("refusing to quote %d units of %s", quantity, sku)
                raise ValueError(f"quantity must be positive, got {quantity}")
            product = catalog.get(sku)
            discount = discounts.line_discount(product.price_cents, quantity, tier)
            total = product.price_cents * quantity - discount
            log.info("quote %s x%d (%s): %d", product.sku, quantity, tier, total)
            return Quote(product.sku, quantity, product.price_cents, discount, total)


        def price_list(category: str) -> list[tuple[str, int]]:
            """(sku, price) of every product in ``category``, by SKU."""
            rows = _LISTS.get(category)
            if rows is None:
                rows = [(product.sku, product.price_cents) for product in catalog.in_category(category)]
                _LISTS.put(category, rows)
            return rows


        def cheapest(category: str, limit: int) -> list[tuple[str, int]]:
            """The ``limit`` cheapest products of ``category``, cheapest first."""
            rows = list(price_list(category))
            rows.sort(key=lambda row: (row[1], row[0]))
            del rows[limit:]
            return rows


        def apply_price_list(text: str) -> int:
            """Apply a supplier's "sku;price" lines; returns how many prices changed."""
            changed = 0
            for line in text.splitlines():
                if not line.strip():
                    continue
                sku, _, amount = line.partition(";")
                catalog.set_price(sku.strip(), money.parse_amount(amount))
                changed += 1
            _LISTS.invalidate()
            log.info("supplier price list applied: %d prices", changed)
            return changed


        def cache_stats() -> dict[str, int]:
            return _LISTS.stats()


        def reset() -> None:
            _LISTS.invalidate()
        ''',
        pkg=w.pkg, sku=a.sku, cat=cat, capacity=n_categories,
    )
    tests = [
        t("test_quote_uses_the_catalog_price", f"""
            quote = pricing.quote({q(a.sku.lower())}, 2)
            assert (quote.sku, quote.quantity, quote.unit_cents) == ({q(a.sku)}, 2, {a.price})
            assert (quote.discount_cents, quote.total_cents) == (0, {2 * a.price})
        """, ("pricing",)),
        t("test_tier_discount_on_a_quote", f"""
            quote = pricing.quote({q(b.sku)}, 3, "gold")
            assert quote.discount_cents == {gold_disc}
            assert quote.total_cents == {gold_total}
        """, ("pricing",)),
        t("test_quote_rejects_bad_quantities", f"""
            with pytest.raises(ValueError):
                pricing.quote({q(a.sku)}, 0)
        """, ("pricing",)),
        t("test_price_list_and_cheapest", f"""
            assert pricing.price_list({q(cat)}) == {lit(rows)}
            assert pricing.cheapest({q(cat)}, 1) == {lit(cheapest)}
        """, ("pricing",)),
        t("test_supplier_price_list_updates_prices", f"""
            assert pricing.apply_price_list({q(f"{a.sku};12.50" + chr(10) + chr(10) + f"{b.sku};7")}) == 2
            assert pricing.quote({q(a.sku)}, 1).unit_cents == 1250
            assert pricing.quote({q(b.sku)}, 1).unit_cents == 700
        """, ("pricing",)),
    ]
    return Module(source, tests)
