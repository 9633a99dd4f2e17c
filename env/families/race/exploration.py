"""A race-family class under controlled interleavings: the plan the explorer runs, and the verdict on what came back.

    plan = plan_for(model, "Pool", rng)                 # sweeps over every pair of racing calls, and PCT scenarios
    outcome = judge(model, plan, run.explore(plan))     # every schedule explained by some order of its calls?
    outcome.passed, outcome.schedules, outcome.message

Every plan holds the explorer's model form (env/sandbox/inside/explorer.py): calls with arguments, on a fresh object
of the class, from two starts (fresh, and after the domain's ``setup``), the final state read through the class's
accessors (``model.reads``). Sweeps (two threads, one call each, one preemption at every scheduling point, both
orders) cover every pair of the domain's racing calls, a call racing itself included (a lost update or a check-then-act
between two calls is a depth-2 bug, found by a sweep every time), and the domain's own two-thread scenarios (calls that
wait for another's: a missed signal). More sweeps start wide (each racing call racing itself, and one pair drawn from
``rng``): after the setup and 16 to 1,024 of the domain's calls (which and how many drawn from ``rng``), so that code
racing only past some count of calls or size of state is run there too (what no draw reaches, the lock-discipline review covers). PCT scenarios (three threads, one or two calls each,
priorities and change points from ``rng``, which the episode draws from the server's secret) look for the rest. The
child judges nothing: each schedule is judged here against the sequential model (``linearize.explain``).
"""

from __future__ import annotations

import random
from itertools import combinations_with_replacement
from typing import Any

from env.families.classic.concurrency import THREAD_NAMES, StressOutcome, interleaving
from env.families.race.linearize import Call, explain, plain
from env.families.race.models import BLOCKS, Args, Model, Result

PCT_SCENARIOS = 8
WIDE_CALLS = (16, 1024)  # calls a wide start makes (log-uniform)


def _calls(calls: tuple[tuple[str, Args], ...]) -> list[list[Any]]:
    return [[op, list(args)] for op, args in calls]


def wide_start(model: Model, rng: random.Random) -> tuple[tuple[str, Args], ...]:
    """The domain's setup, then a number of calls drawn from ``rng`` (log-uniform in WIDE_CALLS) of the domain's setup and
    racing calls, one at a time: a call the model says would wait for good is left out."""
    low, high = WIDE_CALLS
    count = min(high, int(low * (high / low) ** rng.random()))
    vocabulary = (*model.setup, *model.racing)
    state, calls = model.start(model.setup), list(model.setup)
    while len(calls) < count:
        op, args = rng.choice(vocabulary)
        after, result = model.step(state, op, args)
        if result != BLOCKS:
            state = after
            calls.append((op, args))
    return tuple(calls)


def plan_for(model: Model, cls: str, rng: random.Random, pct: int = PCT_SCENARIOS) -> dict[str, Any]:
    """The scenarios of one check of a ``model`` domain's class ``cls``."""
    scenarios: list[dict[str, Any]] = []
    reads = _calls(model.reads)
    for setup in ((), model.setup):
        for a, b in combinations_with_replacement(model.racing, 2):
            scenarios.append({"setup": _calls(setup), "threads": [_calls((a,)), _calls((b,))], "sweep": True, "observe": reads})
    for first, second in model.scenarios:
        scenarios.append({"setup": [], "threads": [_calls(first), _calls(second)], "sweep": True, "observe": reads})
    # from states far from the starts above, so that thresholds on what many calls left are crossed: each racing call
    # racing itself, and one pair drawn from rng, each from a wide start of its own
    for a, b in [*((c, c) for c in dict.fromkeys(model.racing)), (rng.choice(model.racing), rng.choice(model.racing))]:
        scenarios.append({"setup": _calls(wide_start(model, rng)), "threads": [_calls((a,)), _calls((b,))], "sweep": True, "observe": reads})
    for _ in range(pct):
        threads = [_calls(tuple(rng.choice(model.racing) for _ in range(rng.randint(1, 2)))) for _ in range(3)]
        scenarios.append({
            "setup": _calls(rng.choice(((), model.setup))), "threads": threads, "observe": reads,
            "priorities": rng.sample(range(1, 4), 3), "changes": [rng.random() for _ in range(rng.choice((1, 2)))],
        })  # fmt: skip
    return {"cls": cls, "model": True, "scenarios": scenarios}


def _as_call(record: Any) -> Call | None:
    if not (isinstance(record, list) and len(record) == 3 and isinstance(record[0], str) and isinstance(record[2], str)):
        return None
    return Call(record[0], (), Result(plain(record[1]), record[2]))


def problem(model: Model, scenario: dict[str, Any], observation: Any) -> str:
    """What no sequential order of the schedule's calls explains ("" when it is explained)."""
    if not isinstance(observation, dict):
        return "the concurrency check returned a malformed observation"
    if observation.get("stopped"):
        return str(observation["stopped"])
    results, final = observation.get("results"), observation.get("final")
    if not (isinstance(results, list) and len(results) == len(scenario["threads"]) and isinstance(final, list)):
        return "the concurrency check returned a malformed observation"
    threads: list[list[Call]] = []
    for planned, got in zip(scenario["threads"], results, strict=True):
        if not isinstance(got, list) or len(got) != len(planned):
            return "the concurrency check returned a malformed observation"
        thread = []
        for (op, args), record in zip(planned, got, strict=True):
            call = _as_call(record)
            if call is None or call.op != op:
                return "the concurrency check returned a malformed observation"
            thread.append(Call(op, tuple(args), call.result))
        threads.append(thread)
    reads = [_as_call(record) for record in final]
    if len(reads) != len(scenario["observe"]) or any(r is None for r in reads):
        return "the concurrency check returned a malformed observation"
    raised = [c.result.error for t in threads for c in t if c.result.error.startswith("other: ")]
    if raised:
        return "worker threads raised: " + "; ".join(raised)[:600]
    setup = tuple((op, tuple(args)) for op, args in scenario["setup"])
    observe = tuple((op, tuple(args)) for op, args in scenario["observe"])
    found = explain(model, setup, threads, observe, tuple(r.result for r in reads if r is not None))
    if found.ok:
        return ""
    if found.undecided:  # the plan's fault: never counted against the code
        return ""
    return found.why


def describe(scenario: dict[str, Any]) -> str:
    """The scenario in words: who called what, from which start."""

    def call(op: str, args: list[Any]) -> str:
        return f"{op}({', '.join(map(repr, args))})"

    who = "; ".join(f"thread {THREAD_NAMES[i]}: {', '.join(call(op, args) for op, args in t)}" for i, t in enumerate(scenario["threads"]))
    setup = scenario["setup"]
    shown = ", ".join(call(op, args) for op, args in setup[:4]) + (f" and {len(setup) - 4} more calls" if len(setup) > 4 else "")
    start = f" after {shown}" if setup else " on a new object"
    return f"{len(scenario['threads'])} threads ({who}){start}"


def judge(model: Model, plan: dict[str, Any], reply: Any, source: str = "") -> StressOutcome:
    """The verdict on an exploration: passed when every schedule ran and is explained by some order of its calls."""
    if not isinstance(reply, dict) or not isinstance(reply.get("schedules"), list):
        return StressOutcome(passed=False, message="the concurrency check returned a malformed reply")
    if reply.get("refused"):
        return StressOutcome(passed=False, message=f"the concurrency check could not run: {reply['refused']}")
    schedules = reply["schedules"]
    tampered = reply.get("tampered") or []
    if tampered:
        return StressOutcome(passed=False, schedules=len(schedules), message="the code interfered with the check: " + "; ".join(map(str, tampered))[:300])
    ran = set()
    for observation in schedules:
        number = observation.get("scenario") if isinstance(observation, dict) else None
        if type(number) is not int or not 0 <= number < len(plan["scenarios"]):
            return StressOutcome(passed=False, schedules=len(schedules), message="the concurrency check returned a malformed observation")
        scenario = plan["scenarios"][number]
        ran.add(number)
        wrong = problem(model, scenario, observation)
        if wrong:
            steps = interleaving(observation, source)
            shown = "\n".join(f"  {s}" for s in steps) if steps else ""
            message = f"{describe(scenario)}: {wrong}" + (f"\nthe interleaving:\n{shown}" if shown else "")
            return StressOutcome(passed=False, schedules=len(schedules), message=message)
    if len(ran) != len(plan["scenarios"]):
        return StressOutcome(passed=False, schedules=len(schedules), message="the concurrency check did not run every scenario")
    return StressOutcome(passed=True, schedules=len(schedules), message=f"{len(schedules)} interleavings, each explained by some order of its calls")
