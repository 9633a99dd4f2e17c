"""Where a key error (key_error) goes into the gold code, and the tests that reveal it.

A stale or non-normalised dict key: KeyError at runtime, raised where the dict is read.

Each site comes with its witnesses: the tests that fail on it and the incident report each stands for.
"""

from __future__ import annotations

from env.families.procedural.blocks import Ref, World, q, t
from env.families.procedural.bugs.shared import cancel_order_test
from env.families.procedural.bugs.site import Site, Sites, Witness


def sites(w: World) -> list[Site]:
    """Every key_error site of a service drawn as ``w`` (whatever kinds it holds), in a fixed order
    (generation picks sites by index, so the order is part of the output)."""
    ref = Ref(w)
    a, b = w.a, w.b
    home = w.home
    acc = w.accounts
    code = list(w.coupons)[0]
    gold_acc = next(x for x in acc if x.tier == "gold")
    out = Sites()

    out.add(
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
    out.add(
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
    out.add(
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
    out.add(
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
    out.add(
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
    out.add(
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
    cancel_test = cancel_order_test(w)
    out.add(
        "cancel-template-field", "key_error", "orders", "cancel",
        "refund=refund)", "amount=refund)",
        "Cancelling an order fails",
        Witness("orders", cancel_test, ("orders",), True,
                f"Customers cannot cancel orders any more: cancelling {w.order_prefix}-00001 (2 × {a.sku}) fails with KeyError: 'refund'. "
                f"Expected the order to be cancelled, the 2 units back in stock and a cancellation mail announcing a refund of "
                f"{ref.money(ref.quote(a, 2)[1])}."),
    )
    return out.found
