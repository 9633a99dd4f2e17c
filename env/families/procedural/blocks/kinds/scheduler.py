"""The ``scheduler`` kind: background jobs with retries.

``build`` writes the module a service with this kind holds and the tests every such service carries;
the tests that reveal a particular defect live with the defect, in ``bugs``."""

from __future__ import annotations

from env.families.procedural.blocks.world import Module, World, lit, q, render, t


def build(w: World, present: frozenset[str]) -> Module:
    j1, j2, _ = w.jobs
    source = render(
        '''
        """Background jobs of $pkg on a virtual clock: run when due, retried with backoff after a failure.

            jobs = Scheduler(retry.seeded(1))
            jobs.add("$job", every_s=300)
            jobs.advance(300_000)          # ["$job"]: the jobs now due
            jobs.failed("$job")            # due again after a jittered backoff
        """

        from __future__ import annotations

        import logging
        import random
        from dataclasses import dataclass

        from $pkg import metrics, retry

        log = logging.getLogger(__name__)


        @dataclass
        class Job:
            name: str
            every_s: int
            next_ms: int
            failures: int = 0
            runs: int = 0


        class Scheduler:
            def __init__(self, rng: random.Random) -> None:
                self.rng = rng
                self.now_ms = 0
                self.jobs: dict[str, Job] = {}

            def add(self, name: str, every_s: int) -> Job:
                if every_s <= 0:
                    log.error("job %s: interval %d s is not positive", name, every_s)
                    raise ValueError(f"interval must be positive, got {every_s}")
                job = Job(name, every_s, self.now_ms + every_s * 1000)
                self.jobs[name] = job
                log.info("job %s every %d s", name, every_s)
                return job

            def due(self) -> list[str]:
                return sorted(name for name, job in self.jobs.items() if job.next_ms <= self.now_ms)

            def advance(self, ms: int) -> list[str]:
                """Move the clock on; returns the jobs now due."""
                self.now_ms += ms
                return self.due()

            def succeeded(self, name: str) -> Job:
                job = self.jobs[name]
                job.runs += 1
                job.failures = 0
                job.next_ms = self.now_ms + job.every_s * 1000
                metrics.incr("scheduler.runs")
                return job

            def failed(self, name: str) -> Job:
                job = self.jobs[name]
                job.failures += 1
                delay_ms = retry.backoff_ms(job.failures, self.rng)
                job.next_ms = self.now_ms + delay_ms
                metrics.incr("scheduler.failures")
                log.warning("job %s failed (%d in a row); retrying in %d ms", name, job.failures, delay_ms)
                return job
        ''',
        pkg=w.pkg, job=j1,
    )
    tests = [
        t("test_jobs_run_when_due", f"""
            jobs = scheduler.Scheduler(retry.seeded(1))
            jobs.add({q(j1)}, 60)
            jobs.add({q(j2)}, 300)
            assert jobs.advance(30_000) == []
            assert jobs.advance(40_000) == [{q(j1)}]
            jobs.succeeded({q(j1)})
            assert jobs.advance(300_000) == {lit(sorted([j1, j2]))}
        """, ("scheduler", "retry")),
        t("test_success_clears_failures", f"""
            jobs = scheduler.Scheduler(retry.seeded(2))
            jobs.add({q(j1)}, 60)
            jobs.failed({q(j1)})
            jobs.failed({q(j1)})
            job = jobs.succeeded({q(j1)})
            assert (job.failures, job.runs) == (0, 1)
        """, ("scheduler", "retry")),
        t("test_runs_are_counted", f"""
            before = metrics.value("scheduler.runs")
            jobs = scheduler.Scheduler(retry.seeded(3))
            jobs.add({q(j2)}, 10)
            jobs.succeeded({q(j2)})
            jobs.succeeded({q(j2)})
            assert metrics.value("scheduler.runs") - before == 2
        """, ("scheduler", "retry", "metrics")),
        t("test_interval_must_be_positive", f"""
            with pytest.raises(ValueError):
                scheduler.Scheduler(retry.seeded(1)).add({q(j1)}, 0)
        """, ("scheduler", "retry")),
    ]
    return Module(source, tests)
