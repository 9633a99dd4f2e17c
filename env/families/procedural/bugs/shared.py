"""Witness tests shared by two bug types: the same test reveals a logic_error and a dependency_error
in the refund note, and a key_error and a dependency_error in cancelling an order.
"""

from __future__ import annotations

from env.families.procedural.blocks import Ref, Test, World, q, t


def refund_cents(w: World) -> int:
    """The amount the refund-note test refunds: not a whole number of currency units."""
    return w.a.price + 5


def refund_note_test(w: World) -> Test:
    """payments.refund_note prints the refund as a negative amount (money.format_cents)."""
    ref = Ref(w)
    refund = refund_cents(w)
    return t("test_refund_note_shows_the_amount_refunded", f"""
        assert payments.refund_note("R-9", {refund}) == {q("Refund for R-9: " + ref.money(-refund))}
    """, ("payments",))


def cancel_order_test(w: World) -> Test:
    """Cancelling an order releases its stock (inventory.release) and mails the customer (the cancel template)."""
    ref = Ref(w)
    a = w.a
    acc = w.accounts
    stock_a = w.stock[a.sku]
    return t("test_cancel_releases_stock_and_tells_the_customer", f"""
        basket = cart.Cart({q(acc[2].name)})
        basket.add({q(a.sku)}, 2)
        order = orders.place(basket, {q(acc[2].email)})
        notifications.drain()
        assert orders.cancel(order.id).status == "cancelled"
        assert inventory.available({q(a.sku)}) == {stock_a}
        mail = notifications.drain()
        assert mail[0]["body"] == f"Your order {{order.id}} was cancelled; {ref.money(ref.quote(a, 2)[1])} will be refunded."
    """, ("cart", "orders", "inventory", "notifications"))
