"""The ``inventory`` kind: stock on hand and reservations.

``build`` writes the module a service with this kind holds and the tests every such service carries;
the tests that reveal a particular defect live with the defect, in ``bugs``."""

from __future__ import annotations

from env.families.procedural.blocks.world import Module, World, block, q, render, t


def build(w: World, present: frozenset[str]) -> Module:
    big = w.a
    stock = w.stock[big.sku]
    initial = [(p.sku, w.stock[p.sku]) for p in sorted(w.products, key=lambda p: p.sku)]
    source = render(
        '''
        """Stock on hand and reservations of $pkg, per SKU.

            reserve("$sku", 2)      # units held for an order; returns what is left to sell
            release("$sku", 2)      # the order was cancelled
            low_stock()             # SKUs at or under the low-stock threshold
        """

        from __future__ import annotations

        import logging

        from $pkg import catalog, settings

        log = logging.getLogger(__name__)

        INITIAL_STOCK = $initial

        _on_hand: dict[str, int] = {}
        _reserved: dict[str, int] = {}


        class OutOfStock(Exception):
            def __init__(self, sku: str, wanted: int, available: int) -> None:
                super().__init__(f"{sku}: {wanted} wanted, {available} available")
                self.sku = sku
                self.wanted = wanted
                self.available = available


        def available(sku: str) -> int:
            key = catalog.normalise(sku)
            return _on_hand.get(key, 0) - _reserved.get(key, 0)


        def reserve(sku: str, quantity: int) -> int:
            """Hold ``quantity`` units for an order; returns what is left to sell."""
            product = catalog.get(sku)
            left = available(product.sku)
            if quantity > left:
                log.warning("cannot reserve %d of %s: %d available", quantity, product.sku, left)
                raise OutOfStock(product.sku, quantity, left)
            _reserved[product.sku] = _reserved.get(product.sku, 0) + quantity
            left -= quantity
            if left <= settings.get("low_stock_threshold"):
                log.warning("stock of %s is low: %d left", product.sku, left)
            return left


        def release(sku: str, quantity: int) -> int:
            """Give back units an order held; returns what is available again."""
            key = catalog.normalise(sku)
            if key not in _reserved:
                log.error("release of %s, which has nothing reserved", key)
                raise ValueError(f"nothing is reserved for {key}")
            held = _reserved[key]
            _reserved[key] = held - min(quantity, held)
            log.info("released %d of %s", quantity, key)
            return available(key)


        def restock(sku: str, quantity: int) -> int:
            product = catalog.get(sku)
            _on_hand[product.sku] = _on_hand.get(product.sku, 0) + quantity
            log.info("restocked %d of %s", quantity, product.sku)
            return available(product.sku)


        def low_stock(into: list[str] | None = None) -> list[str]:
            """SKUs at or under the low-stock threshold, sorted; appended to ``into`` when given."""
            found = [] if into is None else into
            threshold = settings.get("low_stock_threshold")
            for sku in sorted(_on_hand):
                if available(sku) <= threshold:
                    found.append(sku)
            return found


        def reset() -> None:
            _on_hand.clear()
            _on_hand.update(INITIAL_STOCK)
            _reserved.clear()


        reset()
        ''',
        pkg=w.pkg, sku=big.sku, initial=block(initial, "}"),
    )
    tests = [
        t("test_reserve_reduces_what_is_available", f"""
            assert inventory.available({q(big.sku)}) == {stock}
            assert inventory.reserve({q(big.sku.lower())}, 2) == {stock - 2}
            assert inventory.available({q(big.sku)}) == {stock - 2}
        """, ("inventory",)),
        t("test_cannot_reserve_more_than_available", f"""
            with pytest.raises(inventory.OutOfStock) as info:
                inventory.reserve({q(big.sku)}, {stock + 1})
            assert info.value.available == {stock}
            assert inventory.available({q(big.sku)}) == {stock}
        """, ("inventory",)),
        t("test_release_and_restock", f"""
            inventory.reserve({q(big.sku)}, 3)
            assert inventory.release({q(big.sku)}, 3) == {stock}
            assert inventory.restock({q(big.sku)}, 5) == {stock + 5}
        """, ("inventory",)),
        t("test_unknown_products_cannot_be_reserved", f"""
            with pytest.raises(catalog.UnknownProduct):
                inventory.reserve({q(w.unused_sku())}, 1)
        """, ("inventory", "catalog")),
    ]
    return Module(source, tests)
