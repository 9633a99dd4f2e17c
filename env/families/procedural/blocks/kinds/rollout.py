"""The ``rollout`` kind: feature flags rolled out to a share of users.

``build`` writes the module a service with this kind holds and the tests every such service carries;
the tests that reveal a particular defect live with the defect, in ``bugs``."""

from __future__ import annotations

from env.families.procedural.blocks.world import Module, World, q, render, t


def build(w: World, present: frozenset[str]) -> Module:
    off, partial, full = w.flags
    source = render(
        '''
        """Feature flags of $pkg, rolled out to a percentage of users.

            enabled("$full", "ada@example.org")    # the same answer every time for that user
            enabled_users("$partial", users)       # the users who see the feature

        A user's bucket (0-99) comes from a random generator seeded with the flag and the user, so it
        is stable across processes and independent between flags.
        """

        from __future__ import annotations

        import logging
        import random

        from $pkg import settings

        log = logging.getLogger(__name__)


        def bucket(flag: str, user: str) -> int:
            rng = random.Random(f"{flag}:{user}")
            return rng.randrange(100)


        def percent(flag: str) -> int:
            percents = settings.get("rollout_percent")
            if flag not in percents:
                log.warning("unknown feature flag %s", flag)
                return 0
            return percents[flag]


        def enabled(flag: str, user: str) -> bool:
            return bucket(flag, user) < percent(flag)


        def enabled_users(flag: str, users: list[str]) -> list[str]:
            chosen = [user for user in users if enabled(flag, user)]
            log.info("flag %s: on for %d of %d users", flag, len(chosen), len(users))
            return chosen
        ''',
        pkg=w.pkg, full=full, partial=partial,
    )
    user = w.accounts[0].email
    tests = [
        t("test_a_user_keeps_their_answer", f"""
            assert rollout.bucket({q(partial)}, {q(user)}) == rollout.bucket({q(partial)}, {q(user)})
            assert 0 <= rollout.bucket({q(partial)}, {q(user)}) <= 99
            assert rollout.enabled({q(partial)}, {q(user)}) == rollout.enabled({q(partial)}, {q(user)})
        """, ("rollout",)),
        t("test_zero_percent_reaches_nobody", f"""
            users = [f"user{{number}}@example.org" for number in range(200)]
            assert rollout.enabled_users({q(off)}, users) == []
        """, ("rollout",)),
        t("test_half_rollout_reaches_about_half", f"""
            settings.override(rollout_percent={{{q(off)}: 0, {q(partial)}: 50, {q(full)}: 100}})
            users = [f"user{{number}}@example.org" for number in range(600)]
            assert 240 <= len(rollout.enabled_users({q(partial)}, users)) <= 360
        """, ("rollout", "settings")),
        t("test_unknown_flags_are_off", f"""
            assert rollout.enabled("no_such_flag", {q(user)}) is False
        """, ("rollout",)),
    ]
    return Module(source, tests)
