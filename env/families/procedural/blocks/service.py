"""The kinds of a service together: the table of every kind (``KINDS``, in dependency order), closures
over their imports, and the files that span kinds (a kind's test file, the README).

    module = KINDS["pricing"].build(world, present)      # Module(source=..., tests=[Test, ...])
    closure(["checkout"])                                # checkout and everything it imports
"""

from __future__ import annotations

from env.families.procedural.blocks.kinds import (
    audit,
    cache,
    cart,
    catalog,
    checkout,
    discounts,
    inventory,
    loyalty,
    metrics,
    models,
    money,
    notifications,
    orders,
    payments,
    pricing,
    reports,
    retry,
    rollout,
    sampling,
    scheduler,
    search,
    settings,
    shipping,
    tax,
    users,
)
from env.families.procedural.blocks.world import Kind, Test, World

# Dependencies first: this order is a topological order of the import DAG.
KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind("settings", (), True, "runtime settings: defaults, overrides, snapshots", settings.build),
        Kind("money", (), False, "integer-cent arithmetic, rounding and display", money.build),
        Kind("models", (), False, "the product and order-line records", models.build),
        Kind("metrics", (), True, "in-process counters", metrics.build),
        Kind("audit", (), True, "the audit trail", audit.build),
        Kind("cache", ("metrics",), False, "a least-recently-used cache with hit/miss counters", cache.build),
        Kind("catalog", ("models",), True, "the product catalog, by SKU", catalog.build),
        Kind("tax", ("settings", "money"), False, "VAT rates per region and the tax on an amount", tax.build),
        Kind("shipping", ("settings",), False, "shipping costs per zone and weight", shipping.build),
        Kind("discounts", ("money",), False, "tier, volume and coupon discounts", discounts.build),
        Kind("retry", ("settings",), False, "retries with exponential backoff and jitter", retry.build),
        Kind("rollout", ("settings",), False, "feature flags rolled out to a share of users", rollout.build),
        Kind("sampling", ("metrics",), False, "random quality-control sampling", sampling.build),
        Kind("inventory", ("catalog", "settings"), True, "stock on hand and reservations", inventory.build),
        Kind("pricing", ("catalog", "discounts", "cache", "money"), True, "quotes and cached price lists", pricing.build),
        Kind("cart", ("pricing", "catalog"), False, "shopping carts", cart.build),
        Kind("search", ("catalog", "cache"), True, "product search with cached results", search.build),
        Kind("users", ("settings", "audit"), True, "customer accounts, login and lockout", users.build),
        Kind("notifications", ("settings",), True, "the outgoing mail outbox", notifications.build),
        Kind("checkout", ("cart", "tax", "shipping", "discounts", "money"), False, "what a cart costs, VAT and shipping included", checkout.build),
        Kind("orders", ("cart", "inventory", "audit", "notifications", "money", "pricing"), True, "placing and cancelling orders", orders.build),
        Kind("payments", ("money", "retry", "audit"), False, "card payments, fees and instalments", payments.build),
        Kind("loyalty", ("users", "money"), True, "loyalty points", loyalty.build),
        Kind("reports", ("orders", "metrics", "inventory", "catalog", "money"), False, "back-office reports", reports.build),
        Kind("scheduler", ("retry", "metrics"), False, "background jobs with retries", scheduler.build),
    )
}
ORDER = tuple(KINDS)


def closure(kinds: list[str] | tuple[str, ...] | set[str] | frozenset[str]) -> frozenset[str]:
    """``kinds`` and everything they import, transitively."""
    found: set[str] = set()
    stack = sorted(kinds)
    while stack:
        kind = stack.pop()
        if kind not in found:
            found.add(kind)
            stack.extend(KINDS[kind].deps)
    return frozenset(found)


def ordered(kinds: frozenset[str] | set[str]) -> list[str]:
    """``kinds`` in dependency order."""
    return [k for k in ORDER if k in kinds]


def test_file(w: World, kind: str, tests: list[Test]) -> str:
    """The test file of one kind: imports, the fresh-state helper, the tests."""
    uses = sorted({u for test in tests for u in test.uses} | {kind})
    stateful = [k for k in ordered(closure(uses)) if KINDS[k].stateful]
    lines = [f'"""Tests of {w.pkg}.{kind}."""', ""]
    if any(test.raises for test in tests):
        lines += ["import pytest", ""]
    lines += [f"from {w.pkg} import {', '.join(sorted(set(uses) | set(stateful)))}", ""]
    if stateful:
        lines += ["", "def fresh():", '    """Every test starts from the initial state of the service."""']
        lines += [f"    {k}.reset()" for k in stateful]
        lines.append("")
    for test in tests:
        lines += ["", test.source(bool(stateful))]
    return "\n".join(lines).rstrip("\n") + "\n"


def readme(w: World, kinds: list[str]) -> str:
    rows = "\n".join(f"- `{w.pkg}/{k}.py`: {KINDS[k].summary}" for k in kinds)
    return (
        f"# {w.pkg}\n\nThe back end of an online {w.theme.shop}.\n\n{rows}\n\n"
        "The package never configures logging; the process that runs it does.\n\n"
        "Run the tests with `python -m pytest`.\n"
    )
