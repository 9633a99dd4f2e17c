"""The ``catalog`` kind: the product catalog, by SKU.

``build`` writes the module a service with this kind holds and the tests every such service carries;
the tests that reveal a particular defect live with the defect, in ``bugs``."""

from __future__ import annotations

from env.families.procedural.blocks.world import Module, World, block, lit, q, render, t


def build(w: World, present: frozenset[str]) -> Module:
    rows = [(p.sku, p.name, p.category, p.price, p.weight) for p in sorted(w.products, key=lambda p: p.sku)]
    cat = w.doubles[0]
    new = w.unused_sku()
    source = render(
        '''
        """The product catalog of $pkg: every product we sell, by SKU.

            get(" $lower ")        # Product(sku="$sku", ...): SKUs are trimmed and upper-cased
            in_category("$cat")    # the category's products, by SKU
            set_price("$sku", 1500)
        """

        from __future__ import annotations

        import dataclasses
        import logging

        from $pkg import models

        log = logging.getLogger(__name__)

        # (sku, name, category, price in cents, weight in grams)
        DEFAULT_PRODUCTS = $rows

        _PRODUCTS: dict[str, models.Product] = {}


        class UnknownProduct(LookupError):
            """No product has that SKU."""


        def normalise(sku: str) -> str:
            return sku.strip().upper()


        def add(sku: str, name: str, category: str, price_cents: int, weight_g: int) -> models.Product:
            if price_cents < 0:
                log.error("refusing a negative price for %s: %d", sku, price_cents)
                raise ValueError(f"price must not be negative, got {price_cents}")
            product = models.Product(normalise(sku), name, category, price_cents, weight_g)
            if product.sku in _PRODUCTS:
                log.warning("replacing product %s", product.sku)
            _PRODUCTS[product.sku] = product
            return product


        def get(sku: str) -> models.Product:
            key = normalise(sku)
            if key not in _PRODUCTS:
                log.warning("unknown product %s", key)
                raise UnknownProduct(key)
            return _PRODUCTS[key]


        def in_category(category: str) -> list[models.Product]:
            return [product for _, product in sorted(_PRODUCTS.items()) if product.category == category]


        def categories() -> list[str]:
            return sorted({product.category for product in _PRODUCTS.values()})


        def set_price(sku: str, price_cents: int) -> models.Product:
            key = normalise(sku)
            product = dataclasses.replace(_PRODUCTS[key], price_cents=price_cents)
            _PRODUCTS[key] = product
            log.info("price of %s set to %d", key, price_cents)
            return product


        def reset() -> None:
            """Back to the default product list."""
            _PRODUCTS.clear()
            for row in DEFAULT_PRODUCTS:
                add(*row)


        reset()
        ''',
        pkg=w.pkg, lower=w.a.sku.lower(), sku=w.a.sku, cat=cat, rows=block(rows, ")"),
    )
    tests = [
        t("test_get_normalises_the_sku", f"""
            product = catalog.get({q(" " + w.a.sku.lower() + " ")})
            assert product.sku == {q(w.a.sku)}
            assert product.name == {q(w.a.name)}
            assert product.price_cents == {w.a.price}
        """, ("catalog",)),
        t("test_unknown_product", f"""
            with pytest.raises(catalog.UnknownProduct):
                catalog.get({q(new)})
        """, ("catalog",)),
        t("test_products_by_category", f"""
            assert [product.sku for product in catalog.in_category({q(cat)})] == {lit([p.sku for p in w.in_category(cat)])}
            assert catalog.categories() == {lit(sorted({p.category for p in w.products}))}
        """, ("catalog",)),
        t("test_added_products_go_away_on_reset", f"""
            catalog.add({q(new.lower())}, "Sample", {q(cat)}, 500, 100)
            assert catalog.get({q(new)}).price_cents == 500
            catalog.reset()
            with pytest.raises(catalog.UnknownProduct):
                catalog.get({q(new)})
        """, ("catalog",)),
        t("test_set_price", f"""
            catalog.set_price({q(w.b.sku)}, {w.b.price + 100})
            assert catalog.get({q(w.b.sku)}).price_cents == {w.b.price + 100}
        """, ("catalog",)),
    ]
    return Module(source, tests)
