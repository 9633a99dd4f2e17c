"""Where a logic error (logic_error) goes into the gold code, and the tests that reveal it.

A wrong comparison, boundary, rounding or ordering.

Each site comes with its witnesses: the tests that fail on it and the incident report each stands for.
"""

from __future__ import annotations

from env.families.procedural.blocks import Ref, World, lit, q, t
from env.families.procedural.bugs.shared import refund_cents, refund_note_test
from env.families.procedural.bugs.site import Site, Sites, Witness


def _buggy_money(cents: int, currency: str) -> str:
    """What the format_cents defect prints (divmod of a negative amount)."""
    units, rest = divmod(cents, 100)
    return f"{'-' if cents < 0 else ''}{units}.{rest:02d} {currency}"


def sites(w: World) -> list[Site]:
    """Every logic_error site of a service drawn as ``w`` (whatever kinds it holds), in a fixed order
    (generation picks sites by index, so the order is part of the output)."""
    ref = Ref(w)
    cur = w.currency
    a, b, c = w.a, w.b, w.normal[2]
    home = w.home
    acc = w.accounts
    (q1, bp1), (q2, bp2) = w.breaks
    threshold = w.free_over * 100
    cats = sorted({p.category for p in w.products})
    gold_acc = next(x for x in acc if x.tier == "gold")
    out = Sites()

    amount = a.price * 3 + 1  # leaves a remainder of one cent
    plan = ref.split(amount, 3)
    out.add(
        "split-remainder", "logic_error", "money", "split_evenly",
        "base + 1 if index < remainder else base", "base + 1 if index <= remainder else base",
        "Instalment plans add up to more than the order",
        Witness("money", t("test_split_keeps_every_cent", f"""
            plan = money.split_evenly({amount}, 3)
            assert plan == {lit(plan)}
            assert sum(plan) == {amount}
        """, ("money",)), ("money",), True,
            f"Finance found a cent too many in split payments: splitting {amount} cents into 3 equal parts gives parts that add up "
            f"to {amount + 1}. Expected {lit(plan)}, which add up to the amount exactly."),
        Witness("payments", t("test_instalments_add_up_to_the_order_total", f"""
            plan = payments.instalments({amount}, 3)
            assert sum(plan) == {amount}
            assert plan == {lit(plan)}
        """, ("payments",)), ("payments",), False,
            f"Customers on instalment plans are overcharged: an order of {ref.money(amount)} paid in 3 monthly instalments gets a plan "
            f"that adds up to one cent more than the order. Expected the instalments {lit(plan)}, which add up to the order total exactly."),
    )
    refund = refund_cents(w)
    refund_test = refund_note_test(w)
    out.add(
        "negative-amounts", "logic_error", "money", "format_cents",
        "divmod(abs(cents), 100)", "divmod(cents, 100)",
        "Negative amounts are displayed wrongly",
        Witness("money", t("test_format_negative_amounts", f"""
            assert money.format_cents(-{refund}, {q(cur)}) == {q(ref.money(-refund))}
        """, ("money",)), ("money",), True,
            f"Negative amounts are displayed wrongly: -{refund} cents shows as {q(_buggy_money(-refund, cur))}, expected {q(ref.money(-refund))}."),
        Witness("payments", refund_test, ("payments",), False,
            f"Refund notes sent to customers show garbled amounts: refunding {ref.money(refund)} on R-9 prints "
            f"{q('Refund for R-9: ' + _buggy_money(-refund, cur))}. Expected {q('Refund for R-9: ' + ref.money(-refund))}. "
            "Positive amounts elsewhere look fine."),
    )
    full_cap = len(cats)
    out.add(
        "cache-capacity", "logic_error", "cache", "Cache.put",
        "while len(self._data) > self.capacity:", "while len(self._data) >= self.capacity:",
        "Caches hold one entry less than their capacity",
        Witness("cache", t("test_cache_holds_its_full_capacity", """
            quotes = cache.Cache("test-full", 3)
            for key in ("a", "b", "c"):
                quotes.put(key, key.upper())
            assert len(quotes) == 3
            assert [quotes.get(key) for key in ("a", "b", "c")] == ["A", "B", "C"]
        """, ("cache",)), ("cache",), True,
            "Cache hit rates are lower than sized for: a cache created with room for 3 entries holds only 2 (after storing a, b "
            "and c, a is gone)."),
        Witness("pricing", t("test_price_lists_stay_cached_for_every_category", f"""
            for category in {lit(cats)}:
                pricing.price_list(category)
            before = pricing.cache_stats()["hits"]
            for category in {lit(cats)}:
                pricing.price_list(category)
            assert pricing.cache_stats()["hits"] - before == {full_cap}
        """, ("pricing",)), ("pricing",), False,
            f"The price-list cache never hits any more and the catalog is re-read on every page view: after loading the price lists of "
            f"all {full_cap} categories once, loading them again should be {full_cap} cache hits (the cache is sized for one list per "
            "category), but cache_stats() shows 0 new hits."),
    )
    out.add(
        "free-shipping-boundary", "logic_error", "shipping", "quote",
        "subtotal_cents >= free_shipping_threshold()", "subtotal_cents > free_shipping_threshold()",
        "Orders of exactly the free-shipping amount still pay shipping",
        Witness("shipping", t("test_free_shipping_starts_at_the_threshold", f"""
            assert shipping.quote(800, {q(home)}, subtotal_cents={threshold}) == 0
            assert shipping.quote(800, {q(home)}, subtotal_cents={threshold - 1}) == {ref.shipping(800, home, threshold - 1)}
        """, ("shipping",)), ("shipping",), True,
            f"Customers complain that orders of exactly {ref.money(threshold)} still pay shipping: our terms say domestic ({home}) "
            f"orders ship free from {ref.money(threshold)} on, but an 800 g parcel with a subtotal of exactly {threshold} cents is "
            f"charged {ref.shipping(800, home)} cents. One cent more and it is free."),
    )
    lines_q1 = ref.quote(a, q1)
    out.add(
        "volume-boundary", "logic_error", "discounts", "volume_bp",
        "if quantity >= minimum:", "if quantity > minimum:",
        "The volume discount is missing at its break quantity",
        Witness("discounts", t("test_volume_breaks_start_at_their_minimum", f"""
            assert discounts.volume_bp({q1}) == {bp1}
            assert discounts.volume_bp({q2}) == {bp2}
        """, ("discounts",)), ("discounts",), True,
            f"Customers ordering exactly {q1} units get no volume discount, though our price sheet says the {bp1 / 100:g} % "
            f"discount starts at {q1} units ({q2} units: {bp2 / 100:g} %)."),
        Witness("pricing", t("test_quote_at_a_volume_break", f"""
            quote = pricing.quote({q(a.sku)}, {q1})
            assert quote.discount_cents == {lines_q1[0]}
            assert quote.total_cents == {lines_q1[1]}
        """, ("pricing",)), ("pricing",), False,
            f"Customers ordering exactly {q1} units of {a.sku} are quoted the full {ref.money(a.price * q1)} with no discount, though "
            f"the volume discount of {bp1 / 100:g} % starts at {q1} units (expected total {ref.money(lines_q1[1])}). "
            f"{q1 + 1} units are discounted as expected."),
        Witness("cart", t("test_cart_at_a_volume_break", f"""
            basket = cart.Cart({q(acc[0].email)})
            basket.add({q(a.sku)}, {q1 - 1})
            basket.add({q(a.sku)}, 1)
            assert basket.subtotal() == {lines_q1[1]}
        """, ("cart",)), ("cart",), False,
            f"Carts with exactly {q1} units of {a.sku} show a subtotal of {ref.money(a.price * q1)}, without the {bp1 / 100:g} % volume "
            f"discount that starts at {q1} units (expected {ref.money(lines_q1[1])}); with {q1 + 1} units the discount is there."),
    )
    stock_b = w.stock[b.sku]
    last = ref.quote(b, stock_b)[1]
    out.add(
        "last-units", "logic_error", "inventory", "reserve",
        "if quantity > left:", "if quantity >= left:",
        "The last units in stock cannot be sold",
        Witness("inventory", t("test_the_last_units_can_be_reserved", f"""
            assert inventory.reserve({q(b.sku)}, {stock_b}) == 0
            assert inventory.available({q(b.sku)}) == 0
        """, ("inventory",)), ("inventory",), True,
            f"The warehouse cannot hold the last units of a product for an order: reserving all {stock_b} units of {b.sku} in "
            f"stock fails with OutOfStock, while {stock_b - 1} can be reserved."),
        Witness("orders", t("test_an_order_can_take_the_last_units", f"""
            basket = cart.Cart({q(acc[1].name)})
            basket.add({q(b.sku)}, {stock_b})
            order = orders.place(basket, {q(acc[1].email)})
            assert order.subtotal_cents == {last}
            assert inventory.available({q(b.sku)}) == 0
        """, ("cart", "orders", "inventory")), ("orders",), False,
            f"We cannot sell the last units of a product: an order for all {stock_b} units of {b.sku} still in stock is rejected with "
            f"OutOfStock ({b.sku}: {stock_b} wanted, {stock_b} available), while an order for {stock_b - 1} goes through. "
            "Expected the order to be placed and the product to be sold out."),
    )
    out.add(
        "remove-whole-line", "logic_error", "cart", "Cart.remove",
        "if remaining > 0:", "if remaining >= 0:",
        "Removing every unit of a cart line crashes",
        Witness("cart", t("test_removing_every_unit_drops_the_line", f"""
            basket = cart.Cart({q(acc[0].email)})
            basket.add({q(a.sku)}, 2)
            basket.add({q(b.sku)}, 1)
            basket.remove({q(a.sku)}, 2)
            assert basket.line({q(a.sku)}) is None
            assert basket.item_count() == 1
        """, ("cart",)), ("cart",), True,
            f"Removing both units of {a.sku} from a cart holding 2 raises ValueError (quantity must be positive, got 0); removing one works."),
        Witness("checkout", t("test_checkout_after_emptying_a_line", f"""
            basket = cart.Cart({q(acc[0].email)})
            basket.add({q(a.sku)}, 2)
            basket.add({q(b.sku)}, 2)
            basket.remove({q(a.sku)}, 2)
            result = checkout.totals(basket, {q(home)})
            assert result.total_cents == {ref.checkout([(b, 2)], home)[4]}
        """, ("cart", "checkout")), ("checkout",), False,
            f"Customers who take an item out of their cart completely cannot check out: removing both units of {a.sku} from a cart "
            f"with 2 × {a.sku} and 2 × {b.sku} fails with ValueError: quantity must be positive, got 0. Removing only one unit works. "
            f"Expected the line to disappear and checkout to charge {ref.money(ref.checkout([(b, 2)], home)[4])} for the rest."),
    )
    limit = w.max_failures
    out.add(
        "lockout-off-by-one", "logic_error", "users", "login",
        "if _failures.get(key, 0) >= limit:", "if _failures.get(key, 0) > limit:",
        "Accounts lock one attempt too late",
        Witness("users", t("test_account_locks_after_the_allowed_failures", f"""
            for _ in range({limit}):
                assert users.login({q(acc[1].email)}, "wrong password") is False
            with pytest.raises(users.AccountLocked):
                users.login({q(acc[1].email)}, {q(acc[1].password)})
        """, ("users",)), ("users",), True,
            f"Security review: accounts are supposed to lock after {limit} failed logins in a row (max_login_failures = {limit}), but "
            f"after {limit} wrong passwords for {acc[1].email} the next login attempt is still checked, and succeeds with the right "
            "password instead of raising AccountLocked."),
    )
    out.add(
        "outbox-limit", "logic_error", "notifications", "send",
        "if len(_outbox) >= limit:", "if len(_outbox) > limit:",
        "The outbox accepts one message over its limit",
        Witness("notifications", t("test_outbox_refuses_mail_when_full", f"""
            for number in range({w.outbox_limit}):
                notifications.send(f"customer{{number}}@example.org", "back_in_stock", product="Kettle")
            with pytest.raises(notifications.OutboxFull):
                notifications.send("late@example.org", "back_in_stock", product="Kettle")
            assert notifications.pending() == {w.outbox_limit}
        """, ("notifications",)), ("notifications",), True,
            f"The mail outbox grows past its limit: with outbox_limit = {w.outbox_limit} the mail worker sees "
            f"{w.outbox_limit + 1} queued messages; the message over the limit should have been refused with OutboxFull."),
    )
    everything = w.redeem_step * w.earn["gold"]
    out.add(
        "redeem-all", "logic_error", "loyalty", "redeem",
        "if points > have:", "if points >= have:",
        "Customers cannot redeem their whole balance",
        Witness("loyalty", t("test_redeem_the_whole_balance", f"""
            loyalty.earn({q(gold_acc.email)}, {w.redeem_step * 100})
            assert loyalty.redeem({q(gold_acc.email)}, {everything}) == {everything // w.redeem_step * w.voucher_cents}
            assert loyalty.balance({q(gold_acc.email)}) == 0
        """, ("loyalty",)), ("loyalty",), True,
            f"{gold_acc.email} has exactly {everything} loyalty points and wants a voucher for all of them; redeeming {everything} points "
            f"fails with NotEnoughPoints ({everything} points wanted, {everything} available). Redeeming fewer points works."),
    )
    tie = sorted([a.sku, b.sku])
    out.add(
        "best-seller-ties", "logic_error", "reports", "best_sellers",
        "rows = sorted(units.items(), key=lambda row: (-row[1], row[0]))",
        "rows = sorted(units.items(), key=lambda row: (row[1], row[0]), reverse=True)",
        "Best sellers with equal sales come out in the wrong order",
        Witness("reports", t("test_best_seller_ties_are_listed_by_sku", f"""
            first = cart.Cart({q(acc[0].name)})
            first.add({q(a.sku)}, 2)
            first.add({q(c.sku)})
            orders.place(first, {q(acc[0].email)})
            second = cart.Cart({q(acc[1].name)})
            second.add({q(b.sku)}, 2)
            orders.place(second, {q(acc[1].email)})
            assert reports.best_sellers(3) == {lit([(tie[0], 2), (tie[1], 2), (c.sku, 1)])}
        """, ("cart", "orders", "reports")), ("reports",), True,
            f"The best-seller report breaks ties in the wrong order: {tie[0]} and {tie[1]} both sold 2 units, and the report (documented "
            f"as most units first, ties by SKU) lists {tie[1]} before {tie[0]}."),
    )
    j1 = w.jobs[0]
    out.add(
        "due-boundary", "logic_error", "scheduler", "Scheduler.due",
        "if job.next_ms <= self.now_ms", "if job.next_ms < self.now_ms",
        "Jobs run one tick late",
        Witness("scheduler", t("test_a_job_is_due_exactly_on_time", f"""
            jobs = scheduler.Scheduler(retry.seeded(1))
            jobs.add({q(j1)}, 60)
            assert jobs.advance(59_999) == []
            assert jobs.advance(1) == [{q(j1)}]
        """, ("scheduler", "retry")), ("scheduler",), True,
            f"The {j1} job, scheduled every 60 s, is not due when the clock reaches exactly 60 000 ms; it only runs on a later tick."),
    )

    # divide_round truncating: pick a gross amount whose net has a fraction of at least a half.
    rate = w.vat[home]
    rounded_gross = next(g for g in range(a.price * 2, a.price * 2 + 20_000) if 2 * (g * 10000 % (10000 + rate)) >= 10000 + rate)
    rounded_net = ref.div(rounded_gross * 10000, 10000 + rate)
    out.add(
        "divide-truncation", "logic_error", "money", "divide_round",
        "return (2 * numerator + denominator) // (2 * denominator)", "return numerator // denominator",
        "Divisions lose the last cent",
        Witness("money", t("test_divide_round_rounds_half_up", """
            assert money.divide_round(2599, 100) == 26
            assert money.divide_round(2549, 100) == 25
            assert money.divide_round(5, 2) == 3
        """, ("money",)), ("money",), True,
            "Amounts divided by the money helpers come out a cent low half of the time: 25.99 divided into 100ths gives 25, "
            "expected 26 (amounts are rounded half up everywhere else)."),
        Witness("tax", t("test_split_gross_rounds_to_the_nearest_cent", f"""
            assert tax.split_gross({rounded_gross}, {q(home)}) == ({rounded_net}, {rounded_gross - rounded_net})
        """, ("tax",)), ("tax",), False,
            f"The VAT breakdown on invoices with tax-inclusive prices is off by a cent: a gross price of {ref.money(rounded_gross)} "
            f"in {home} (VAT {rate / 100:g} %) shows net {ref.money(rounded_net - 1)} and VAT {ref.money(rounded_gross - rounded_net + 1)}; "
            f"the accountants expect net {ref.money(rounded_net)} and VAT {ref.money(rounded_gross - rounded_net)} (rounded to the "
            "nearest cent)."),
    )
    spent = a.price * 3 + 60 - (a.price * 3) % 100  # a purchase whose last unit is 60 cents short of a full one
    out.add(
        "points-rounding", "logic_error", "loyalty", "earn",
        "points = spent_cents // 100 * EARN_PER_UNIT[tier]", "points = round(spent_cents / 100) * EARN_PER_UNIT[tier]",
        "Loyalty points are credited for units not spent",
        Witness("loyalty", t("test_points_count_full_units_only", f"""
            assert loyalty.earn({q(gold_acc.email)}, {spent}) == {spent // 100 * w.earn["gold"]}
            assert loyalty.balance({q(gold_acc.email)}) == {spent // 100 * w.earn["gold"]}
        """, ("loyalty",)), ("loyalty",), True,
            f"Customers get points for money they did not spend: a purchase of {ref.money(spent)} by {gold_acc.email} (gold tier, "
            f"{w.earn['gold']} points per full {cur} unit) earns {round(spent / 100) * w.earn['gold']} points; our terms give points "
            f"for full units only, {spent // 100 * w.earn['gold']}."),
    )
    return out.found
