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

The parts: ``site`` (Site, Witness), ``injection``, one module per bug type listing its sites
(``logic_error`` ... ``stochastic_bug``), and ``shared`` (witness tests two bug types use).
"""

from __future__ import annotations

from collections.abc import Callable

from env.families.procedural.blocks import World
from env.families.procedural.bugs import dependency_error, key_error, logic_error, state_corruption, stochastic_bug
from env.families.procedural.bugs.injection import InjectionError, inject
from env.families.procedural.bugs.site import Site, Witness
from env.families.procedural.model import BugType

__all__ = ["BY_TYPE", "InjectionError", "Site", "Witness", "inject", "sites"]

# The order of the bug types is part of the output: sites() lists them in this order.
BY_TYPE: dict[BugType, Callable[[World], list[Site]]] = {
    "logic_error": logic_error.sites,
    "key_error": key_error.sites,
    "dependency_error": dependency_error.sites,
    "state_corruption": state_corruption.sites,
    "stochastic_bug": stochastic_bug.sites,
}


def sites(w: World) -> list[Site]:
    """Every defect site of a service drawn as ``w`` (whatever kinds it holds), bug type by bug type.

    Generation picks a site from this list by index with a seeded RNG, so its order is part of the output.
    """
    return [site for of_type in BY_TYPE.values() for site in of_type(w)]
