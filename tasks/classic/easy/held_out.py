"""Held-out cases for binary_search: drawn per episode from the server's secret, never shown to the agent.

    cases(random.Random(1))   # [(case id, fn(sol)), ...]: one case per category of the specification

The categories are the specification's: the target first, last, in the middle or anywhere, absent (below,
above, in a gap), duplicated, a one-element list (found and missing) and the empty list. The arrays and
targets change with every draw, so no table of answers fits them. Every case asserts the specification
itself (an index holding the target, or -1), not one implementation's answer.
"""

import random

# The visible tests' lists: a held-out case never repeats one, so a table of the visible answers fits none.
_VISIBLE = ([1, 3, 5, 7, 9], [42], [2, 2, 2, 2, 2], [])


def _sorted_unique(rng, size):
    while True:
        start = rng.randint(-50, 50)
        values, current = [], start
        for _ in range(size):
            current += rng.randint(1, 9)
            values.append(current)
        if values not in _VISIBLE:
            return values


def _check(sol, arr, target):
    got = sol.binary_search(list(arr), target)
    if target in arr:
        assert type(got) is int and 0 <= got < len(arr) and arr[got] == target, "an index of the target"
    else:
        assert type(got) is int and got == -1, "-1 for a missing target"


def _case(arr, target):
    return lambda sol: _check(sol, arr, target)


def cases(rng: random.Random):
    found = []
    for name, size, pick in (
        ("first", rng.randint(2, 15), lambda a: a[0]),
        ("last", rng.randint(2, 6), lambda a: a[-1]),
        ("last-long", rng.randint(7, 40), lambda a: a[-1]),
        ("middle", rng.randint(3, 15), lambda a: a[len(a) // 2]),
        ("anywhere", rng.randint(2, 40), lambda a: rng.choice(a)),
        ("anywhere-long", rng.randint(41, 200), lambda a: rng.choice(a)),
    ):
        arr = _sorted_unique(rng, size)
        found.append((name, arr, pick(arr)))
    arr = _sorted_unique(rng, rng.randint(1, 20))
    found.append(("below", arr, arr[0] - rng.randint(1, 20)))
    found.append(("above", arr, arr[-1] + rng.randint(1, 20)))
    gapped = [v * 2 for v in _sorted_unique(rng, rng.randint(2, 20))]
    gap = rng.randrange(len(gapped) - 1)
    found.append(("gap", gapped, gapped[gap] + 1))
    base = _sorted_unique(rng, rng.randint(2, 10))
    target = rng.choice(base)
    dup = sorted(base + [target] * rng.randint(1, 5))  # base has 2 or more distinct values: never [2, 2, 2, 2, 2]
    found.append(("duplicated", dup, target))
    one = rng.choice([v for v in range(-100, 101) if v not in (42, 7)])
    found.append(("one-found", [one], one))
    found.append(("one-missing", [one], one + rng.choice((-1, 1)) * rng.randint(1, 10)))
    found.append(("empty", [], rng.choice([v for v in range(-100, 101) if v != 3])))
    return [(f"held-out::{name}", _case(arr, target)) for name, arr, target in found]
