"""The ``cart`` kind: shopping carts.

``build`` writes the module a service with this kind holds and the tests every such service carries;
the tests that reveal a particular defect live with the defect, in ``bugs``."""

from __future__ import annotations

from env.families.procedural.blocks.world import Module, Ref, World, q, render, t


def build(w: World, present: frozenset[str]) -> Module:
    ref = Ref(w)
    a, b = w.a, w.b
    customer = w.accounts[0].email
    silver_total = ref.quote(a, 2, "silver")[1] + ref.quote(b, 1, "silver")[1]
    source = render(
        '''
        """Shopping carts of $pkg: quoted lines for one customer.

            basket = Cart("ada@example.org", tier="silver")
            basket.add("$sku", 2)      # adding more of a SKU re-quotes its line
            basket.subtotal()          # cents, discounts included
        """

        from __future__ import annotations

        import logging

        from $pkg import catalog, pricing

        log = logging.getLogger(__name__)


        class Cart:
            def __init__(self, customer: str, tier: str = "standard", lines: list[pricing.Quote] | None = None) -> None:
                self.customer = customer
                self.tier = tier
                self.lines = [] if lines is None else lines

            def line(self, sku: str) -> pricing.Quote | None:
                key = catalog.normalise(sku)
                for line in self.lines:
                    if line.sku == key:
                        return line
                return None

            def add(self, sku: str, quantity: int = 1) -> pricing.Quote:
                existing = self.line(sku)
                wanted = quantity + (existing.quantity if existing else 0)
                quote = pricing.quote(sku, wanted, self.tier)
                if existing:
                    self.lines.remove(existing)
                self.lines.append(quote)
                log.info("cart of %s: %s now x%d", self.customer, quote.sku, quote.quantity)
                return quote

            def remove(self, sku: str, quantity: int = 1) -> None:
                existing = self.line(sku)
                if existing is None:
                    log.warning("cart of %s has no %s to remove", self.customer, sku)
                    raise ValueError(f"{sku} is not in the cart")
                remaining = existing.quantity - quantity
                self.lines.remove(existing)
                if remaining > 0:
                    self.lines.append(pricing.quote(existing.sku, remaining, self.tier))
                log.info("cart of %s: removed %d of %s", self.customer, quantity, existing.sku)

            def subtotal(self) -> int:
                return sum(line.total_cents for line in self.lines)

            def item_count(self) -> int:
                return sum(line.quantity for line in self.lines)

            def weight_g(self) -> int:
                return sum(catalog.get(line.sku).weight_g * line.quantity for line in self.lines)

            def category_of(self, sku: str) -> str:
                return catalog.get(sku).category
        ''',
        pkg=w.pkg, sku=a.sku,
    )
    tests = [
        t("test_adding_merges_lines_and_requotes", f"""
            basket = cart.Cart({q(customer)})
            basket.add({q(a.sku)}, 1)
            basket.add({q(a.sku.lower())}, 2)
            assert basket.item_count() == 3
            assert basket.line({q(a.sku)}).quantity == 3
            assert basket.subtotal() == {ref.quote(a, 3)[1]}
        """, ("cart",)),
        t("test_weight_and_subtotal", f"""
            basket = cart.Cart({q(customer)}, tier="silver")
            basket.add({q(a.sku)}, 2)
            basket.add({q(b.sku)}, 1)
            assert basket.subtotal() == {silver_total}
            assert basket.weight_g() == {2 * a.weight + b.weight}
        """, ("cart",)),
        t("test_remove_part_of_a_line", f"""
            basket = cart.Cart({q(customer)})
            basket.add({q(a.sku)}, 3)
            basket.remove({q(a.sku)}, 1)
            assert basket.line({q(a.sku)}).quantity == 2
            assert basket.subtotal() == {ref.quote(a, 2)[1]}
        """, ("cart",)),
        t("test_removing_what_is_not_there", f"""
            basket = cart.Cart({q(customer)})
            with pytest.raises(ValueError):
                basket.remove({q(b.sku)})
        """, ("cart",)),
    ]
    return Module(source, tests)
