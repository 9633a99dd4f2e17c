"""The building blocks of a generated service: 25 kinds of module, each real code with its own tests.

    world = draw_world(random.Random("seed"))            # names, SKUs, rates, thresholds of one service
    module = KINDS["pricing"].build(world, present)      # Module(source=..., tests=[Test, ...])
    closure(["checkout"])                                # checkout and everything it imports

A kind is one module of an online shop's back end (settings, catalog, pricing, orders, retry ...):
its code imports and calls the kinds in ``deps`` (``from <pkg> import catalog``), so any
dependency-closed set of kinds is a connected import DAG; state shared between modules lives in
module-level registries (catalog, inventory, settings, metrics, audit ...) that tests reset through
each stateful module's ``reset()``. Every module logs through ``logging.getLogger(__name__)`` and
never configures logging. Only the standard library is used.

Expected values in tests are computed from the world by the small reference arithmetic of
``world.Ref``, never by running the generated code.

The parts: ``world`` (the world model, the shared types and text helpers), ``kinds`` (one module
per kind), ``service`` (the table of kinds, closures, test files, the README). This package
re-exports the names the generator, the defects and the tests use.
"""

from __future__ import annotations

from env.families.procedural.blocks.service import KINDS, ORDER, closure, ordered, readme, test_file
from env.families.procedural.blocks.world import (
    COUPON_WORDS,
    CURRENCIES,
    FLAGS,
    JOBS,
    PASSWORD_WORDS,
    PEOPLE,
    REGIONS,
    THEMES,
    Account,
    Kind,
    Module,
    Product,
    Ref,
    Test,
    Theme,
    World,
    block,
    draw_world,
    lit,
    q,
    render,
    t,
)

__all__ = [
    "COUPON_WORDS",
    "CURRENCIES",
    "FLAGS",
    "JOBS",
    "KINDS",
    "ORDER",
    "PASSWORD_WORDS",
    "PEOPLE",
    "REGIONS",
    "THEMES",
    "Account",
    "Kind",
    "Module",
    "Product",
    "Ref",
    "Test",
    "Theme",
    "World",
    "block",
    "closure",
    "draw_world",
    "lit",
    "ordered",
    "q",
    "readme",
    "render",
    "t",
    "test_file",
]
