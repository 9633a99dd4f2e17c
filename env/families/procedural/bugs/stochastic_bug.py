"""Where a stochastic bug (stochastic_bug) goes into the gold code, and the tests that reveal it.

A wrong bound on an injected ``random.Random`` (jitter, bucketing, sampling); the tests seed it, so
the failure is deterministic and identical over reruns.

Each site comes with its witnesses: the tests that fail on it and the incident report each stands for.
"""

from __future__ import annotations

from env.families.procedural.blocks import World, lit, q, t
from env.families.procedural.bugs.site import Site, Sites, Witness


def sites(w: World) -> list[Site]:
    """Every stochastic_bug site of a service drawn as ``w`` (whatever kinds it holds), in a fixed order
    (generation picks sites by index, so the order is part of the output)."""
    base = w.retry_base_ms
    out = Sites()

    j1 = w.jobs[0]
    out.add(
        "backoff-exponent", "stochastic_bug", "retry", "backoff_ms",
        'settings.get("retry_base_ms") * 2 ** (attempt - 1)', 'settings.get("retry_base_ms") * 2 ** attempt',
        "Retries wait longer than the backoff allows",
        Witness("retry", t("test_first_retry_waits_at_most_the_base_delay", f"""
            delays = [retry.backoff_ms(1, retry.seeded(seed)) for seed in range(40)]
            assert max(delays) <= {base}
            assert min(delays) >= 0
        """, ("retry",)), ("retry",), True,
            f"The first retry sometimes waits longer than the base delay of {base} ms."),
        Witness("payments", t("test_one_timeout_costs_at_most_the_base_delay", f"""
            waited = [payments.charge(payments.Gateway(failures=1), f"R-{{seed}}", 1000, retry.seeded(seed)).waited_ms for seed in range(30)]
            assert max(waited) <= {base}
        """, ("payments", "retry")), ("payments",), False,
            f"Checkout latency alerts: payments whose first capture times out wait up to about twice the configured retry base delay "
            f"({base} ms) before the second attempt, on some requests but not others. Expected the first retry to wait between 0 and "
            f"{base} ms."),
        Witness("scheduler", t("test_a_job_failing_once_is_due_within_the_base_delay", f"""
            for seed in range(25):
                jobs = scheduler.Scheduler(retry.seeded(seed))
                jobs.add({q(j1)}, 3600)
                jobs.failed({q(j1)})
                assert jobs.advance({base}) == [{q(j1)}]
        """, ("scheduler", "retry")), ("scheduler",), False,
            f"Some background jobs that failed once are not retried within the base retry delay ({base} ms): depending on the run, "
            f"the {j1} job is still not due {base} ms after its failure."),
    )
    full = w.flags[2]
    out.add(
        "bucket-bound", "stochastic_bug", "rollout", "bucket",
        "return rng.randrange(100)", "return rng.randint(0, 100)",
        "A fully rolled-out flag misses some users",
        Witness("rollout", t("test_a_full_rollout_reaches_everyone", f"""
            users = [f"user{{number}}@example.org" for number in range(1200)]
            assert rollout.enabled_users({q(full)}, users) == users
        """, ("rollout",)), ("rollout",), False,
            f"The {full} feature is rolled out to 100 % of users, yet support gets tickets from a few customers who never see it "
            f"(about one in a hundred, always the same ones). Expected every user to have it."),
    )
    staff = list(w.staff)
    out.add(
        "rota-index", "stochastic_bug", "sampling", "one",
        "items[rng.randrange(len(items))]", "items[rng.randint(0, len(items))]",
        "The QA rota crashes now and then",
        Witness("sampling", t("test_rota_covers_every_day", f"""
            staff = {lit(staff)}
            for seed in range(3):
                plan = sampling.rota(staff, 60, sampling.seeded(seed))
                assert len(plan) == 60
                assert set(plan) <= set(staff)
        """, ("sampling",)), ("sampling",), False,
            "Planning the quality-control rota fails with IndexError: list index out of range for some seeds, for example "
            f"a 60-day rota over {len(staff)} people; other seeds work. Expected a person for every day."),
    )
    out.add(
        "spot-check-bound", "stochastic_bug", "sampling", "spot_check",
        "rng.randrange(100) < rate_pct", "rng.randrange(100) <= rate_pct",
        "Spot checks run when they are switched off",
        Witness("sampling", t("test_a_zero_rate_spot_check_takes_nothing", """
            parcels = [f"P{number:04d}" for number in range(1000)]
            assert sampling.spot_check(parcels, 0, sampling.seeded(5)) == []
        """, ("sampling",)), ("sampling",), True,
            "The warehouse set the spot-check rate to 0 percent to pause manual checks, yet a batch of 1000 parcels still had about "
            "ten picked for checking. Expected none at 0 percent."),
    )
    return out.found
