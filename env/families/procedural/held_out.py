"""Held-out tests and the lookup-table overfit of a generated task (issue 32).

    other = rotate(world)                                   # the same service, other roles for its entities
    candidates = held_out_tests(world, kinds, visible)      # {kind: [Test]}: the visible tests' paths, other inputs
    held_out_file("pricing")                                # "tests/test_pricing_other_inputs.py"
    table = overfit_source(buggy, gold, "Cart.add", keys)   # the fault's module fixed only for the visible inputs

Held-out tests drive other inputs of the task's own world through the same service paths as the visible
tests: every visible test (each kind's own tests and every present site's witnesses, by the visible rule)
is built again from ``rotate(world)``, a world of the same service whose entities swap roles (product a
is the old b, the first customer the old second, the two EU regions and the two double categories trade
places, the jobs, staff and coupons turn), so a test written for "product a at the volume break" now
quotes another product. Expected values still come from ``Ref`` of that world, never from running the
code. A rebuilt test whose code is the visible one's (its inputs do not depend on roles) is left out;
the sites whose witnesses are all such tests add explicit held-out witnesses (``EXTRA``) at other
thresholds and sizes. Each held-out test is named ``<visible name>_other_inputs`` and lives in
``tests/test_<kind>_other_inputs.py``, a file that exists only in the task's ``test_patch.diff``.

The overfit is a "fix" fitted to the visible tests: the faulty function dispatches on its arguments
(as plain data: numbers, strings, containers, objects as their class name and fields) to the gold code
when the visible tests call it with exactly those arguments, and to the buggy code otherwise. The
argument table is recorded by running the visible tests on the gold files with the function
instrumented (``recording_source``); validation proves the overfit passes every visible test and
fails at least one held-out FAIL_TO_PASS test.
"""

from __future__ import annotations

import ast
import dataclasses
import random
import threading
from collections.abc import Iterable

from env.families.procedural import blocks, bugs
from env.families.procedural.blocks import KINDS, Test, World, closure, lit, q, t
from env.families.procedural.bugs.injection import function_node
from env.families.procedural.bugs.site import Witness
from env.process_state import process_wide
from env.pyparse import parse

SUFFIX = "_other_inputs"


def held_out_file(kind: str) -> str:
    return f"tests/test_{kind}{SUFFIX}.py"


def held_out_id(kind: str, test: Test) -> str:
    return f"{held_out_file(kind)}::{test.name}"


# -- the world with its entities in other roles -------------------------------------------------


def rotate(w: World) -> World:
    """The same service (every constant the code holds is unchanged), its entities in other roles.

    Only what the service treats alike is permuted: the three main standard-rate products (the two
    low-stock ones keep their role), the customers (each keeps its tier and password), the two EU
    regions, the two categories holding two products, the jobs, the staff and the coupons' order.
    """
    normal = list(w.normal)
    normal = normal[1:3] + normal[:1] + normal[3:]
    reduced = [p for p in w.products if p.category == w.reduced_category]
    r = w.regions
    return dataclasses.replace(
        w,
        products=tuple(normal + reduced),
        accounts=w.accounts[1:] + w.accounts[:1],
        regions=(r[0], r[2], r[1], r[3]),
        doubles=(w.doubles[1], w.doubles[0]),
        jobs=w.jobs[1:] + w.jobs[:1],
        staff=w.staff[1:] + w.staff[:1],
        coupons=dict(reversed(list(w.coupons.items()))),
    )


def _extra(w: World, draw: random.Random) -> dict[str, list[Witness]]:
    """Held-out witnesses of the sites whose visible witnesses take no role of the world (``rotate`` leaves them as
    they are): the same service paths at other sizes, thresholds, regions, seeds and entries, and, for a function
    that takes no argument, from another state of its module (a table of the visible calls' keys misses it).

    ``draw`` (seeded from the task's key, salted when the task is) picks the sizes, seeds and names, so with a salt
    these inputs too are unknown to whoever lacks it."""
    ref = blocks.Ref(w)
    home, eu = w.home, w.regions[1]
    threshold = w.free_over * 100
    heavy = draw.randrange(1200, 4800, 100)  # kilos started, where the visible test sends 800 g
    tag = draw.choice("abcdefghjkmnpqrstuvwxyz")
    keys = tuple(f"{tag}{draw.randint(10, 99)}{number}" for number in range(5))
    first_retry, tenth_retry, daily, spot, people = (draw.randrange(100, 9000) for _ in range(5))
    counts = (draw.randint(2, 9), draw.randint(2, 9))
    restock = draw.randint(5, 40)
    rp = w.reduced_product
    silver = next(x for x in w.accounts if x.tier == "silver")
    cap, base = w.retry_cap_s * 1000, w.retry_base_ms
    lows = sorted(p.sku for p in w.low)
    amount = rp.price * 3 + 7

    def one(site: str, kind: str, name: str, body: str, uses: tuple[str, ...]) -> tuple[str, Witness]:
        return site, Witness(kind, t(name, body, uses), (kind,), True, "")

    found: dict[str, list[Witness]] = {}
    for site, witness in [
        one("cache-capacity", "cache", "test_cache_of_five_holds_five", f"""
            wide = cache.Cache("test-five", 5)
            for key in {lit(keys)}:
                wide.put(key, key.upper())
            assert len(wide) == 5
            assert [wide.get(key) for key in {lit(keys)}] == {lit([k.upper() for k in keys])}
        """, ("cache",)),
        one("free-shipping-boundary", "shipping", "test_heavy_parcel_ships_free_at_the_threshold", f"""
            assert shipping.quote({heavy}, {q(home.lower())}, subtotal_cents={threshold}) == 0
            assert shipping.quote({heavy}, {q(home)}, subtotal_cents={threshold - 1}) == {ref.shipping(heavy, home, threshold - 1)}
        """, ("shipping",)),
        one("outbox-limit", "notifications", "test_outbox_refuses_the_one_message_too_many", f"""
            for number in range({w.outbox_limit}):
                notifications.send(f"buyer{{number}}@example.net", "back_in_stock", product={q(w.b.name)})
            with pytest.raises(notifications.OutboxFull):
                notifications.send("one.more@example.net", "back_in_stock", product={q(w.b.name)})
        """, ("notifications",)),
        one("reduced-rate-key", "tax", "test_reduced_rate_in_a_neighbouring_region", f"""
            assert tax.rate_for({q(eu)}, {q(rp.category)}) == {w.reduced[eu]}
            assert tax.tax_on({amount}, {q(eu)}, {q(rp.category)}) == {ref.pct(amount, w.reduced[eu])}
        """, ("tax",)),
        one("tier-email-key", "users", "test_tier_lookup_of_a_silver_address_in_capitals", f"""
            assert users.tier_of({q(silver.email.upper())}) == "silver"
        """, ("users",)),
        one("redeem-all", "loyalty", "test_a_silver_customer_redeems_every_point", f"""
            loyalty.earn({q(silver.email)}, {w.redeem_step * 50})
            have = loyalty.balance({q(silver.email)})
            assert have == {w.redeem_step // 2 * w.earn["silver"]}
            assert loyalty.redeem({q(silver.email)}, have) == have // {w.redeem_step} * {w.voucher_cents}
            assert loyalty.balance({q(silver.email)}) == 0
        """, ("loyalty",)),
        one("backoff-exponent", "retry", "test_first_retries_of_other_requests_wait_at_most_the_base_delay", f"""
            delays = [retry.backoff_ms(1, retry.seeded(seed)) for seed in range({first_retry}, {first_retry + 60})]
            assert max(delays) <= {base}
        """, ("retry",)),
        one("retry-cap-unit", "retry", "test_the_tenth_retry_backs_off_up_to_the_cap", f"""
            delays = [retry.backoff_ms(10, retry.seeded(seed)) for seed in range({tenth_retry}, {tenth_retry + 40})]
            assert max(delays) > {base}
            assert max(delays) <= {cap}
        """, ("retry",)),
        one("scheduler-delay-unit", "scheduler", "test_failed_daily_jobs_retry_within_the_cap", f"""
            jobs = scheduler.Scheduler(retry.seeded({daily}))
            names = [f"daily-{{number}}" for number in range(5)]
            for name in names:
                jobs.add(name, 86400)
                jobs.failed(name)
            assert jobs.advance({cap}) == sorted(names)
        """, ("scheduler", "retry")),
        one("low-stock-default", "inventory", "test_low_stock_is_the_same_the_third_time_after_a_delivery", f"""
            inventory.restock({q(w.a.sku)}, {restock})
            inventory.low_stock()
            inventory.low_stock()
            assert inventory.low_stock() == {lit(lows)}
        """, ("inventory",)),
        one("bucket-bound", "rollout", "test_a_full_rollout_reaches_every_customer", f"""
            customers = [f"customer{{number}}@example.net" for number in range({people}, {people + 900})]
            assert rollout.enabled_users({q(w.flags[2])}, customers) == customers
        """, ("rollout",)),
        one("spot-check-bound", "sampling", "test_a_zero_rate_takes_no_parcel_of_another_batch", f"""
            parcels = [f"{tag.upper()}{{number:05d}}" for number in range(800)]
            assert sampling.spot_check(parcels, 0, sampling.seeded({spot})) == []
        """, ("sampling",)),
        one("snapshot-alias", "settings", "test_clearing_a_snapshot_of_changed_settings_leaves_them", f"""
            settings.override(currency={q(w.other_currency)})
            mine = settings.snapshot()
            mine.clear()
            assert settings.get("currency") == {q(w.other_currency)}
        """, ("settings",)),
        one("cart-default-lines", "cart", "test_carts_of_two_guests_start_empty", f"""
            first = cart.Cart("guest{people}@example.net")
            first.add({q(w.b.sku)}, {counts[0]})
            second = cart.Cart("guest{people + 1}@example.net", "silver")
            assert second.item_count() == 0
            assert second.lines == []
        """, ("cart",)),
        # No argument and no state of its own: a table of the visible calls is the fix here, but a table of the visible
        # answers (a constant) fails once the setting it reads has changed.
        one("threshold-unit", "shipping", "test_free_shipping_threshold_follows_its_setting", f"""
            settings.override(free_shipping_over={w.free_over + counts[0]})
            assert shipping.free_shipping_threshold() == {(w.free_over + counts[0]) * 100}
        """, ("shipping", "settings")),
        one("retry-cap-unit", "retry", "test_retry_cap_follows_its_setting", f"""
            settings.override(retry_cap_s={w.retry_cap_s + counts[1]})
            assert retry.cap_ms() == {(w.retry_cap_s + counts[1]) * 1000}
        """, ("retry", "settings")),
        one("metrics-reset", "metrics", "test_reset_clears_a_busy_counter", f"""
            metrics.incr("held.orders", {counts[0]})
            metrics.incr("held.orders", {counts[1]})
            metrics.reset()
            assert metrics.value("held.orders") == 0
        """, ("metrics",)),
    ]:
        found.setdefault(site, []).append(witness)
    return found


# -- the held-out tests -----------------------------------------------------------------------------


def held_out_tests(
    w: World, kinds: frozenset[str], visible: dict[str, list[Test]], other_sites: list[bugs.Site], reaching: str, seed_text: str,
) -> dict[str, list[Test]]:
    """Per kind, the held-out tests: the visible suite rebuilt from ``rotate(w)`` where that changes a test's inputs,
    and the explicit held-out witnesses of every present site whose visible witnesses it cannot change, each kept
    only when the modules it imports reach the kind ``reaching`` (the fault's): the paths a fix can change. A test
    that cannot reach the fault passes on any fix of it and would only cost time.

    ``other_sites`` is ``bugs.sites(rotate(w))``; ``visible`` the tests of the visible suite as drawn (before any is
    dropped); ``seed_text`` the task's (salted when it is), from which the explicit witnesses' inputs are drawn.
    """
    other = rotate(w)
    present = blocks.ordered(kinds)
    found: dict[str, dict[str, Test]] = {k: {} for k in present}
    seen = {(k, test.body) for k, tests in visible.items() for test in tests}

    def add(kind: str, test: Test) -> None:
        if (kind, test.body) in seen or reaching not in closure(set(test.uses) | {kind}):
            return  # the same inputs as a visible test, or a path that never runs the fault's module
        renamed = Test(test.name + SUFFIX, test.body, test.uses, test.raises)
        if found[kind].setdefault(renamed.name, renamed) != renamed:
            raise ValueError(f"two different held-out tests named {renamed.name}")

    for k in present:
        for test in KINDS[k].build(other, kinds).tests:
            add(k, test)
    extra = _extra(w, random.Random(f"{seed_text}|held-out"))
    for site in other_sites:
        if site.kind in kinds:
            for witness in site.carried(kinds):
                add(witness.kind, witness.test)
            for witness in extra.get(site.id, []):
                if closure(witness.needs) <= kinds:
                    add(witness.kind, witness.test)
    return {k: [found[k][name] for name in sorted(found[k])] for k in present if found[k]}


# -- the overfit --------------------------------------------------------------------------------

# The argument table's key, as code: the same text in the recording module and in the overfit.
_INPUTS = '''
def _inputs(args, kwargs):
    """A call's arguments and this module's own state as plain data: the lookup table's key."""
    import hashlib

    def plain(value, depth):
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        if depth > 5:
            return type(value).__name__
        if isinstance(value, (list, tuple)):
            return [plain(item, depth + 1) for item in value]
        if isinstance(value, (set, frozenset)):
            return sorted((plain(item, depth + 1) for item in value), key=repr)
        if isinstance(value, dict):
            return sorted(([plain(k, depth + 1), plain(v, depth + 1)] for k, v in value.items()), key=repr)
        if callable(getattr(value, "getstate", None)):  # a random generator: where its sequence stands
            return [type(value).__name__, hashlib.sha256(repr(value.getstate()).encode()).hexdigest()[:16]]
        fields = getattr(value, "__dict__", None)
        if isinstance(fields, dict):
            return [type(value).__name__, plain(fields, depth + 1)]
        return type(value).__name__

    state = {name: value for name, value in globals().items()
             if name.startswith("_") and not name.startswith("__") and name != "_FIXED_INPUTS"
             and isinstance(value, (bool, int, float, str, list, tuple, set, dict))}
    return repr([plain(list(args), 0), plain(kwargs, 0), plain(state, 0)])
'''

class Recorded:
    """The keys recorded per token until taken."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._keys: dict[str, set[str]] = {}

    def add(self, token: str, key: str) -> None:
        with self._lock:
            self._keys.setdefault(token, set()).add(key)

    def take(self, token: str) -> list[str]:
        with self._lock:
            return sorted(self._keys.pop(token, set()))


# The recording module reaches it by this module's name, from generated code in this process (env.process_state).
_RECORDED = process_wide("held_out_records", Recorded)


def record(token: str, key: str) -> None:
    """Called by the recording module (in the validation's process): one call's key."""
    _RECORDED.add(token, key)


def take(token: str) -> list[str]:
    """The keys recorded under ``token``, sorted, forgotten here."""
    return _RECORDED.take(token)


def _span(tree: ast.AST, dotted: str) -> tuple[int, int, int]:
    """(first line, last line, indent) of a function or method, 0-based lines."""
    node = function_node(tree, dotted)
    assert isinstance(node, ast.FunctionDef)
    first = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
    return first, (node.end_lineno or node.lineno), node.col_offset


def _renamed(source: str, dotted: str, prefix: str) -> str:
    """The function's text, its name prefixed."""
    lines = source.splitlines(keepends=True)
    first, last, _ = _span(parse(source), dotted)
    name = dotted.split(".")[-1]
    text = "".join(lines[first:last])
    return text.replace(f"def {name}(", f"def {prefix}{name}(", 1)


def _dispatcher(dotted: str, indent: str, body: list[str]) -> str:
    name = dotted.split(".")[-1]
    method = "." in dotted
    head = f"{indent}def {name}(self, *args, **kwargs):" if method else f"{indent}def {name}(*args, **kwargs):"
    call = "self._{which}_" + name if method else "_{which}_" + name
    out = [head]
    for line in body:
        line = line.replace("{fixed}", call.format(which="fixed")).replace("{old}", call.format(which="old"))
        # A method's key holds the object it is called on too.
        line = line.replace("_inputs(args, kwargs)", "_inputs((self, *args), kwargs)") if method else line
        out.append(indent + "    " + line if line else "")
    return "\n".join(out) + "\n"


def _with(buggy: str, gold: str, dotted: str, body: list[str], tail: str) -> str:
    lines = buggy.splitlines(keepends=True)
    first, last, col = _span(parse(buggy), dotted)
    indent = " " * col
    old = _renamed(buggy, dotted, "_old_")
    fixed = _renamed(gold, dotted, "_fixed_")
    gap = "\n" if "." in dotted else "\n\n"  # one blank line between methods, two between functions
    joined = "".join(lines[:first]) + old + gap + fixed + gap + _dispatcher(dotted, indent, body) + "".join(lines[last:])
    out = joined.rstrip("\n") + "\n\n\n" + tail
    parse(out)  # still Python
    return out


def recording_source(buggy: str, gold: str, dotted: str, token: str) -> str:
    """The fault's module running the gold code, recording every call's arguments (validation only)."""
    body = [
        "from env.families.procedural.held_out import record",
        "",
        f"record({q(token)}, _inputs(args, kwargs))",
        "return {fixed}(*args, **kwargs)",
    ]
    return _with(buggy, gold, dotted, body, _INPUTS.lstrip("\n"))


def overfit_source(buggy: str, gold: str, dotted: str, keys: Iterable[str]) -> str:
    """The fault's module "fixed" only for the inputs the visible tests pass: a lookup table of the visible tests."""
    body = [
        "# Fixed for the inputs in the tests; the old code everywhere else.",
        "if _inputs(args, kwargs) in _FIXED_INPUTS:",
        "    return {fixed}(*args, **kwargs)",
        "return {old}(*args, **kwargs)",
    ]
    rows = "".join(f"    {q(key)},\n" for key in sorted(set(keys)))
    table = f"_FIXED_INPUTS = frozenset({{\n{rows}}})\n" if rows else "_FIXED_INPUTS: frozenset[str] = frozenset()\n"
    return _with(buggy, gold, dotted, body, _INPUTS.lstrip("\n") + "\n\n" + table)
