"""Runs that decide validity and were stopped only because the machine was too busy: run again, then reported as such.

    verdict = until_decided(lambda: run_tests(sandbox, task, files))   # at most ATTEMPTS runs
    except MachineBusy as exc: ...                                      # every attempt was starved: say so, decide nothing

Where limits count CPU time (``Limits.for_validity``), a run the wall-clock backstop stops under its CPU limit has no
outcome of its own (``RepoVerdict.busy``, ``RunResult.busy``): the machine starved it. It is never read as a failing
test, a hanging mutant or an invalid task; it runs again, and when every attempt is starved the decision is reported
as the machine's (:class:`MachineBusy`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

ATTEMPTS = 2  # each starved attempt already waited the whole backstop (Limits.deadline_seconds)


class Outcome(Protocol):
    @property
    def busy(self) -> str: ...


V = TypeVar("V", bound=Outcome)


class MachineBusy(Exception):
    """Every attempt of a run that decides validity was stopped by the wall-clock backstop under its CPU limit."""


def until_decided(run: Callable[[], V], attempts: int = ATTEMPTS) -> V:
    """``run()`` again while the machine starves it, at most ``attempts`` times; MachineBusy when it starved each."""
    for _ in range(attempts - 1):
        outcome = run()
        if not outcome.busy:
            return outcome
    outcome = run()
    if outcome.busy:
        raise MachineBusy(f"{outcome.busy}; in each of {attempts} attempts")
    return outcome
