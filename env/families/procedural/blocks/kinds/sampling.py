"""The ``sampling`` kind: random quality-control sampling.

``build`` writes the module a service with this kind holds and the tests every such service carries;
the tests that reveal a particular defect live with the defect, in ``bugs``."""

from __future__ import annotations

from env.families.procedural.blocks.world import Module, World, render, t


def build(w: World, present: frozenset[str]) -> Module:
    source = render(
        '''
        """Quality-control sampling for $pkg: which parcels get a manual check, who checks them.

            pick(parcels, 3, rng)          # three distinct parcels, in their original order
            spot_check(parcels, 5, rng)    # each parcel with a 5 percent chance
            rota(staff, 7, rng)            # who is on duty on each of the next 7 days

        Randomness comes from the ``random.Random`` the caller passes (``seeded`` makes one).
        """

        from __future__ import annotations

        import logging
        import random

        from $pkg import metrics

        log = logging.getLogger(__name__)


        def seeded(seed: int) -> random.Random:
            return random.Random(seed)


        def pick(items: list[str], count: int, rng: random.Random) -> list[str]:
            """``count`` distinct items, chosen uniformly, in their original order."""
            if not 0 <= count <= len(items):
                log.error("cannot pick %d of %d items", count, len(items))
                raise ValueError(f"cannot pick {count} of {len(items)} items")
            chosen = sorted(rng.sample(range(len(items)), count))
            metrics.incr("sampling.picked", count)
            return [items[index] for index in chosen]


        def spot_check(items: list[str], rate_pct: int, rng: random.Random) -> list[str]:
            """Each item independently, with a ``rate_pct`` percent chance."""
            chosen = [item for item in items if rng.randrange(100) < rate_pct]
            metrics.incr("sampling.spot_checked", len(chosen))
            log.info("spot check: %d of %d items at %d percent", len(chosen), len(items), rate_pct)
            return chosen


        def one(items: list[str], rng: random.Random) -> str:
            """One item, chosen uniformly."""
            if not items:
                log.error("nothing to choose from")
                raise ValueError("nothing to choose from")
            return items[rng.randrange(len(items))]


        def rota(staff: list[str], days: int, rng: random.Random) -> list[str]:
            """Who does the manual checks on each of the next ``days`` days."""
            plan = [one(staff, rng) for _ in range(days)]
            log.info("rota for %d days over %d people", days, len(staff))
            return plan
        ''',
        pkg=w.pkg,
    )
    tests = [
        t("test_pick_is_distinct_ordered_and_reproducible", """
            parcels = [f"P{number:03d}" for number in range(20)]
            chosen = sampling.pick(parcels, 5, sampling.seeded(3))
            assert len(set(chosen)) == 5
            assert chosen == sorted(chosen)
            assert chosen == sampling.pick(parcels, 5, sampling.seeded(3))
        """, ("sampling",)),
        t("test_picks_are_counted", """
            before = metrics.value("sampling.picked")
            sampling.pick(["a", "b", "c", "d", "e"], 4, sampling.seeded(1))
            assert metrics.value("sampling.picked") - before == 4
        """, ("sampling", "metrics")),
        t("test_cannot_pick_more_than_there_is", """
            with pytest.raises(ValueError):
                sampling.pick(["a"], 2, sampling.seeded(1))
        """, ("sampling",)),
        t("test_a_full_spot_check_takes_everything", """
            parcels = [f"P{number:03d}" for number in range(50)]
            assert sampling.spot_check(parcels, 100, sampling.seeded(2)) == parcels
        """, ("sampling",)),
    ]
    return Module(source, tests)
