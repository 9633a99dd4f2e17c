"""The ``models`` kind: the product and order-line records.

``build`` writes the module a service with this kind holds and the tests every such service carries;
the tests that reveal a particular defect live with the defect, in ``bugs``."""

from __future__ import annotations

from env.families.procedural.blocks.world import Module, World, q, render, t


def build(w: World, present: frozenset[str]) -> Module:
    p = w.a
    source = render(
        '''
        """The records $pkg passes around: products and order lines.

            product = Product("$sku", "$name", "$category", $price, $weight)
            line = make_line("$sku", 3, $price)      # validated
            line.total_cents()                       # $total3
        """

        from __future__ import annotations

        import logging
        from dataclasses import dataclass

        log = logging.getLogger(__name__)


        @dataclass(frozen=True)
        class Product:
            sku: str
            name: str
            category: str
            price_cents: int
            weight_g: int

            def label(self) -> str:
                return f"{self.name} ({self.sku})"


        @dataclass(frozen=True)
        class Line:
            sku: str
            quantity: int
            unit_cents: int

            def total_cents(self) -> int:
                return self.unit_cents * self.quantity


        def make_line(sku: str, quantity: int, unit_cents: int) -> Line:
            """An order line, checked: a positive quantity and a price that is not negative."""
            if quantity <= 0:
                log.warning("rejected line for %s with quantity %d", sku, quantity)
                raise ValueError(f"quantity must be positive, got {quantity}")
            if unit_cents < 0:
                log.warning("rejected line for %s with price %d", sku, unit_cents)
                raise ValueError(f"price must not be negative, got {unit_cents}")
            return Line(sku, quantity, unit_cents)
        ''',
        pkg=w.pkg, sku=p.sku, name=p.name, category=p.category, price=p.price, weight=p.weight, total3=3 * p.price,
    )
    tests = [
        t("test_product_label", f"""
            product = models.Product({q(p.sku)}, {q(p.name)}, {q(p.category)}, {p.price}, {p.weight})
            assert product.label() == {q(f"{p.name} ({p.sku})")}
            assert product.weight_g == {p.weight}
        """, ("models",)),
        t("test_line_total", f"""
            line = models.make_line({q(p.sku)}, 3, {p.price})
            assert line.total_cents() == {3 * p.price}
            assert line.quantity == 3
        """, ("models",)),
        t("test_invalid_lines_are_rejected", f"""
            with pytest.raises(ValueError):
                models.make_line({q(p.sku)}, 0, {p.price})
            with pytest.raises(ValueError):
                models.make_line({q(p.sku)}, 1, -5)
        """, ("models",)),
    ]
    return Module(source, tests)
