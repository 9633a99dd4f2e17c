"""Where a dependency error (dependency_error) goes into the gold code, and the tests that reveal it.

A call into another module with arguments swapped or in the wrong unit, or to a function under a
name it no longer has (AttributeError when the call runs).

Each site comes with its witnesses: the tests that fail on it and the incident report each stands for.
"""

from __future__ import annotations

from env.families.procedural.blocks import Ref, World, q, t
from env.families.procedural.bugs.shared import cancel_order_test, refund_cents, refund_note_test
from env.families.procedural.bugs.site import Site, Sites, Witness


def sites(w: World) -> list[Site]:
    """Every dependency_error site of a service drawn as ``w`` (whatever kinds it holds), in a fixed order
    (generation picks sites by index, so the order is part of the output)."""
    ref = Ref(w)
    cur = w.currency
    a, b, c = w.a, w.b, w.normal[2]
    home, far = w.home, w.regions[3]
    acc = w.accounts
    threshold = w.free_over * 100
    base, cap = w.retry_base_ms, w.retry_cap_s * 1000
    out = Sites()

    gross = a.price + ref.pct(a.price, w.vat[home])
    net = ref.div(gross * 10000, 10000 + w.vat[home])
    out.add(
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
    out.add(
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
    out.add(
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
    out.add(
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
    out.add(
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
    out.add(
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
    stock_a = w.stock[a.sku]
    cancel_test = cancel_order_test(w)
    out.add(
        "cancel-release-args", "dependency_error", "orders", "cancel",
        "inventory.release(line.sku, line.quantity)", "inventory.release(line.quantity, line.sku)",
        "Cancelling an order crashes",
        Witness("orders", cancel_test, ("orders",), True,
                f"Customers cannot cancel orders any more: cancelling an order of 2 × {a.sku} fails with AttributeError: 'int' object "
                f"has no attribute 'strip'. Expected the order to be cancelled, the 2 units back in stock ({stock_a} available) and a "
                "cancellation mail."),
    )
    refund = refund_cents(w)
    refund_test = refund_note_test(w)
    out.add(
        "renamed-format-payments", "dependency_error", "payments", "refund_note",
        "money.format_cents(-cents, CURRENCY)", "money.format_amount(-cents, CURRENCY)",
        "Refund notes cannot be printed",
        Witness("payments", refund_test, ("payments",), True,
                f"Refund notes fail since the money helpers were tidied up: printing the note for a refund of {ref.money(refund)} on R-9 "
                f"raises AttributeError: module '{w.pkg}.money' has no attribute 'format_amount'. Expected "
                f"{q('Refund for R-9: ' + ref.money(-refund))}."),
    )
    revenue = ref.quote(a, 3)[1] + ref.quote(b, 1)[1] + ref.quote(c, 2)[1]
    out.add(
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
    return out.found
