"""The closed list of bug mechanisms an agent may name in a submission's ``mechanism`` field.

    MECHANISMS["off_by_one"]        # the description published in /tasks
    check_mechanism("race")         # raises ValueError naming the allowed values

One list for every family, so a structured hypothesis is scored by equality, not by keywords.
Each task records which of these its gold fix repairs (usually one, at most a few where the
same edit reads two ways, e.g. ``<`` for ``<=`` is both an off-by-one and a wrong operator).
"""

from __future__ import annotations

MECHANISMS: dict[str, str] = {
    "off_by_one": "a bound, index, slice or loop condition is off by one",
    "wrong_operator": "an arithmetic, comparison or boolean operator is the wrong one",
    "wrong_condition": "a condition is negated, inverted, too weak or missing",
    "wrong_value": "a constant, default, unit, rounding or format is wrong",
    "wrong_variable": "the wrong variable, attribute, key or name is used",
    "swapped_arguments": "arguments are passed in the wrong order, or a call goes to the wrong function",
    "missing_statement": "a statement, call, update or return is missing",
    "wrong_exception": "the wrong exception type is raised or caught, or an error is swallowed",
    "wrong_representation": "a value has the wrong type, encoding or representation (bytes for str, a repr, a naive time)",
    "shared_mutable_state": "mutable state is shared or mutated in place (a mutable default, a class attribute, a cache handing out its own list)",
    "stale_state": "state is not reset, invalidated or refreshed when it should be",
    "wrong_order": "operations or items come in the wrong order (initialisation, iteration over a set, sorting)",
    "race_condition": "a read-modify-write on shared state is not atomic under concurrent threads",
}


def check_mechanism(value: str) -> str:
    if value not in MECHANISMS:
        raise ValueError(f"unknown mechanism {value!r}; expected one of: {', '.join(MECHANISMS)}")
    return value
