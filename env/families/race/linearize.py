"""Whether one explored schedule is explained by some sequential order of its calls (Wing and Gong's check).

    calls = [[Call("transfer", (0, 1, 20), Result()), ...], [...]]     # per thread, in its own order, as observed
    found = explain(DOMAINS["accounts"], setup, calls, observe, final)  # final: what the observe calls returned
    found.ok, found.order, found.why                                   # an order that gives every result, or why none

A schedule of a correct object is explained by some order of the calls that keeps each thread's own order: each call
returns (or raises) what the model returns (or raises) at that point, and the reads of the final state made once the
threads finished (the class's own accessors: ``observe``) give what they gave. The search walks (state, how far each thread got) once each, so three threads of three calls are a few
hundred steps, not the 1,680 orders; ``MAX_STATES`` bounds it, and a schedule too large to decide is said to be so
(the plan's fault, never the agent's: plans stay far below it).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from env.families.race.models import Args, Model, Result, State, Value

OTHER = "<other>"  # what an observed value that is not plain data becomes: no model returns it
MAX_STATES = 200_000  # (state, progress) pairs one search may visit


@dataclass(frozen=True)
class Call:
    op: str
    args: Args
    result: Result


@dataclass(frozen=True)
class Explanation:
    ok: bool
    order: tuple[tuple[int, int], ...] = ()  # (thread, its call's index) in the order found
    why: str = ""
    undecided: bool = False  # the search passed MAX_STATES: the plan's scenario is too large to judge


def plain(value: object) -> Value:
    """An observed value as the models give theirs: JSON's lists as tuples; anything but plain data (ints, bools,
    strings, None and tuples of them, by exact type: a subclass could compare equal to anything) as ``OTHER``."""
    if value is None or type(value) in (int, bool, str):
        return value  # type: ignore[return-value]
    if type(value) in (list, tuple):
        assert isinstance(value, list | tuple)
        return tuple(plain(v) for v in value)
    return OTHER


@lru_cache(maxsize=64)
def _start(model: Model, setup: tuple[tuple[str, Args], ...]) -> State:
    """The state a scenario's setup leaves (a wide start makes up to 1,024 calls), once per scenario, not per schedule."""
    return model.start(setup)


def explain(
    model: Model, setup: tuple[tuple[str, Args], ...], threads: list[list[Call]], observe: tuple[tuple[str, Args], ...], final: tuple[Result, ...]
) -> Explanation:
    """An order of ``threads``' calls that gives every observed result and after which the ``observe`` calls (made
    once the threads finished: reads of the final state through the class's own API) give ``final``."""
    start = _start(model, setup)
    lengths = tuple(len(calls) for calls in threads)
    seen: set[tuple[State, tuple[int, ...]]] = set()
    matched_any = False
    stack: list[tuple[State, tuple[int, ...], tuple[tuple[int, int], ...]]] = [(start, (0,) * len(threads), ())]
    while stack:
        state, at, order = stack.pop()
        if (state, at) in seen:
            continue
        seen.add((state, at))
        if len(seen) > MAX_STATES:
            return Explanation(False, why=f"the scenario has more than {MAX_STATES} states to search", undecided=True)
        if at == lengths:
            matched_any = True
            if tuple(model.step(state, op, args)[1] for op, args in observe) == final:
                return Explanation(True, order)
            continue
        for index in range(len(threads) - 1, -1, -1):  # (popped lowest first: thread A's call is tried first)
            if at[index] == lengths[index]:
                continue
            call = threads[index][at[index]]
            after, expected = model.step(state, call.op, call.args)
            if expected == call.result:
                stack.append((after, at[:index] + (at[index] + 1,) + at[index + 1 :], (*order, (index, at[index]))))
    if matched_any:
        return Explanation(False, why="every order giving these results ends in another state than the one the final reads show")
    return Explanation(False, why="no order of the calls gives the results they returned")
