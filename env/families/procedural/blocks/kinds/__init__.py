"""One module per kind of module a generated service can hold (settings, catalog, pricing, orders ...).

Each exposes ``build(w, present) -> Module``: the kind's source for the world ``w`` (what it says
depends on which other kinds are ``present``) and its regular tests, the tests every service with
that kind carries. ``blocks.service`` lists the kinds with their dependencies, in dependency order.
"""
