"""Where a state corruption (state_corruption) goes into the gold code, and the tests that reveal it.

Shared mutable state mutated in place (a cache handing out its list, a mutable default argument, a
counter or a setting never reset); the failure shows on a later call.

Each site comes with its witnesses: the tests that fail on it and the incident report each stands for.
"""

from __future__ import annotations

from env.families.procedural.blocks import Ref, World, lit, q, t
from env.families.procedural.bugs.site import Site, Sites, Witness


def sites(w: World) -> list[Site]:
    """Every state_corruption site of a service drawn as ``w`` (whatever kinds it holds), in a fixed order
    (generation picks sites by index, so the order is part of the output)."""
    ref = Ref(w)
    cur = w.currency
    a, b = w.a, w.b
    home = w.home
    acc = w.accounts
    out = Sites()

    standard = ref.shipping(1200, home)
    out.add(
        "snapshot-alias", "state_corruption", "settings", "snapshot",
        "return copy.deepcopy(_current)", "return _current",
        "Express quotes change the standard shipping rate",
        Witness("settings", t("test_snapshot_is_a_private_copy", f"""
            mine = settings.snapshot()
            mine["currency"] = "XXX"
            assert settings.get("currency") == {q(cur)}
        """, ("settings",)), ("settings",), True,
            "An admin tool that edits its own copy of the settings (to preview a change) changes the live settings of the running "
            "service: after it set the currency to XXX on its copy, the service reports XXX too."),
        Witness("shipping", t("test_express_quotes_leave_the_standard_rate_alone", f"""
            assert shipping.quote(1200, {q(home)}) == {standard}
            shipping.quote(1200, {q(home)}, express=True)
            assert shipping.quote(1200, {q(home)}) == {standard}
        """, ("shipping",)), ("shipping",), False,
            f"Standard shipping gets more expensive during the day: a 1.2 kg parcel to {home} costs {standard} cents in the morning, "
            f"but after the first express shipment has been quoted, the same standard parcel costs more, and more again after each "
            "express quote. A restart fixes it until the next express order."),
    )
    out.add(
        "metrics-reset", "state_corruption", "metrics", "reset",
        "_COUNTERS.clear()", "_COUNTERS = {}",
        "Counters survive a reset",
        Witness("metrics", t("test_reset_clears_every_counter", """
            metrics.incr("test.jobs", 3)
            metrics.reset()
            assert metrics.value("test.jobs") == 0
            assert metrics.snapshot("test.") == {}
        """, ("metrics",)), ("metrics",), True,
            "The nightly metrics reset does not take: counters still hold their old values afterwards, so every dashboard counts "
            "since the last restart instead of since midnight."),
        Witness("cache", t("test_cache_statistics_start_over_after_a_metrics_reset", """
            quotes = cache.Cache("test-reset", 4)
            quotes.put("a", 1)
            quotes.get("a")
            quotes.get("b")
            metrics.reset()
            assert quotes.stats() == {"hits": 0, "misses": 0, "size": 1}
        """, ("cache", "metrics")), ("cache",), False,
            "The nightly statistics job resets the metrics at midnight, but the cache statistics still show yesterday's hits and "
            "misses afterwards, so the dashboards count every day twice. Expected hits and misses to start from zero after "
            "metrics.reset()."),
    )
    out.add(
        "audit-default-tags", "state_corruption", "audit", "record",
        "tags: list[str] | None = None", "tags: list[str] | None = []",
        "Audit entries carry tags of other entries",
        Witness("audit", t("test_each_entry_is_tagged_with_its_own_area", f"""
            audit.record("user.login", {q(acc[0].email)})
            audit.record("order.placed", {q(acc[0].email)})
            assert [entry["tags"] for entry in audit.entries()] == [["user"], ["order"]]
        """, ("audit",)), ("audit",), True,
            "Every audit entry lists the tags of all entries recorded before it, not just its own area."),
        Witness("orders", t("test_order_audit_trail_by_area", f"""
            basket = cart.Cart({q(acc[0].name)})
            basket.add({q(a.sku)})
            orders.place(basket, {q(acc[0].email)})
            assert [entry["action"] for entry in audit.entries(area="stock")] == ["stock.reserved"]
            assert [entry["action"] for entry in audit.entries(area="order")] == ["order.placed"]
        """, ("cart", "orders", "audit")), ("orders",), False,
            "The audit screen's area filter shows everything: filtering the trail of a freshly placed order by area 'stock' lists "
            "both the stock reservation and the order itself (and, on a busy day, entries of every other area too). Expected one "
            "entry per area."),
    )
    cat = w.doubles[0]
    rows = [(p.sku, p.price) for p in w.in_category(cat)]
    out.add(
        "cheapest-mutates-cache", "state_corruption", "pricing", "cheapest",
        "rows = list(price_list(category))", "rows = price_list(category)",
        "Price lists lose products after a cheapest-first query",
        Witness("pricing", t("test_cheapest_leaves_the_price_list_intact", f"""
            assert pricing.cheapest({q(cat)}, 1) == {lit(sorted(rows, key=lambda r: (r[1], r[0]))[:1])}
            assert pricing.price_list({q(cat)}) == {lit(rows)}
        """, ("pricing",)), ("pricing",), True,
            f"Products vanish from the {cat} price list: once the 'cheapest {cat}' widget has been shown, price_list({q(cat)}) "
            f"returns a single product instead of {len(rows)} until the cache is invalidated. Expected {lit(rows)}."),
    )
    second = ref.checkout([(b, 1)], home)
    out.add(
        "cart-default-lines", "state_corruption", "cart", "Cart.__init__",
        "lines: list[pricing.Quote] | None = None", "lines: list[pricing.Quote] | None = []",
        "New carts contain other customers' items",
        Witness("cart", t("test_new_carts_start_empty", f"""
            first = cart.Cart({q(acc[0].email)})
            first.add({q(a.sku)}, 2)
            second = cart.Cart({q(acc[1].email)})
            assert second.item_count() == 0
            assert second.lines == []
        """, ("cart",)), ("cart",), True,
            "A new cart already contains the items another customer added to theirs."),
        Witness("checkout", t("test_each_customer_pays_for_their_own_cart", f"""
            first = cart.Cart({q(acc[0].email)})
            first.add({q(a.sku)}, 2)
            second = cart.Cart({q(acc[1].email)})
            second.add({q(b.sku)})
            result = checkout.totals(second, {q(home)})
            assert result.subtotal_cents == {second[0]}
            assert result.total_cents == {second[4]}
        """, ("cart", "checkout")), ("checkout",), False,
            f"Customers are billed for other customers' items: {acc[1].email} put 1 × {b.sku} in a new cart and checkout charged "
            f"for the 2 × {a.sku} that {acc[0].email} had just added to theirs as well. Expected a subtotal of {ref.money(second[0])}."),
        Witness("orders", t("test_orders_contain_only_their_own_cart", f"""
            first = cart.Cart({q(acc[0].name)})
            first.add({q(a.sku)}, 2)
            second = cart.Cart({q(acc[1].name)})
            second.add({q(b.sku)})
            order = orders.place(second, {q(acc[1].email)})
            assert [(line.sku, line.quantity) for line in order.lines] == [({q(b.sku)}, 1)]
        """, ("cart", "orders")), ("orders",), False,
            f"Orders ship items nobody ordered: {acc[1].name} ordered 1 × {b.sku} from a new cart, but the order also contains the "
            f"2 × {a.sku} {acc[0].name} had put in a different cart, and their stock was reserved."),
    )
    scat = w.doubles[1]
    found = sorted(ref.index()[scat])
    out.add(
        "suggest-mutates-cache", "state_corruption", "search", "suggest",
        "skus = list(search(query))", "skus = search(query)",
        "Search results shrink after autocomplete",
        Witness("search", t("test_suggestions_leave_search_results_intact", f"""
            assert len(search.suggest({q(scat)}, 1)) == 1
            assert search.search({q(scat)}) == {lit(found)}
        """, ("search",)), ("search",), True,
            f"Searching for {q(scat)} returns a single product once the autocomplete box has suggested one for the same text; "
            f"expected {lit(found)}. A rebuild of the index brings them back until the next suggestion."),
    )
    lows = sorted(p.sku for p in w.low)
    out.add(
        "low-stock-default", "state_corruption", "inventory", "low_stock",
        "into: list[str] | None = None", "into: list[str] | None = []",
        "The low-stock list grows every time it is asked for",
        Witness("inventory", t("test_low_stock_is_the_same_when_asked_twice", f"""
            assert inventory.low_stock() == {lit(lows)}
            assert inventory.low_stock() == {lit(lows)}
        """, ("inventory",)), ("inventory",), True,
            f"The low-stock list shows {lit(lows)} the first time it is asked for, and every SKU twice the second time (three "
            "times the third), until the service restarts."),
        Witness("reports", t("test_restock_report_is_stable", f"""
            first = reports.restock_report()
            assert first == {lit([f"{sku}: {w.stock[sku]} left" for sku in lows])}
            assert reports.restock_report() == first
        """, ("reports",)), ("reports",), False,
            f"The restock report lists products several times: the first report of the day shows {len(lows)} low products, the "
            f"next shows them twice, then three times, until the service restarts. Expected {lit(lows)} once each."),
    )
    out.add(
        "order-numbers-reset", "state_corruption", "orders", "reset",
        "    global _numbers\n", "",
        "Order numbers do not restart after a reset",
        Witness("orders", t("test_order_numbers_restart_after_a_reset", f"""
            basket = cart.Cart({q(acc[0].name)})
            basket.add({q(a.sku)})
            orders.place(basket, {q(acc[0].email)})
            orders.reset()
            again = cart.Cart({q(acc[0].name)})
            again.add({q(a.sku)})
            assert orders.place(again, {q(acc[0].email)}).id == {q(w.order_prefix + "-00001")}
        """, ("cart", "orders")), ("orders",), True,
            f"After the day-end reset the order list is empty, but order numbers carry on from the day before; the first order of "
            f"the new day should be {w.order_prefix}-00001."),
    )
    return out.found
