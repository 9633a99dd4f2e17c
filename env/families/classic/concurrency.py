"""The concurrency task's verdict on the trusted side: what to explore, and whether what came back is correct.

    plan = explore_plan(spec, rng)                     # scenarios drawn from the server's secret
    outcome = judge_exploration(plan, reply, source)    # the child's observations, judged here
    outcome = judge_hammer(plan, reply)                 # the real-threads run, judged here

A schedule's observation is correct when some sequential order of the calls its threads made (each
thread's calls in its own order) gives exactly the same return values, the same ValueErrors and the same
final count and peak, under the task's specification: ``increment`` returns the new count and raises the
peak to it; ``decrement`` raises ValueError when no connection is left and otherwise returns the new count;
``reset`` sets the count to 0. The expected values never appear in a report.
"""

from __future__ import annotations

import random
import sys
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, Field

from env.families.classic.task import StressSpec

THREAD_NAMES = "ABCDEF"
# The CPython versions the in-process check (env/sandbox/inside/explorer.py, which reads the interpreter's frame layout)
# is validated on; the explorer holds the same list and refuses on its own too. A test keeps the two equal.
VALIDATED_PYTHON = ((3, 11),)


def python_refusal(implementation: str = sys.implementation.name, version: tuple[int, ...] = tuple(sys.version_info[:3])) -> str:
    """Why this interpreter cannot judge the concurrency task ("" when it can)."""
    if implementation == "cpython" and version[:2] in VALIDATED_PYTHON:
        return ""
    wanted = ", ".join(f"{major}.{minor}" for major, minor in VALIDATED_PYTHON)
    return f"the concurrency check is validated on CPython {wanted} only; this server runs {implementation} {'.'.join(map(str, version))}"
OPS = ("increment", "decrement")


class StressOutcome(BaseModel):
    passed: bool
    schedules: int = Field(0, description="Interleavings the explorer ran")
    message: str = ""


# -- the plan -------------------------------------------------------------------------------------

# Every check sweeps (two threads, one preemption at every point, both orders) the boundaries: decrements
# racing at counts 1 and 0, increments racing on the peak, an increment racing a decrement from zero or just
# above, reset racing each update. Where a count above the boundary makes no difference to what is caught, it
# comes from the secret, as do the PCT scenarios (three threads, random operations, from zero upwards).
def _sweeps(rng: random.Random) -> list[dict[str, Any]]:
    sweeps = [
        (["increment"] * rng.randint(0, 2), ("increment", "increment")),  # the peak at the count: both raise it
        (["increment"], ("decrement", "decrement")),
        ([], ("decrement", "decrement")),
        (["increment"] * rng.randint(0, 1), ("increment", "decrement")),
        (["increment"] * rng.randint(0, 2), ("reset", "increment")),
        (["increment"] * rng.randint(1, 2), ("reset", "decrement")),
    ]
    return [{"setup": setup, "threads": [[a], [b]], "sweep": True} for setup, (a, b) in sweeps]


def explore_plan(spec: StressSpec, rng: random.Random) -> dict[str, Any]:
    """The scenarios of one check, drawn from ``rng`` (which the episode derives from the server's secret)."""
    scenarios = _sweeps(rng)
    for _ in range(spec.random_scenarios):
        threads = [[rng.choice(OPS) for _ in range(rng.randint(*spec.ops))] for _ in range(spec.threads)]
        decrements = sum(t.count("decrement") for t in threads)
        priorities = rng.sample(range(1, spec.threads + 1), spec.threads)
        changes = [rng.random() for _ in range(rng.choice((1, 2)))]  # PCT depth 2 or 3
        # from zero up to enough for every decrement: decrements race at the boundary too
        scenarios.append({"setup": ["increment"] * rng.randint(0, decrements), "threads": threads, "priorities": priorities, "changes": changes})
    hammer = {"cls": spec.cls, "threads": 4, "ops": 1500 + rng.randint(0, 500), "switch": 1e-6, "seconds": 2.0}
    return {"cls": spec.cls, "scenarios": scenarios, "hammer": hammer}


# -- the reference: every sequential order of the calls ------------------------------------------

State = tuple[int, int]  # (count, peak)


def _apply(op: str, state: State) -> tuple[State, int | None, str]:
    count, peak = state
    if op == "increment":
        return (count + 1, max(peak, count + 1)), count + 1, ""
    if op == "decrement":
        if count == 0:
            return state, None, "ValueError"
        return (count - 1, peak), count - 1, ""
    if op == "reset":
        return (0, peak), None, ""
    raise ValueError(f"unknown operation {op!r}")


def setup_state(setup: tuple[str, ...]) -> State:
    state: State = (0, 0)
    for op in setup:
        state = _apply(op, state)[0]
    return state


@lru_cache(maxsize=4096)
def _linearizable(start: State, threads: tuple[tuple[tuple[str, Any, str], ...], ...]) -> frozenset[State]:
    """The final states of every order of the threads' calls whose results match the observed ones."""
    if not any(threads):
        return frozenset({start})
    finals: set[State] = set()
    for index, calls in enumerate(threads):
        if not calls:
            continue
        op, value, raised = calls[0]
        state, expected, error = _apply(op, start)
        if raised != error or (op != "reset" and not raised and value != expected):
            continue
        rest = threads[:index] + (calls[1:],) + threads[index + 1 :]
        finals |= _linearizable(state, rest)
    return frozenset(finals)


def _reachable(start: State, threads: tuple[tuple[str, ...], ...]) -> frozenset[int]:
    """Every final count some order of the calls gives (whatever they returned)."""
    counts: set[int] = set()

    def walk(state: State, rest: tuple[tuple[str, ...], ...]) -> None:
        if not any(rest):
            counts.add(state[0])
            return
        for index, calls in enumerate(rest):
            if calls:
                walk(_apply(calls[0], state)[0], rest[:index] + (calls[1:],) + rest[index + 1 :])

    walk(start, threads)
    return frozenset(counts)


def _records(observation: dict[str, Any], scenario: dict[str, Any]) -> tuple[tuple[tuple[str, Any, str], ...], ...] | None:
    """The observed calls per thread, checked against the scenario's own (None: malformed or incomplete)."""
    results = observation.get("results")
    if not isinstance(results, list) or len(results) != len(scenario["threads"]):
        return None
    threads = []
    for ops, calls in zip(scenario["threads"], results, strict=True):
        if not isinstance(calls, list) or len(calls) != len(ops):
            return None
        thread = []
        for op, call in zip(ops, calls, strict=True):
            if not (isinstance(call, list) and len(call) == 3 and call[0] == op and isinstance(call[2], str)):
                return None
            value = call[1] if type(call[1]) in (int, type(None)) else "<other>"
            thread.append((op, value, call[2]))
        threads.append(tuple(thread))
    return tuple(threads)


def problem(observation: dict[str, Any], scenario: dict[str, Any]) -> str:
    """What a correct object would not have done in this schedule ("" when nothing)."""
    if observation.get("stopped"):
        return str(observation["stopped"])
    threads = _records(observation, scenario)
    if threads is None:
        return "the concurrency check returned a malformed observation"
    raised = [call[2] for thread in threads for call in thread if call[2] not in ("", "ValueError")]
    if raised:
        return "worker threads raised: " + "; ".join(raised)[:600]
    count, peak = observation.get("count"), observation.get("peak")
    if type(count) is not int or type(peak) is not int:
        return f"get_count() or get_peak() returned {count!r} / {peak!r}, not ints"
    start = setup_state(tuple(scenario["setup"]))
    plain = tuple(tuple(op for op, _, _ in thread) for thread in threads)
    if count < 0:
        return "the count went below zero: a decrement's check and its update are not one atomic step"
    if count not in _reachable(start, plain):
        return "updates were lost under concurrency (the final count is wrong)"
    finals = _linearizable(start, threads)
    if not finals:
        if any(call[2] for thread in threads for call in thread) or "decrement" in {op for thread in plain for op in thread}:
            return ("the calls' results match no order of the calls: a decrement raised or returned what no order gives "
                    "(its check and its update are not one atomic step, or an update was lost)")
        return "increment() returned values no order of the calls gives: an update was lost under concurrency"
    if not any(final[0] == count for final in finals):
        return "updates were lost under concurrency (the final count is wrong)"
    if not any(op == "reset" for thread in plain for op in thread) and not any(final == (count, peak) for final in finals):
        return "the peak lost an update under concurrency (get_peak() is wrong)"
    return ""


# -- the verdicts on what came back ---------------------------------------------------------------


def _interleaving(observation: dict[str, Any], source: str) -> list[str]:
    """The switches of a failing schedule, in the submission's own lines."""
    lines = source.splitlines()
    steps = []
    for entry in (observation.get("log") or [])[:16]:
        if not (isinstance(entry, list) and len(entry) == 5 and all(type(entry[i]) is int for i in (0, 1, 4))):
            continue
        frm, line, function, note, to = entry
        if not (0 <= frm < len(THREAD_NAMES) and 0 <= to < len(THREAD_NAMES)):
            continue
        if note == "finished":
            steps.append(f"thread {THREAD_NAMES[frm]} finished; thread {THREAD_NAMES[to]} runs")
            continue
        code = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        where = f"line {line}" + (f" in {function}" if isinstance(function, str) and function else "")
        why = f" ({note})" if isinstance(note, str) and note else ""
        steps.append(f"thread {THREAD_NAMES[frm]} paused at {where}{why}: `{code[:120]}`; thread {THREAD_NAMES[to]} runs")
    return steps


def describe(scenario: dict[str, Any]) -> str:
    who = "; ".join(f"thread {THREAD_NAMES[i]}: {', '.join(t)}" for i, t in enumerate(scenario["threads"]))
    return f"{len(scenario['threads'])} threads ({who}) on one shared counter"


def judge_exploration(plan: dict[str, Any], reply: Any, source: str) -> StressOutcome:
    """The verdict on the explorer's observations: every schedule judged here, every scenario accounted for."""
    if isinstance(reply, dict) and isinstance(reply.get("refused"), str) and reply["refused"]:
        return StressOutcome(passed=False, message=f"the concurrency check cannot run here: {reply['refused'][:300]}")
    if not isinstance(reply, dict) or not isinstance(reply.get("schedules"), list):
        return StressOutcome(passed=False, message="the concurrency check returned no observations")
    if reply.get("tampered"):
        what = ", ".join(map(str, reply["tampered"]))[:200]
        return StressOutcome(passed=False, message=f"the code tried to change how it is traced ({what}): no credit")
    scenarios = plan["scenarios"]
    seen: dict[int, list[dict[str, Any]]] = {}
    for observation in reply["schedules"]:
        index = observation.get("scenario") if isinstance(observation, dict) else None
        if type(index) is not int or not 0 <= index < len(scenarios):
            return StressOutcome(passed=False, message="the concurrency check returned a malformed observation")
        scenario = scenarios[index]
        seen.setdefault(index, []).append(observation)
        found = problem(observation, scenario)
        if found:
            steps = _interleaving(observation, source)
            text = f"{describe(scenario)}, interleaved by a controlled scheduler: {found}."
            if steps:
                text += "\nThe interleaving, in your code's lines:\n" + "\n".join(f"  {n}. {step}" for n, step in enumerate(steps, 1))
            return StressOutcome(passed=False, schedules=len(reply["schedules"]), message=text)
    for index, scenario in enumerate(scenarios):
        runs = seen.get(index, [])
        if not runs or (scenario.get("sweep") and not _swept(runs)):
            return StressOutcome(passed=False, message="the concurrency check did not run every schedule it was asked to")
    run = len(reply["schedules"])
    skipped = sum(len(o.get("equivalent") or []) for o in reply["schedules"] if isinstance(o.get("equivalent"), list))
    more = f" ({skipped} more shown equivalent to one of them)" if skipped else ""
    return StressOutcome(passed=True, schedules=run, message=f"{run} interleavings{more}: no update was lost")


def _swept(runs: list[dict[str, Any]]) -> bool:
    """Both orders, each with a preemption at every point of its first thread (or shown equivalent to none)."""
    for first in (0, 1):
        mine = [r for r in runs if r.get("first") == first]
        probes = [r for r in mine if r.get("preempt_at") == 0]
        if not probes or type(probes[0].get("first_steps")) is not int:
            return False
        equivalent = probes[0].get("equivalent") or []
        if not isinstance(equivalent, list):
            return False
        if {r.get("preempt_at") for r in mine} | set(equivalent) != set(range(probes[0]["first_steps"] + 1)):
            return False
    return True


def judge_hammer(plan: dict[str, Any], reply: Any) -> str:
    """The real-threads run: "" when what came back is what a correct object gives, else what went wrong."""
    if isinstance(reply, dict) and isinstance(reply.get("refused"), str) and reply["refused"]:
        return f"the real-threads check cannot run here: {reply['refused'][:300]}"
    settings = plan["hammer"]
    total = settings["threads"] * settings["ops"]
    if not isinstance(reply, dict):
        return "the real-threads check returned nothing"
    intro = f"{settings['threads']} real threads calling"
    for phase, count, peak in (("increment", total, total), ("decrement", 0, total)):
        seen = reply.get(phase)
        if not isinstance(seen, dict):
            return "the real-threads check returned nothing"
        if seen.get("unfinished"):
            return f"{intro} {phase} did not finish within {settings['seconds']:g} s"
        if seen.get("errors"):
            return f"{intro} {phase} raised: " + "; ".join(map(str, seen["errors"]))[:400]
        if seen.get("count") != count:
            return f"{intro} {phase} {settings['ops']} times each, with preemption forced often: updates were lost (the final count is wrong)"
        if seen.get("peak") != peak:
            return f"{intro} {phase} {settings['ops']} times each: the peak lost an update (get_peak() is wrong)"
    return ""
