"""The ``checkout`` kind: what a cart costs, VAT and shipping included.

``build`` writes the module a service with this kind holds and the tests every such service carries;
the tests that reveal a particular defect live with the defect, in ``bugs``."""

from __future__ import annotations

from env.families.procedural.blocks.world import Module, Ref, World, lit, q, render, t


def build(w: World, present: frozenset[str]) -> Module:
    ref = Ref(w)
    a, b, c = w.a, w.b, w.normal[2]
    home, far = w.home, w.regions[3]
    customer = w.accounts[0].email
    code = list(w.coupons)[0]
    dom = ref.checkout([(a, 2), (b, 1)], home)
    export = ref.checkout([(c, 1)], far)
    # Enough units of a for free domestic shipping.
    big_qty = next(n for n in range(1, 10_000) if ref.quote(a, n)[1] >= w.free_over * 100 + 100)
    big = ref.checkout([(a, big_qty)], home)
    with_coupon = ref.checkout([(a, 1), (c, 2)], home, coupon=code)
    plain = ref.checkout([(b, 2)], home)
    receipt = [f"Subtotal: {ref.money(plain[0])}", f"Shipping: {ref.money(plain[1])}", f"VAT: {ref.money(plain[2])}", f"Total: {ref.money(plain[4])}"]
    source = render(
        '''
        """Checkout for $pkg: what a customer pays for a cart, VAT and shipping included.

            totals(basket, "$home")                       # Totals(subtotal_cents=..., total_cents=...)
            totals(basket, "$home", coupon="$code")      # a coupon takes a share off the gross total
            receipt(totals(basket, "$home"))             # display lines
        """

        from __future__ import annotations

        import logging
        from dataclasses import dataclass

        from $pkg import cart, discounts, money, shipping, tax

        log = logging.getLogger(__name__)

        CURRENCY = "$currency"


        @dataclass(frozen=True)
        class Totals:
            subtotal_cents: int
            shipping_cents: int
            tax_cents: int
            coupon_cents: int
            total_cents: int


        def totals(basket: cart.Cart, region: str, coupon: str = "", express: bool = False) -> Totals:
            if not basket.lines:
                log.warning("checkout of an empty cart for %s", basket.customer)
                raise ValueError("the cart is empty")
            subtotal = basket.subtotal()
            goods_tax = sum(tax.tax_on(line.total_cents, region, basket.category_of(line.sku)) for line in basket.lines)
            shipping_cents = shipping.quote(basket.weight_g(), region, subtotal, express)
            shipping_tax = tax.tax_on(shipping_cents, region)
            gross = subtotal + goods_tax + shipping_cents + shipping_tax
            coupon_cents = money.percent_of(gross, discounts.coupon_bp(coupon)) if coupon else 0
            result = Totals(subtotal, shipping_cents, goods_tax + shipping_tax, coupon_cents, gross - coupon_cents)
            log.info("checkout for %s to %s: %d", basket.customer, region, result.total_cents)
            return result


        def receipt(result: Totals) -> list[str]:
            rows = [("Subtotal", result.subtotal_cents), ("Shipping", result.shipping_cents), ("VAT", result.tax_cents)]
            if result.coupon_cents:
                rows.append(("Coupon", -result.coupon_cents))
            rows.append(("Total", result.total_cents))
            return [f"{label}: {money.format_cents(cents, CURRENCY)}" for label, cents in rows]
        ''',
        pkg=w.pkg, home=home, code=code, currency=w.currency,
    )

    def fields(v: tuple[int, ...]) -> str:
        return lit(tuple(v))

    probe = "(result.subtotal_cents, result.shipping_cents, result.tax_cents, result.coupon_cents, result.total_cents)"
    tests = [
        t("test_domestic_checkout", f"""
            basket = cart.Cart({q(customer)})
            basket.add({q(a.sku)}, 2)
            basket.add({q(b.sku)}, 1)
            result = checkout.totals(basket, {q(home)})
            assert {probe} == {fields(dom)}
        """, ("cart", "checkout")),
        t("test_export_checkout_pays_world_shipping", f"""
            basket = cart.Cart({q(customer)})
            basket.add({q(c.sku)})
            result = checkout.totals(basket, {q(far)})
            assert {probe} == {fields(export)}
        """, ("cart", "checkout")),
        t("test_large_domestic_orders_ship_free", f"""
            basket = cart.Cart({q(customer)})
            basket.add({q(a.sku)}, {big_qty})
            result = checkout.totals(basket, {q(home)})
            assert {probe} == {fields(big)}
        """, ("cart", "checkout")),
        t("test_coupon_takes_a_share_of_the_gross_total", f"""
            basket = cart.Cart({q(customer)})
            basket.add({q(a.sku)})
            basket.add({q(c.sku)}, 2)
            result = checkout.totals(basket, {q(home)}, coupon={q(code)})
            assert {probe} == {fields(with_coupon)}
        """, ("cart", "checkout")),
        t("test_receipt_lines", f"""
            basket = cart.Cart({q(customer)})
            basket.add({q(b.sku)}, 2)
            assert checkout.receipt(checkout.totals(basket, {q(home)})) == {lit(receipt)}
        """, ("cart", "checkout")),
        t("test_empty_cart_cannot_check_out", f"""
            with pytest.raises(ValueError):
                checkout.totals(cart.Cart({q(customer)}), {q(home)})
        """, ("cart", "checkout")),
    ]
    return Module(source, tests)
