"""An independent cross-check of the race family's verdict: frontrun's DPOR explorer on the buggy and the gold class of
race tasks (issue 49).

    frontrun python -m tests.race_family_crosscheck [--tasks ID ...] [--budget 3.0]    # one JSON document on stdout

For each task, the scenarios are the two-thread races the project's plan sweeps (every pair of the domain's racing
calls, from a fresh object and after the domain's setup calls), each explored by frontrun to the end (no preemption
bound) with its own tracer and scheduler. A run's observation (each call's return value or built-in exception, and the
final reads) must be that of some order of the whole calls, computed here by trying every order with the domain
model's step functions (not the project's search, env/families/race/linearize.py). The domain's own two-thread
scenarios (a job queue's take waiting for a push) are explored too: an order in which a call would wait for good
explains nothing. The verdicts are those of tests/race_crosscheck.py: racy, correct, or inconclusive (what frontrun
could not finish).
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from env.families.race.models import BLOCKS, Args, Model
from env.families.race.task import RaceTaskSpec, race_task
from tests.race_crosscheck import ScenarioResult, Subject, VariantResult, crosscheck, explore_with, frontrun_subprocess, print_results

Call = tuple[str, Args]
Outcome = tuple[Any, str]  # a call's plain value, and its exception's class name ("" when none)
Observation = tuple[tuple[tuple[Outcome, ...], ...], tuple[Outcome, ...]]  # each thread's calls, then the final reads

# 38 tasks: two seeds of each pattern x domain (the seeds a listing shows first, and one of its validation split).
TASKS = [f"race-{p.replace('_', '-')}-{d.replace('_', '-')}-{seed}" for p, d in (
    ("lost_update", "accounts"), ("lost_update", "inventory"), ("lost_update", "rate_limiter"), ("lost_update", "id_allocator"),
    ("check_then_act", "accounts"), ("check_then_act", "inventory"), ("check_then_act", "connection_pool"),
    ("get_then_set", "connection_pool"), ("get_then_set", "cache"), ("get_then_set", "session_store"),
    ("double_checked_init", "cache"), ("two_field_invariant", "accounts"), ("mutation_during_iteration", "session_store"),
    ("publish_before_init", "job_queue"), ("lock_order_deadlock", "accounts"), ("atomicity_across_calls", "inventory"),
    ("atomicity_across_calls", "rate_limiter"), ("atomicity_across_calls", "id_allocator"), ("missed_signal", "job_queue"),
) for seed in (0, 8)]  # fmt: skip


@dataclass(frozen=True)
class Scenario:
    name: str
    setup: tuple[Call, ...]
    threads: tuple[tuple[Call, ...], tuple[Call, ...]]
    reads: tuple[Call, ...]


def _text(call: Call) -> str:
    return f"{call[0]}({', '.join(map(repr, call[1]))})"


def scenarios(model: Model) -> tuple[Scenario, ...]:
    found = []
    for setup in ((), model.setup):
        start = f"after {', '.join(map(_text, setup))}" if setup else "on a new object"
        for a, b in itertools.combinations_with_replacement(model.racing, 2):
            found.append(Scenario(f"{_text(a)} and {_text(b)} {start}", setup, ((a,), (b,)), model.reads))
    for first, second in model.scenarios:
        found.append(Scenario(f"{', '.join(map(_text, first))} and {', '.join(map(_text, second))} on a new object", (), (first, second), model.reads))
    return tuple(found)


def plain(value: Any) -> Any:
    if type(value) in (list, tuple):
        return tuple(plain(v) for v in value)
    return value if type(value) in (int, bool, str, type(None)) else f"<{type(value).__name__}>"


def _orders(lengths: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
    """Every merge of the threads' calls that keeps each thread's own order: the thread of each step."""
    steps = [i for i, n in enumerate(lengths) for _ in range(n)]
    yield from sorted(set(itertools.permutations(steps)))


def allowed(model: Model, scenario: Scenario) -> frozenset[Observation]:
    """What every order of the calls gives: each call's outcome and the final reads (an order in which a call would
    wait for good gives nothing)."""
    state = model.start(scenario.setup)
    found: set[Observation] = set()
    for order in _orders(tuple(len(t) for t in scenario.threads)):
        s, outcomes, blocked = state, [[] for _ in scenario.threads], False
        for index in order:
            s, result = model.step(s, *scenario.threads[index][len(outcomes[index])])
            blocked |= result == BLOCKS
            outcomes[index].append((result.value, result.error))
        reads = tuple((r.value, r.error) for r in (model.step(s, *call)[1] for call in scenario.reads))
        if not blocked:
            found.add((tuple(tuple(o) for o in outcomes), reads))
    return frozenset(found)


class _State:
    def __init__(self, cls: type, scenario: Scenario) -> None:
        self.target = cls()
        for op, args in scenario.setup:
            getattr(self.target, op)(*args)
        self.outcomes: list[list[Outcome]] = [[] for _ in scenario.threads]


def _run(target: Any, op: str, args: Args) -> Outcome:
    try:
        return plain(getattr(target, op)(*args)), ""
    except Exception as exc:  # a class of the family raises built-in exceptions only: the name is the outcome
        return None, type(exc).__name__


def _worker(index: int, calls: tuple[Call, ...]) -> Callable[[_State], None]:
    def run(state: _State) -> None:
        for op, args in calls:
            state.outcomes[index].append(_run(state.target, op, args))

    return run


def _invariant(scenario: Scenario, expected: frozenset[Observation]) -> Callable[[_State], bool]:
    def holds(state: _State) -> bool:
        observed = (tuple(tuple(o) for o in state.outcomes), tuple(_run(state.target, op, args) for op, args in scenario.reads))
        if observed not in expected:
            raise AssertionError(f"{scenario.name}: observed {observed}; some order of the calls gives one of {sorted(map(repr, expected))}")
        return True

    return holds


def subject(task: RaceTaskSpec) -> Subject:
    model = task.generated.model

    def explore(cls: type, scenario: Scenario, budget: float) -> ScenarioResult:
        workers = [_worker(i, calls) for i, calls in enumerate(scenario.threads)]
        return explore_with(scenario.name, lambda: _State(cls, scenario), workers, _invariant(scenario, allowed(model, scenario)), budget)

    return Subject(task.module, task.generated.cls, scenarios(model), explore)


def run_all(task_ids: list[str], budget: float) -> Iterator[VariantResult]:
    for task_id in task_ids:
        task = race_task(task_id)
        assert task is not None, task_id
        for kind, source in (("racy", task.buggy_source), ("correct", task.gold_source)):
            yield crosscheck(f"{task_id}:{'buggy' if kind == 'racy' else 'gold'}", kind, source, budget, subject(task))  # type: ignore[arg-type]


def run_under_frontrun(task_ids: list[str] | None = None, budget: float = 3.0, timeout: float = 900.0) -> list[VariantResult]:
    """``main``'s results, from a plain interpreter: this module run as a subprocess under frontrun's wrapper."""
    return frontrun_subprocess("tests.race_family_crosscheck", ["--budget", str(budget), "--tasks", *(task_ids or TASKS)], timeout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="*", default=TASKS, help="race task ids (default: two seeds of every pattern x domain)")
    parser.add_argument("--budget", type=float, default=3.0, help="seconds of exploration per scenario at most")
    args = parser.parse_args()
    print_results("tests.race_family_crosscheck", args.budget, lambda: run_all(args.tasks, args.budget))


if __name__ == "__main__":
    main()
