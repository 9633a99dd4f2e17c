"""The ``retry`` kind: retries with exponential backoff and jitter.

``build`` writes the module a service with this kind holds and the tests every such service carries;
the tests that reveal a particular defect live with the defect, in ``bugs``."""

from __future__ import annotations

from env.families.procedural.blocks.world import Module, World, render, t


def build(w: World, present: frozenset[str]) -> Module:
    cap = w.retry_cap_s * 1000
    source = render(
        '''
        """Retries with exponential backoff and full jitter.

            rng = seeded(7)
            backoff_ms(1, rng)               # uniform in [0, base]; then [0, 2 base], [0, 4 base] ... up to the cap
            result, waited = run(operation, rng)

        Randomness always comes from the ``random.Random`` the caller passes, so a seed reproduces a
        schedule exactly. Delays are returned, not slept: callers schedule the next attempt themselves.
        """

        from __future__ import annotations

        import logging
        import random
        from collections.abc import Callable
        from typing import TypeVar

        from $pkg import settings

        log = logging.getLogger(__name__)

        T = TypeVar("T")


        class TransientError(Exception):
            """A failure worth retrying: a timeout, throttling."""


        def seeded(seed: int) -> random.Random:
            """The random generator of one retrying caller."""
            return random.Random(seed)


        def cap_ms() -> int:
            """The longest single delay (the setting is in seconds)."""
            return settings.get("retry_cap_s") * 1000


        def backoff_ms(attempt: int, rng: random.Random) -> int:
            """Delay before retry number ``attempt`` (1 for the first retry): full jitter up to an exponential ceiling."""
            if attempt < 1:
                log.error("invalid retry number %d", attempt)
                raise ValueError(f"retry numbers start at 1, got {attempt}")
            ceiling = min(cap_ms(), settings.get("retry_base_ms") * 2 ** (attempt - 1))
            return rng.randint(0, ceiling)


        def schedule(rng: random.Random) -> list[int]:
            """The delays before each retry of one call (``retry_attempts`` tries in all)."""
            return [backoff_ms(attempt, rng) for attempt in range(1, settings.get("retry_attempts"))]


        def run(operation: Callable[[], T], rng: random.Random) -> tuple[T, list[int]]:
            """Call ``operation`` until it succeeds or the attempts are used up; its result and the delays waited."""
            attempts = settings.get("retry_attempts")
            waited: list[int] = []
            for attempt in range(1, attempts + 1):
                try:
                    return operation(), waited
                except TransientError as exc:
                    if attempt == attempts:
                        log.error("giving up after %d attempts: %s", attempts, exc)
                        raise
                    delay = backoff_ms(attempt, rng)
                    log.warning("attempt %d failed (%s); retrying in %d ms", attempt, exc, delay)
                    waited.append(delay)
            raise ValueError("retry_attempts must be at least 1")
        ''',
        pkg=w.pkg,
    )
    tests = [
        t("test_same_seed_same_schedule", f"""
            first = retry.schedule(retry.seeded(7))
            assert first == retry.schedule(retry.seeded(7))
            assert len(first) == {w.retry_attempts - 1}
        """, ("retry",)),
        t("test_every_delay_stays_under_the_cap", f"""
            for seed in range(20):
                delays = retry.schedule(retry.seeded(seed))
                assert all(0 <= delay <= {cap} for delay in delays)
        """, ("retry",)),
        t("test_retry_numbers_start_at_one", """
            with pytest.raises(ValueError):
                retry.backoff_ms(0, retry.seeded(1))
        """, ("retry",)),
    ]
    return Module(source, tests)
