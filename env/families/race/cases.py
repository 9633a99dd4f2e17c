"""A race-family task's sequential tests, from its domain's model: the tests the agent sees (as source text, run in the
server as a classic task's tests.py is) and the held-out cases an episode draws from the server's secret.

    source = visible_tests(model, "Bank")           # the tests.py text: every expected value computed by the model
    cases = held_out(model, "Bank", rng)            # [(id, check(sol))]: fresh call sequences, never shown

Both call the class one call at a time, so the buggy class passes them all (its bug shows only under concurrency):
they guard the class's sequential behaviour, which a fix must keep (a "fix" that serialises by returning early, or
drops a check, fails them). A call the model says would wait for good (``take`` on an empty queue) is never made.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

from env.families.classic.checks import raises
from env.families.race.models import BLOCKS, Args, Model, Result, State

Call = tuple[str, Args]
HELD_OUT_CASES = 6
# Calls beyond the model's racing ones that a domain's tests make (a job queue's take, once a job is waiting).
EXTRA: dict[str, tuple[tuple[Call, ...], ...]] = {"job_queue": ((("push", ("a",)), ("take", ())),)}

HEADER = '''"""Sequential tests for {cls}. `sol` is your module; each call runs in the sandbox.

Every submission is also run under a concurrency check, which passes only when three checks agree:
- a controlled scheduler interleaves two or three threads calling {cls}'s methods on one shared object, from a fresh
  object and from one that calls were made on first; every interleaving must give the results of some order of the
  calls, one at a time (return values, built-in exceptions, and the final state read through its methods), and no
  interleaving may leave threads waiting on each other for good;
- a review of the source: on every path of every method, shared state is read and written only while a lock that all
  threads share is held, and each update happens under one acquisition of it (any lock style);
- real threads running the same calls many times.
"""

from env.families.classic.checks import raises
'''


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _run(model: Model, state: State, calls: tuple[Call, ...]) -> tuple[State, list[tuple[Call, Result]]]:
    """The calls made one at a time from ``state``, each with its result; a call that would wait for good is left out."""
    done = []
    for op, args in calls:
        after, result = model.step(state, op, args)
        if result == BLOCKS:
            continue
        state = after
        done.append(((op, args), result))
    return state, done


def _lines(var: str, steps: list[tuple[Call, Result]]) -> list[str]:
    lines = []
    for (op, args), result in steps:
        call = f"{var}.{op}({', '.join(map(repr, args))})"
        if result.error:
            lines += [f'    with raises("{result.error}"):', f"        {call}"]
        elif result.value is None or isinstance(result.value, tuple):
            lines.append(f"    {call}")
        else:
            lines.append(f"    assert {call} == {result.value!r}")
    return lines


def scripts(model: Model) -> list[tuple[str, tuple[Call, ...]]]:
    """The visible tests as (name, calls before the reads): a new object; each racing call after the domain's setup;
    the domain's extra sequences; every racing call in turn."""
    tests: list[tuple[str, tuple[Call, ...]]] = [("a_new_object", ())]
    used: dict[str, int] = {}
    for call in model.racing:
        used[call[0]] = used.get(call[0], 0) + 1
        name = call[0] if used[call[0]] == 1 else f"{call[0]}_{used[call[0]]}"
        tests.append((f"{name}_after_setup", (*model.setup, call)))
    tests += [(f"{'_'.join(dict.fromkeys(op for op, _ in extra))}", extra) for extra in EXTRA.get(model.name, ())]
    tests.append(("every_call_in_turn", (*model.setup, *model.racing, *model.racing)))
    return tests


def visible_tests(model: Model, cls: str) -> str:
    var = snake(cls)
    body = [HEADER.format(cls=cls)]
    for name, calls in scripts(model):
        _, steps = _run(model, model.initial, (*calls, *model.reads))
        body.append("\n".join([f"\ndef test_{name}(sol):", f"    {var} = sol.{cls}()", *_lines(var, steps)]) + "\n")
    return "\n".join(body)


def _check(cls: str, steps: list[tuple[Call, Result]]) -> Callable[[Any], None]:
    def check(sol: Any) -> None:
        target = getattr(sol, cls)()
        for (op, args), expected in steps:
            if expected.error:
                with raises(expected.error):
                    getattr(target, op)(*args)
                continue
            got = getattr(target, op)(*args)
            if isinstance(expected.value, tuple):
                continue  # a sequence's type is the class's choice (list or tuple); the final reads check its content
            if type(got) is not type(expected.value) or got != expected.value:
                raise AssertionError(f"{op}{args!r} returned {got!r}")

    return check


def held_out(model: Model, cls: str, rng: random.Random, count: int = HELD_OUT_CASES) -> list[tuple[str, Callable[[Any], None]]]:
    """``count`` call sequences drawn from ``rng`` (3 to 9 calls of the domain's vocabulary, then the final reads), each
    checked call by call against the model."""
    vocabulary = [*model.setup, *model.racing, *model.reads, *(c for extra in EXTRA.get(model.name, ()) for c in extra)]
    cases = []
    for index in range(count):
        calls = tuple(rng.choice(vocabulary) for _ in range(rng.randint(3, 9)))
        _, steps = _run(model, model.initial, (*calls, *model.reads))
        cases.append((f"held_out_{index}", _check(cls, steps)))
    return cases
