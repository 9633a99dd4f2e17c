"""Defects: where each bug type goes into real code, and the tests and incident report that reveal it.

    candidates = [s for s in sites(world) if s.bug == "key_error"]
    site = candidates[0]                 # Site(kind="discounts", function="coupon_bp", gold=..., buggy=...)
    buggy = inject(gold_source, site)    # the gold module with the one-line defect in site.function

A site is a minimal change inside one function of the gold code (``gold`` text -> ``buggy`` text, the
gold text occurring exactly once in that function), so the gold fix touches that function only.
Its witnesses are tests that fail on the defect: a direct one calling the faulty function, and,
where the kinds allow it, downstream ones in a caller's test file whose traceback or wrong value
shows up away from the fault (the generator keeps only those when one is present). The bug types:

- logic_error: a wrong comparison, boundary, rounding or ordering;
- key_error: a stale or non-normalised dict key -> KeyError at runtime, raised where the dict is read;
- dependency_error: a call into another module with arguments swapped or in the wrong unit, or to a
  function under a name it no longer has (AttributeError when the call runs);
- state_corruption: shared mutable state mutated in place (a cache handing out its list, a mutable
  default argument, a counter or a setting never reset); the failure shows on a later call;
- stochastic_bug: a wrong bound on an injected ``random.Random`` (jitter, bucketing, sampling); the tests
  seed it, so the failure is deterministic and identical over reruns.

Tests pass only plain data to the project and seed randomness through the project's own ``seeded``
helpers: under the split verdict a test's objects cannot cross into the sandbox.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from env.families.procedural.blocks import Ref, Test, World, lit, q, t
from env.families.procedural.model import BugType
from env.pyparse import parse


@dataclass(frozen=True)
class Witness:
    kind: str  # the test file it lives in: tests/test_<kind>.py
    test: Test
    needs: tuple[str, ...]  # kinds that must be in the service for this test
    direct: bool  # calls the faulty function itself
    symptom: str  # the incident report this test stands for


@dataclass(frozen=True)
class Site:
    id: str
    bug: BugType
    kind: str
    function: str  # "volume_bp", or "Cart.__init__" for a method
    gold: str
    buggy: str
    title: str
    witnesses: tuple[Witness, ...]


class InjectionError(ValueError):
    pass


def _function_node(tree: ast.AST, dotted: str) -> ast.AST:
    scope: list[ast.stmt] = list(getattr(tree, "body", []))
    node: ast.AST | None = None
    for part in dotted.split("."):
        node = next((n for n in scope if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == part), None)
        if node is None:
            raise InjectionError(f"no function {dotted} in the module")
        scope = list(getattr(node, "body", []))
    assert node is not None
    return node


def inject(source: str, site: Site) -> str:
    """``source`` with the site's defect: its gold text replaced, inside its function only."""
    node = _function_node(parse(source), site.function)
    lines = source.splitlines(keepends=True)
    start, end = node.lineno - 1, node.end_lineno or node.lineno  # type: ignore[attr-defined]
    body = "".join(lines[start:end])
    count = body.count(site.gold)
    if count != 1:
        raise InjectionError(f"{site.id}: the gold text occurs {count} times in {site.function}, expected once")
    changed = "".join(lines[:start]) + body.replace(site.gold, site.buggy) + "".join(lines[end:])
    parse(changed)  # still Python
    return changed


def _buggy_money(cents: int, currency: str) -> str:
    """What the format_cents defect prints (divmod of a negative amount)."""
    units, rest = divmod(cents, 100)
    return f"{'-' if cents < 0 else ''}{units}.{rest:02d} {currency}"


def sites(w: World) -> list[Site]:
    """Every defect site of a service drawn as ``w`` (whatever kinds it holds)."""
    ref = Ref(w)
    cur = w.currency
    a, b, c = w.a, w.b, w.normal[2]
    home, far = w.home, w.regions[3]
    acc = w.accounts
    (q1, bp1), (q2, bp2) = w.breaks
    code = list(w.coupons)[0]
    threshold = w.free_over * 100
    base, cap = w.retry_base_ms, w.retry_cap_s * 1000
    cats = sorted({p.category for p in w.products})
    gold_acc = next(x for x in acc if x.tier == "gold")
    out: list[Site] = []

    def site(name: str, bug: BugType, kind: str, function: str, gold: str, buggy: str, title: str, *witnesses: Witness) -> None:
        out.append(Site(name, bug, kind, function, gold, buggy, title, tuple(witnesses)))

    # -- logic_error ---------------------------------------------------------------------------

    amount = a.price * 3 + 1  # leaves a remainder of one cent
    plan = ref.split(amount, 3)
    site(
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
    refund = a.price + 5
    refund_test = t("test_refund_note_shows_the_amount_refunded", f"""
        assert payments.refund_note("R-9", {refund}) == {q("Refund for R-9: " + ref.money(-refund))}
    """, ("payments",))
    site(
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
    site(
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
    site(
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
    site(
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
    site(
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
    site(
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
    site(
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
    site(
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
    site(
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
    site(
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
    site(
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
    site(
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
    site(
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

    # -- key_error -----------------------------------------------------------------------------

    site(
        "set-price-key", "key_error", "catalog", "set_price",
        "dataclasses.replace(_PRODUCTS[key]", "dataclasses.replace(_PRODUCTS[sku]",
        "Price updates fail for SKUs not written in upper case",
        Witness("catalog", t("test_set_price_normalises_the_sku", f"""
            catalog.set_price({q(" " + a.sku.lower())}, 1500)
            assert catalog.get({q(a.sku)}).price_cents == 1500
        """, ("catalog",)), ("catalog",), True,
            f"Setting the price of {q(' ' + a.sku.lower())} fails with KeyError, although get() finds that product."),
        Witness("pricing", t("test_supplier_feed_with_lower_case_skus", f"""
            assert pricing.apply_price_list({q(" " + a.sku.lower() + " ;15.00")}) == 1
            assert pricing.quote({q(a.sku)}, 1).unit_cents == 1500
        """, ("pricing",)), ("pricing",), False,
            f"Importing today's supplier price list failed with KeyError: {q(a.sku.lower())}. The feed writes SKUs in lower case with "
            f"spaces around them ({q(' ' + a.sku.lower() + ' ;15.00')}); SKUs are case-insensitive everywhere else in the shop. "
            f"Expected the line to set the price of {a.sku} to 15.00."),
    )
    rp = w.reduced_product
    site(
        "reduced-rate-key", "key_error", "tax", "rate_for",
        'settings.get("reduced_rates_bp")', 'settings.get("reduced_vat_bp")',
        "VAT fails for products at the reduced rate",
        Witness("tax", t("test_reduced_rate_for_reduced_categories", f"""
            assert tax.rate_for({q(home)}, {q(rp.category)}) == {w.reduced[home]}
            assert tax.tax_on({rp.price}, {q(home)}, {q(rp.category)}) == {ref.pct(rp.price, w.reduced[home])}
        """, ("tax",)), ("tax",), True,
            f"Computing VAT for a {rp.category} product (a reduced-rate category) fails with KeyError: 'reduced_vat_bp'."),
        Witness("checkout", t("test_checkout_with_a_reduced_rate_product", f"""
            basket = cart.Cart({q(acc[0].email)})
            basket.add({q(rp.sku)})
            basket.add({q(a.sku)})
            result = checkout.totals(basket, {q(home)})
            assert result.tax_cents == {ref.checkout([(rp, 1), (a, 1)], home)[2]}
            assert result.total_cents == {ref.checkout([(rp, 1), (a, 1)], home)[4]}
        """, ("cart", "checkout")), ("checkout",), False,
            f"Checkout crashes with KeyError: 'reduced_vat_bp' for every cart that contains a {rp.category} product (for example "
            f"{rp.sku}); {rp.category} is taxed at the reduced rate. Carts without such products check out fine. Expected a cart "
            f"with {rp.sku} and {a.sku} to {home} to cost {ref.money(ref.checkout([(rp, 1), (a, 1)], home)[4])}."),
    )
    site(
        "coupon-key", "key_error", "discounts", "coupon_bp",
        "return COUPONS[key]", "return COUPONS[code]",
        "Coupons typed in lower case crash",
        Witness("discounts", t("test_coupon_codes_ignore_case_and_spaces", f"""
            assert discounts.coupon_bp({q(" " + code.lower() + " ")}) == {w.coupons[code]}
        """, ("discounts",)), ("discounts",), True,
            f"The coupon {q(' ' + code.lower() + ' ')} raises KeyError instead of granting the {code} discount."),
        Witness("checkout", t("test_coupon_in_lower_case_at_checkout", f"""
            basket = cart.Cart({q(acc[0].email)})
            basket.add({q(b.sku)}, 2)
            result = checkout.totals(basket, {q(home)}, coupon={q(code.lower())})
            assert result.coupon_cents == {ref.checkout([(b, 2)], home, coupon=code)[3]}
        """, ("cart", "checkout")), ("checkout",), False,
            f"Customers who type the coupon code in lower case ({q(code.lower())}) get an error page at checkout: KeyError: "
            f"{q(code.lower())}. Typed as {q(code)} it works. Coupon codes are meant to be case-insensitive."),
    )
    stock_a = w.stock[a.sku]
    site(
        "release-key", "key_error", "inventory", "release",
        "held = _reserved[key]", "held = _reserved[sku]",
        "Releasing stock fails for SKUs not in upper case",
        Witness("inventory", t("test_release_normalises_the_sku", f"""
            inventory.reserve({q(a.sku.lower())}, 2)
            assert inventory.release({q(a.sku.lower())}, 2) == {stock_a}
        """, ("inventory",)), ("inventory",), True,
            f"Releasing a reservation made as {q(a.sku.lower())} with the same SKU fails with KeyError: {q(a.sku.lower())}; the back "
            f"office types SKUs in lower case, and reserve() accepts them. Expected {stock_a} units available again."),
    )
    word = Ref.words(a.name)[0]
    site(
        "search-term-key", "key_error", "search", "search",
        "set(_INDEX.get(term, []))", "set(_INDEX[term])",
        "Searches with an unknown second word crash",
        Witness("search", t("test_unknown_second_word_finds_nothing", f"""
            assert search.search({q(word + " xylophonic")}) == []
        """, ("search",)), ("search",), True,
            f"Searching for {q(word + ' xylophonic')} fails with KeyError: 'xylophonic' instead of finding nothing."),
        Witness("search", t("test_suggestions_for_an_unknown_second_word", f"""
            assert search.suggest({q(word + " xylophonic")}) == []
            assert search.suggest({q(word)}, 1) != []
        """, ("search",)), ("search",), False,
            f"The autocomplete box returns a server error while customers type: suggestions for {q(word + ' xylophonic')} fail with "
            f"KeyError: 'xylophonic'. A single unknown word gives no suggestions, as it should. Expected no suggestions, not an error."),
    )
    gold_email = gold_acc.email
    mixed = " " + gold_email.split("@")[0].title() + "@" + gold_email.split("@")[1].upper() + " "
    points = 2599 // 100 * w.earn["gold"]
    site(
        "tier-email-key", "key_error", "users", "tier_of",
        '_users[normalise(email)]["tier"]', '_users[email]["tier"]',
        "Tiers cannot be looked up for e-mail addresses with capitals",
        Witness("users", t("test_tier_lookup_ignores_case", f"""
            assert users.tier_of({q(mixed)}) == "gold"
        """, ("users",)), ("users",), True,
            f"Looking up the tier of {q(mixed)} fails with KeyError, although login() accepts that address."),
        Witness("loyalty", t("test_points_for_an_address_with_capitals", f"""
            assert loyalty.earn({q(mixed)}, 2599) == {points}
            assert loyalty.balance({q(gold_email)}) == {points}
        """, ("loyalty",)), ("loyalty",), False,
            f"Loyalty points are not credited when the checkout form sends the e-mail address with capitals: earning points for "
            f"{q(mixed)} after a purchase of {ref.money(2599)} fails with KeyError: {q(mixed)}. The same customer can log in with that "
            f"address. Expected {points} points (gold rate) on {gold_email}."),
    )
    cancel_test = t("test_cancel_releases_stock_and_tells_the_customer", f"""
        basket = cart.Cart({q(acc[2].name)})
        basket.add({q(a.sku)}, 2)
        order = orders.place(basket, {q(acc[2].email)})
        notifications.drain()
        assert orders.cancel(order.id).status == "cancelled"
        assert inventory.available({q(a.sku)}) == {stock_a}
        mail = notifications.drain()
        assert mail[0]["body"] == f"Your order {{order.id}} was cancelled; {ref.money(ref.quote(a, 2)[1])} will be refunded."
    """, ("cart", "orders", "inventory", "notifications"))
    site(
        "cancel-template-field", "key_error", "orders", "cancel",
        "refund=refund)", "amount=refund)",
        "Cancelling an order fails",
        Witness("orders", cancel_test, ("orders",), True,
                f"Customers cannot cancel orders any more: cancelling {w.order_prefix}-00001 (2 × {a.sku}) fails with KeyError: 'refund'. "
                f"Expected the order to be cancelled, the 2 units back in stock and a cancellation mail announcing a refund of "
                f"{ref.money(ref.quote(a, 2)[1])}."),
    )

    # -- dependency_error ----------------------------------------------------------------------

    gross = a.price + ref.pct(a.price, w.vat[home])
    net = ref.div(gross * 10000, 10000 + w.vat[home])
    site(
        "split-gross-args", "dependency_error", "tax", "split_gross",
        "money.divide_round(gross_cents * 10000, 10000 + rate)", "money.divide_round(10000 + rate, gross_cents * 10000)",
        "VAT breakdowns of gross prices are wrong",
        Witness("tax", t("test_split_a_gross_price", f"""
            assert tax.split_gross({gross}, {q(home)}) == ({net}, {gross - net})
        """, ("tax",)), ("tax",), True,
            f"Invoices for tax-inclusive prices show the wrong VAT breakdown: a gross price of {ref.money(gross)} in {home} "
            f"(VAT {w.vat[home] / 100:g} %) comes out as net 0.00 and the whole amount as VAT. Expected net {ref.money(net)} and VAT "
            f"{ref.money(gross - net)}."),
    )
    site(
        "threshold-unit", "dependency_error", "shipping", "free_shipping_threshold",
        'settings.get("free_shipping_over") * 100', 'settings.get("free_shipping_over")',
        "Nearly every domestic order ships free",
        Witness("shipping", t("test_free_shipping_threshold_in_cents", f"""
            assert shipping.free_shipping_threshold() == {threshold}
        """, ("shipping",)), ("shipping",), True,
            f"The shop's free-shipping banner says shipping is free from {w.free_over / 100:.2f} {cur}; it should say "
            f"{ref.money(threshold)} (free_shipping_over = {w.free_over})."),
        Witness("shipping", t("test_small_domestic_orders_pay_shipping", f"""
            assert shipping.quote(1200, {q(home)}, subtotal_cents={threshold // 2}) == {ref.shipping(1200, home, threshold // 2)}
        """, ("shipping",)), ("shipping",), False,
            f"Finance noticed that almost no domestic order pays shipping any more: a 1.2 kg parcel to {home} with a subtotal of "
            f"{ref.money(threshold // 2)} is quoted 0, though free shipping starts at {ref.money(threshold)} (free_shipping_over = "
            f"{w.free_over}). Expected {ref.shipping(1200, home)} cents."),
        Witness("checkout", t("test_checkout_under_the_free_shipping_threshold", f"""
            settings.override(free_shipping_over={b.price // 100 + 1})
            basket = cart.Cart({q(acc[0].email)})
            basket.add({q(b.sku)})
            result = checkout.totals(basket, {q(home)})
            assert result.shipping_cents == {w.zone_base["domestic"] + -(-b.weight // 1000) * w.per_kg}
        """, ("cart", "checkout", "settings")), ("checkout",), False,
            f"Almost no domestic order pays shipping any more. With free shipping set to start at {b.price // 100 + 1} {cur} "
            f"(free_shipping_over = {b.price // 100 + 1}), checking out 1 × {b.sku} ({ref.money(b.price)}) to {home} shows shipping "
            f"0. Expected {w.zone_base['domestic'] + -(-b.weight // 1000) * w.per_kg} cents of shipping below the threshold."),
    )
    heavy = max(w.normal, key=lambda p: (p.weight, p.sku))
    heavy_totals = ref.checkout([(heavy, 3)], far)
    site(
        "checkout-shipping-args", "dependency_error", "checkout", "totals",
        "shipping.quote(basket.weight_g(), region, subtotal, express)", "shipping.quote(subtotal, region, basket.weight_g(), express)",
        "Checkout shipping does not follow the parcel weight",
        Witness("checkout", t("test_shipping_follows_the_parcel_weight", f"""
            basket = cart.Cart({q(acc[0].email)})
            basket.add({q(heavy.sku)}, 3)
            result = checkout.totals(basket, {q(far)})
            assert result.shipping_cents == {heavy_totals[1]}
            assert result.total_cents == {heavy_totals[4]}
        """, ("cart", "checkout")), ("checkout",), True,
            f"Shipping charged at checkout has nothing to do with the parcel: 3 × {heavy.sku} ({3 * heavy.weight} g) to {far} should "
            f"cost {ref.money(heavy_totals[1])} to ship (total {ref.money(heavy_totals[4])}), but checkout charges a different amount. "
            f"shipping.quote({3 * heavy.weight}, {q(far)}) on its own gives the right price."),
    )
    user = acc[0]
    site(
        "login-audit-args", "dependency_error", "users", "login",
        'audit.record("user.login", key)', 'audit.record(key, "user.login")',
        "Successful logins are missing from the audit trail",
        Witness("users", t("test_successful_logins_are_audited", f"""
            assert users.login({q(user.email)}, {q(user.password)}) is True
            assert [entry["actor"] for entry in audit.entries(action="user.login")] == [{q(user.email)}]
        """, ("users", "audit")), ("users",), True,
            f"Compliance found no successful logins in the audit trail: after {user.email} logs in, the entries with action "
            f"'user.login' are empty, while the trail has entries whose action is the e-mail address itself. Failed logins are "
            "recorded correctly."),
    )
    site(
        "retry-cap-unit", "dependency_error", "retry", "cap_ms",
        'settings.get("retry_cap_s") * 1000', 'settings.get("retry_cap_s")',
        "Retries never back off",
        Witness("retry", t("test_retry_cap_in_milliseconds", f"""
            assert retry.cap_ms() == {cap}
        """, ("retry",)), ("retry",), True,
            f"The retry dashboard shows a maximum backoff of {w.retry_cap_s} ms, though retry_cap_s is {w.retry_cap_s} "
            f"(seconds): expected {cap} ms."),
        Witness("retry", t("test_later_retries_back_off_further", f"""
            delays = [retry.backoff_ms(6, retry.seeded(seed)) for seed in range(30)]
            assert max(delays) > {base}
            assert max(delays) <= {cap}
        """, ("retry",)), ("retry",), False,
            f"Our payment provider throttled us for hammering them: retries never back off. Even the 6th retry waits at most "
            f"{w.retry_cap_s} ms, where the exponential backoff (base {base} ms, cap retry_cap_s = {w.retry_cap_s} s) should allow "
            f"delays of up to {cap} ms."),
    )
    site(
        "scheduler-delay-unit", "dependency_error", "scheduler", "Scheduler.failed",
        "job.next_ms = self.now_ms + delay_ms", "job.next_ms = self.now_ms + delay_ms * 1000",
        "Failed jobs are retried far too late",
        Witness("scheduler", t("test_failed_jobs_retry_within_the_cap", f"""
            jobs = scheduler.Scheduler(retry.seeded(5))
            names = [f"job-{{number}}" for number in range(8)]
            for name in names:
                jobs.add(name, 3600)
                jobs.failed(name)
            assert jobs.advance({cap}) == sorted(names)
        """, ("scheduler", "retry")), ("scheduler",), True,
            f"Background jobs that fail once are retried hours later instead of after a short backoff: eight hourly jobs that each "
            f"failed once are not due again after {cap} ms, the longest retry delay (retry_cap_s = {w.retry_cap_s})."),
    )
    site(
        "cancel-release-args", "dependency_error", "orders", "cancel",
        "inventory.release(line.sku, line.quantity)", "inventory.release(line.quantity, line.sku)",
        "Cancelling an order crashes",
        Witness("orders", cancel_test, ("orders",), True,
                f"Customers cannot cancel orders any more: cancelling an order of 2 × {a.sku} fails with AttributeError: 'int' object "
                f"has no attribute 'strip'. Expected the order to be cancelled, the 2 units back in stock ({stock_a} available) and a "
                "cancellation mail."),
    )

    site(
        "renamed-format-payments", "dependency_error", "payments", "refund_note",
        "money.format_cents(-cents, CURRENCY)", "money.format_amount(-cents, CURRENCY)",
        "Refund notes cannot be printed",
        Witness("payments", refund_test, ("payments",), True,
                f"Refund notes fail since the money helpers were tidied up: printing the note for a refund of {ref.money(refund)} on R-9 "
                f"raises AttributeError: module '{w.pkg}.money' has no attribute 'format_amount'. Expected "
                f"{q('Refund for R-9: ' + ref.money(-refund))}."),
    )
    revenue = ref.quote(a, 3)[1] + ref.quote(b, 1)[1] + ref.quote(c, 2)[1]
    site(
        "renamed-format-reports", "dependency_error", "reports", "revenue_line",
        "money.format_cents(total, CURRENCY)", "money.format_amount(total, CURRENCY)",
        "The revenue line of the dashboard fails",
        Witness("reports", t("test_revenue_line", f"""
            first = cart.Cart({q(acc[0].name)})
            first.add({q(a.sku)}, 3)
            first.add({q(b.sku)})
            orders.place(first, {q(acc[0].email)})
            second = cart.Cart({q(acc[1].name)})
            second.add({q(c.sku)}, 2)
            orders.place(second, {q(acc[1].email)})
            assert reports.revenue_line() == {q(f"2 orders, {ref.money(revenue)}")}
        """, ("cart", "orders", "reports")), ("reports",), True,
            f"The back-office dashboard shows an error instead of the day's revenue: with two orders placed (3 × {a.sku} and "
            f"1 × {b.sku}, then 2 × {c.sku}) the revenue line raises AttributeError: module '{w.pkg}.money' has no attribute "
            f"'format_amount'. Expected {q(f'2 orders, {ref.money(revenue)}')}."),
    )

    # -- state_corruption ----------------------------------------------------------------------

    standard = ref.shipping(1200, home)
    site(
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
    site(
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
    site(
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
    site(
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
    site(
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
    site(
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
    site(
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
    site(
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

    # -- stochastic_bug ------------------------------------------------------------------------

    site(
        "backoff-exponent", "stochastic_bug", "retry", "backoff_ms",
        'settings.get("retry_base_ms") * 2 ** (attempt - 1)', 'settings.get("retry_base_ms") * 2 ** attempt',
        "Retries wait longer than the backoff allows",
        Witness("retry", t("test_first_retry_waits_at_most_the_base_delay", f"""
            delays = [retry.backoff_ms(1, retry.seeded(seed)) for seed in range(40)]
            assert max(delays) <= {base}
            assert min(delays) >= 0
        """, ("retry",)), ("retry",), True,
            f"The first retry sometimes waits longer than the base delay of {base} ms."),
        Witness("payments", t("test_one_timeout_costs_at_most_the_base_delay", f"""
            waited = [payments.charge(payments.Gateway(failures=1), f"R-{{seed}}", 1000, retry.seeded(seed)).waited_ms for seed in range(30)]
            assert max(waited) <= {base}
        """, ("payments", "retry")), ("payments",), False,
            f"Checkout latency alerts: payments whose first capture times out wait up to about twice the configured retry base delay "
            f"({base} ms) before the second attempt, on some requests but not others. Expected the first retry to wait between 0 and "
            f"{base} ms."),
        Witness("scheduler", t("test_a_job_failing_once_is_due_within_the_base_delay", f"""
            for seed in range(25):
                jobs = scheduler.Scheduler(retry.seeded(seed))
                jobs.add({q(j1)}, 3600)
                jobs.failed({q(j1)})
                assert jobs.advance({base}) == [{q(j1)}]
        """, ("scheduler", "retry")), ("scheduler",), False,
            f"Some background jobs that failed once are not retried within the base retry delay ({base} ms): depending on the run, "
            f"the {j1} job is still not due {base} ms after its failure."),
    )
    full = w.flags[2]
    site(
        "bucket-bound", "stochastic_bug", "rollout", "bucket",
        "return rng.randrange(100)", "return rng.randint(0, 100)",
        "A fully rolled-out flag misses some users",
        Witness("rollout", t("test_a_full_rollout_reaches_everyone", f"""
            users = [f"user{{number}}@example.org" for number in range(1200)]
            assert rollout.enabled_users({q(full)}, users) == users
        """, ("rollout",)), ("rollout",), False,
            f"The {full} feature is rolled out to 100 % of users, yet support gets tickets from a few customers who never see it "
            f"(about one in a hundred, always the same ones). Expected every user to have it."),
    )
    staff = list(w.staff)
    site(
        "rota-index", "stochastic_bug", "sampling", "one",
        "items[rng.randrange(len(items))]", "items[rng.randint(0, len(items))]",
        "The QA rota crashes now and then",
        Witness("sampling", t("test_rota_covers_every_day", f"""
            staff = {lit(staff)}
            for seed in range(3):
                plan = sampling.rota(staff, 60, sampling.seeded(seed))
                assert len(plan) == 60
                assert set(plan) <= set(staff)
        """, ("sampling",)), ("sampling",), False,
            "Planning the quality-control rota fails with IndexError: list index out of range for some seeds, for example "
            f"a 60-day rota over {len(staff)} people; other seeds work. Expected a person for every day."),
    )
    site(
        "spot-check-bound", "stochastic_bug", "sampling", "spot_check",
        "rng.randrange(100) < rate_pct", "rng.randrange(100) <= rate_pct",
        "Spot checks run when they are switched off",
        Witness("sampling", t("test_a_zero_rate_spot_check_takes_nothing", """
            parcels = [f"P{number:04d}" for number in range(1000)]
            assert sampling.spot_check(parcels, 0, sampling.seeded(5)) == []
        """, ("sampling",)), ("sampling",), True,
            "The warehouse set the spot-check rate to 0 percent to pause manual checks, yet a batch of 1000 parcels still had about "
            "ten picked for checking. Expected none at 0 percent."),
    )
    return out
