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
from functools import cache, lru_cache
from typing import Any, Protocol

from pydantic import BaseModel, Field

from env.sandbox.cputime import STARVED

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


class StressSpec(BaseModel):
    """The concurrency check: controlled interleavings of the submission's code (env/sandbox/inside/explorer.py)."""

    cls: str
    random_scenarios: int = Field(16, ge=0, le=200, description="PCT scenarios on top of the two-thread sweeps")
    threads: int = Field(3, ge=2, le=6, description="Threads of a PCT scenario")
    ops: tuple[int, int] = Field((1, 3), description="Operations per thread of a PCT scenario (inclusive range)")


class StressOutcome(BaseModel):
    passed: bool
    schedules: int = Field(0, description="Interleavings the explorer ran")
    message: str = ""
    busy: str = Field("", description="Limits counted in CPU time only: the real threads were starved by the machine, nothing decided")


class ConcurrencyCheck(Protocol):
    """What a task's concurrency check is to the verdict (env.families.classic.judge) and trace_report's race report: the
    classic counter's (``CounterCheck``) or a race-family class's under its sequential model (env.families.race.check)."""

    @property
    def cls(self) -> str: ...

    def plan(self, rng: random.Random) -> dict[str, Any]:
        """The explorer's scenarios, drawn from ``rng``, with the real-threads run's settings under ``"hammer"``."""
        ...

    def judge_exploration(self, plan: dict[str, Any], reply: Any, source: str) -> StressOutcome: ...

    def judge_hammer(self, plan: dict[str, Any], reply: Any) -> str:
        """"" when the real threads left what a correct object gives, else what went wrong."""
        ...

    def problem(self, observation: dict[str, Any], scenario: dict[str, Any]) -> str:
        """What a correct object would not have done in one schedule ("" when nothing)."""
        ...

    def describe(self, scenario: dict[str, Any]) -> str:
        """The scenario in words, its start included."""
        ...


# -- the plan -------------------------------------------------------------------------------------

# Every check sweeps (two threads, one preemption at every point, both orders) the boundaries: decrements
# racing at counts 1 and 0, increments racing on the peak, an increment racing a decrement from zero or just
# above, reset racing an increment. Where a count above the boundary makes no difference to what is caught, it
# comes from the secret, as do the PCT scenarios (three threads, random operations).
#
# Racy code can also switch its race on only at large counts or after many calls (measured: code racing only at
# counts of 10,000 and more, or after 20,000 calls on one object, scored 1.0 when every scenario started at zero). So
# scenarios also start from states drawn from the secret: a count and a peak, warm-up calls made through the object's
# API, and a number of calls its counters are set to have counted on top (hammer.py's ``Starts`` sets them, through
# the object's API and its state). Two sweeps start from counts HIGH..TOP with CALLS..TOP calls counted (reset racing
# a decrement; increments racing on the peak at the count), so every threshold on the count or the peak up to HIGH,
# and on a counter of calls up to CALLS / 2, is crossed by a sweep in every check; half the PCT scenarios start from
# zero as before, half from counts spread over every decade up to TOP, and the real-threads run's one object from a
# drawn start after many warm-up calls. What no draw reaches (a window of counts between the draws, calls counted
# where the state cannot be located beyond the warm-ups, a state that cannot be set, a time, a thread's identity) is
# the lock-discipline review's, which reads every path of the source (docs/tasks.md).
TOP = 10**9  # the largest count, and number of calls, a scenario starts from
HIGH = 10**8  # the high sweeps start from counts HIGH..TOP
CALLS = 2 * 10**6  # ... and CALLS..TOP calls counted (half of them increments, half decrements)
# Real warm-up calls cost their time on every run (a schedule builds a fresh object), and a counter of calls kept in a
# plain int is set in the state anyway: the explorer's are few, the real-threads run's one object takes many.
WARMUP = (1, 256)  # warm-up calls of a scenario that starts above zero
HAMMER_WARMUP = (1_000, 10_000)  # ... of the real-threads run's one object, before its threads' 12,000-16,000 calls


def _log_uniform(rng: random.Random, low: int, high: int) -> int:
    """An int in [low, high] whose logarithm is uniform (low >= 1)."""
    return min(high, max(low, int(low * (high / low) ** rng.random())))


def _peak(rng: random.Random, count: int) -> int:
    """A start's peak: the count itself (each increment raises it) or above it."""
    return count if rng.random() < 0.5 else count + _log_uniform(rng, 1, max(1, count))


def _sweep(setup: list[str], a: str, b: str, start: list[int] | None = None, warmup: int = 0, calls: int = 0) -> dict[str, Any]:
    return {"setup": setup, "threads": [[a], [b]], "sweep": True, "start_state": start or [0, 0], "warmup": warmup, "calls": calls}


def _sweeps(rng: random.Random) -> list[dict[str, Any]]:
    sweeps = [
        _sweep(["increment"] * rng.randint(0, 2), "increment", "increment"),  # the peak at the count: both raise it
        _sweep(["increment"], "decrement", "decrement"),
        _sweep([], "decrement", "decrement"),
        _sweep(["increment"] * rng.randint(0, 1), "increment", "decrement"),
        _sweep(["increment"] * rng.randint(0, 2), "reset", "increment"),
    ]
    # From the top of the range, with many calls counted: a decrement racing reset (which writes the count whatever it
    # held, so a decrement's lost update shows, and one that checks before it acts goes below zero, as at count 1), and
    # increments racing on the peak at the count (a lost increment shows there too).
    top = _log_uniform(rng, HIGH, TOP)
    sweeps.append(_sweep([], "reset", "decrement", [top, _peak(rng, top)], _log_uniform(rng, *WARMUP), _log_uniform(rng, CALLS, TOP)))
    top = _log_uniform(rng, HIGH, TOP)
    sweeps.append(_sweep([], "increment", "increment", [top, top], _log_uniform(rng, *WARMUP), _log_uniform(rng, CALLS, TOP)))
    return sweeps


def explore_plan(spec: StressSpec, rng: random.Random) -> dict[str, Any]:
    """The scenarios of one check, drawn from ``rng`` (which the episode derives from the server's secret)."""
    scenarios = _sweeps(rng)
    n = spec.random_scenarios
    zero = set(rng.sample(range(n), n // 2))
    above = [i for i in range(n) if i not in zero]
    strata = dict(zip(above, rng.sample(range(len(above)), len(above)), strict=True))  # each its own slice of the decades
    for index in range(n):
        threads = [[rng.choice(OPS) for _ in range(rng.randint(*spec.ops))] for _ in range(spec.threads)]
        decrements = sum(t.count("decrement") for t in threads)
        priorities = rng.sample(range(1, spec.threads + 1), spec.threads)
        changes = [rng.random() for _ in range(rng.choice((1, 2)))]  # PCT depth 2 or 3
        start, warmup, calls = [0, 0], 0, 0
        if index in strata:
            count = min(TOP, max(1, int(TOP ** ((strata[index] + rng.random()) / len(above)))))
            start = [count, _peak(rng, count)]
            warmup = _log_uniform(rng, *WARMUP)
            calls = _log_uniform(rng, 1, TOP)
        # up to enough for every decrement: from zero, decrements race at the boundary too
        scenarios.append({"setup": ["increment"] * rng.randint(0, decrements), "threads": threads, "priorities": priorities,
                          "changes": changes, "start_state": start, "warmup": warmup, "calls": calls})
    count = _log_uniform(rng, 1, TOP)
    hammer = {"cls": spec.cls, "threads": 4, "ops": 1500 + rng.randint(0, 500), "switch": 1e-6, "seconds": 2.0,
              "start_state": [count, _peak(rng, count)], "warmup": _log_uniform(rng, *HAMMER_WARMUP), "calls": _log_uniform(rng, 1, TOP)}
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


def setup_state(setup: tuple[str, ...], start: State = (0, 0)) -> State:
    state = start
    for op in setup:
        state = _apply(op, state)[0]
    return state


def warmed_state(warmup: int) -> State:
    """A correct object's count and peak after ``warmup`` warm-up calls from a fresh one (increment, decrement, ...)."""
    return warmup % 2, 1 if warmup > 0 else 0


def start_used(report: dict[str, Any], settings: dict[str, Any]) -> State | None:
    """The start a scenario's run (or the real-threads run) reports it began from: the planned one, or when the child
    could not set that in the object's state, the one its warm-up calls reached from zero; None for anything else.

    Accepting the child's word is safe: every observation is judged against the start accepted here, so a child that
    reports a start its object is not in makes a correct object fail, never a racy one pass."""
    planned = list(settings.get("start_state", (0, 0)))
    used = report.get("start_used", planned)
    if not (isinstance(used, list | tuple) and len(used) == 2 and all(type(v) is int for v in used)):
        return None
    if list(used) in (planned, list(warmed_state(settings.get("warmup", 0)))):
        return used[0], used[1]
    return None


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

    # The counts from each (count, how far each thread got): shared by every order that gets there, so three threads
    # of three calls are a few hundred steps, not 1,680 orders walked call by call (the judge's hottest loop).
    @cache
    def finals(count: int, at: tuple[int, ...]) -> frozenset[int]:
        found: set[int] = set()
        for index, calls in enumerate(threads):
            if at[index] < len(calls):
                after = _apply(calls[at[index]], (count, count))[0][0]
                found |= finals(after, at[:index] + (at[index] + 1,) + at[index + 1 :])
        return frozenset(found) if found else frozenset({count})

    return finals(start[0], (0,) * len(threads))


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
    began = start_used(observation, scenario)
    if began is None:
        return "the concurrency check returned a malformed observation"
    start = setup_state(tuple(scenario["setup"]), began)
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


def interleaving(observation: dict[str, Any], source: str) -> list[str]:
    """The switches of a failing schedule, in the submission's own lines (the race family's verdict shows them too)."""
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


def describe(scenario: dict[str, Any], start: State | None = None) -> str:
    """The scenario in words (never its counts); ``start``, the state it ran from, says whether the check set one."""
    who = "; ".join(f"thread {THREAD_NAMES[i]}: {', '.join(t)}" for i, t in enumerate(scenario["threads"]))
    text = f"{len(scenario['threads'])} threads ({who}) on one shared counter"
    if start is not None and tuple(start) != (0, 0) and tuple(start) != warmed_state(scenario.get("warmup", 0)):
        text += " whose count and peak the check set beforehand"
    return text


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
            steps = interleaving(observation, source)
            text = f"{describe(scenario, start_used(observation, scenario))}, interleaved by a controlled scheduler: {found}."
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
    start = start_used(reply, settings)
    if start is None:
        return "the real-threads check returned a malformed report"
    intro = f"{settings['threads']} real threads calling"
    top = start[0] + total  # the count after the increments, from the start the object was in
    for phase, count, peak in (("increment", top, max(start[1], top)), ("decrement", start[0], max(start[1], top))):
        seen = reply.get(phase)
        if not isinstance(seen, dict):
            return "the real-threads check returned nothing"
        if seen.get("unfinished") and settings.get("cpu") and seen.get("starved"):
            return (f"{STARVED}: {intro} {phase} had used less than their {settings['seconds']:g} s of CPU time when the "
                    f"wall-clock backstop of {settings['backstop']:g} s stopped them (an infrastructure fault, not the code's outcome)")  # fmt: skip
        if seen.get("unfinished"):
            return f"{intro} {phase} did not finish within {settings['seconds']:g} s" + (" of CPU time" if settings.get("cpu") else "")
        if seen.get("errors"):
            return f"{intro} {phase} raised: " + "; ".join(map(str, seen["errors"]))[:400]
        if seen.get("count") != count:
            return f"{intro} {phase} {settings['ops']} times each, with preemption forced often: updates were lost (the final count is wrong)"
        if seen.get("peak") != peak:
            return f"{intro} {phase} {settings['ops']} times each: the peak lost an update (get_peak() is wrong)"
    return ""


class CounterCheck:
    """The classic race task's check (the connection counter): the functions above, as a ``ConcurrencyCheck``."""

    def __init__(self, spec: StressSpec):
        self.spec = spec

    @property
    def cls(self) -> str:
        return self.spec.cls

    def plan(self, rng: random.Random) -> dict[str, Any]:
        return explore_plan(self.spec, rng)

    def judge_exploration(self, plan: dict[str, Any], reply: Any, source: str) -> StressOutcome:
        return judge_exploration(plan, reply, source)

    def judge_hammer(self, plan: dict[str, Any], reply: Any) -> str:
        return judge_hammer(plan, reply)

    def problem(self, observation: dict[str, Any], scenario: dict[str, Any]) -> str:
        return problem(observation, scenario)

    def describe(self, scenario: dict[str, Any]) -> str:
        setup = scenario.get("setup")
        return describe(scenario) + (f", after {', '.join(setup)} on one thread" if setup else "")
