"""The ``orders`` kind: placing and cancelling orders.

``build`` writes the module a service with this kind holds and the tests every such service carries;
the tests that reveal a particular defect live with the defect, in ``bugs``."""

from __future__ import annotations

from env.families.procedural.blocks.world import Module, Ref, World, q, render, t

# The module's source, rendered per service; the tests below check it against the drawn world.
_SOURCE = '''
    """Orders of $pkg: placing one reserves stock, records it and mails the customer.

        order = place(basket, "ada@example.org")    # Order(id="$prefix-00001", status="placed", ...)
        cancel(order.id)                            # stock released, customer told
        for_customer("ada@example.org")
    """

    from __future__ import annotations

    import itertools
    import logging
    from dataclasses import dataclass

    from $pkg import audit, cart, inventory, money, notifications, pricing

    log = logging.getLogger(__name__)

    PREFIX = "$prefix"
    CURRENCY = "$currency"


    @dataclass
    class Order:
        id: str
        customer: str
        email: str
        lines: list[pricing.Quote]
        subtotal_cents: int
        status: str = "placed"


    class UnknownOrder(LookupError):
        """No order has that id."""


    _orders: dict[str, Order] = {}
    _numbers = itertools.count(1)


    def _next_id() -> str:
        return f"{PREFIX}-{next(_numbers):05d}"


    def place(basket: cart.Cart, email: str) -> Order:
        """Reserve every line's stock (all or nothing), record the order and confirm it by mail."""
        if not basket.lines:
            log.warning("refusing an empty order for %s", basket.customer)
            raise ValueError("cannot place an empty order")
        held: list[pricing.Quote] = []
        try:
            for line in basket.lines:
                inventory.reserve(line.sku, line.quantity)
                held.append(line)
        except inventory.OutOfStock:
            for line in held:
                inventory.release(line.sku, line.quantity)
            log.warning("order for %s rejected: out of stock", basket.customer)
            raise
        order = Order(_next_id(), basket.customer, email, list(basket.lines), basket.subtotal())
        _orders[order.id] = order
        context = {"order": order.id, "items": basket.item_count()}
        audit.record("stock.reserved", basket.customer, context)
        audit.record("order.placed", basket.customer, context)
        total = money.format_cents(order.subtotal_cents, CURRENCY)
        notifications.send(email, "order_confirmed", name=basket.customer, order=order.id, total=total)
        log.info("order %s placed for %s: %d", order.id, basket.customer, order.subtotal_cents)
        return order


    def get(order_id: str) -> Order:
        if order_id not in _orders:
            log.warning("unknown order %s", order_id)
            raise UnknownOrder(order_id)
        return _orders[order_id]


    def cancel(order_id: str) -> Order:
        order = get(order_id)
        if order.status != "placed":
            log.warning("cannot cancel order %s: it is %s", order_id, order.status)
            raise ValueError(f"order {order_id} is {order.status}")
        for line in order.lines:
            inventory.release(line.sku, line.quantity)
        order.status = "cancelled"
        audit.record("order.cancelled", order.customer, {"order": order.id})
        refund = money.format_cents(order.subtotal_cents, CURRENCY)
        notifications.send(order.email, "order_cancelled", order=order.id, refund=refund)
        log.info("order %s cancelled", order.id)
        return order


    def for_customer(customer: str) -> list[Order]:
        return [order for _, order in sorted(_orders.items()) if order.customer == customer]


    def placed() -> list[Order]:
        return [order for _, order in sorted(_orders.items()) if order.status == "placed"]


    def reset() -> None:
        global _numbers
        _orders.clear()
        _numbers = itertools.count(1)
    '''


def build(w: World, present: frozenset[str]) -> Module:
    ref = Ref(w)
    a, b, lowp = w.a, w.b, w.low[0]
    acc = w.accounts
    total = ref.quote(a, 2)[1]
    source = render(_SOURCE, pkg=w.pkg, prefix=w.order_prefix, currency=w.currency)
    tests = [
        t("test_placing_an_order_reserves_stock_and_mails_the_customer", f"""
            basket = cart.Cart({q(acc[0].name)})
            basket.add({q(a.sku)}, 2)
            order = orders.place(basket, {q(acc[0].email)})
            assert order.status == "placed"
            assert order.subtotal_cents == {total}
            assert order.id.startswith({q(w.order_prefix + "-")})
            assert inventory.available({q(a.sku)}) == {w.stock[a.sku] - 2}
            mail = notifications.drain()
            assert [message["to"] for message in mail] == [{q(acc[0].email)}]
            assert mail[0]["body"] == f"Hi {acc[0].name}, thanks for your order {{order.id}} of {ref.money(total)}."
        """, ("cart", "orders", "inventory", "notifications")),
        t("test_an_order_out_of_stock_is_rejected_and_nothing_stays_reserved", f"""
            basket = cart.Cart({q(acc[1].name)})
            basket.add({q(a.sku)}, 1)
            basket.add({q(lowp.sku)}, {w.stock[lowp.sku] + 1})
            with pytest.raises(inventory.OutOfStock):
                orders.place(basket, {q(acc[1].email)})
            assert inventory.available({q(a.sku)}) == {w.stock[a.sku]}
            assert orders.for_customer({q(acc[1].name)}) == []
        """, ("cart", "orders", "inventory")),
        t("test_orders_by_customer", f"""
            first = cart.Cart({q(acc[0].name)})
            first.add({q(a.sku)})
            other = cart.Cart({q(acc[1].name)})
            other.add({q(b.sku)})
            one = orders.place(first, {q(acc[0].email)})
            orders.place(other, {q(acc[1].email)})
            again = cart.Cart({q(acc[0].name)})
            again.add({q(b.sku)}, 2)
            two = orders.place(again, {q(acc[0].email)})
            assert [order.id for order in orders.for_customer({q(acc[0].name)})] == [one.id, two.id]
        """, ("cart", "orders")),
        t("test_unknown_order", f"""
            with pytest.raises(orders.UnknownOrder):
                orders.get({q(w.order_prefix + "-99999")})
        """, ("orders",)),
    ]
    return Module(source, tests)
