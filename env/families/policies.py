"""What every family's degenerate policies share: the hypotheses they claim.

A degenerate policy (``Family.degenerate_policies``) tries to earn reward or grade without improving a trusted
test outcome; it must score exactly 0.0 with any hypothesis, the gold one included (a diagnosis pays only with a
fix), and its step rewards sum to <= 0.
"""

from __future__ import annotations

from typing import Literal

HypothesisKind = Literal["wrong", "stuffed", "correct"]

# A hypothesis that blames a cause no task has, and one that lists every cause a task could have.
WRONG = "The recursion depth is exceeded because of a deadlock in the overflow check."
STUFFED = (
    "not sure where: an off-by-one in the loop condition, should be <=; or hash_password wraps bytes in a b' prefix; "
    "or a race condition, lock not atomic, read-modify-write in increment and decrement; authenticate_user is wrong; "
    "validate_password is wrong; overflow; encoding; timing"
)


def gold_only_lines(shown: str, fixed: list[str]) -> list[str]:
    """The lines of ``fixed`` (the gold fix's changed files) that nothing the task shows has: a solution marker is at
    least 8 characters long, not a line of ``shown`` and not inside it."""
    lines = {line.strip() for line in shown.splitlines()}
    return sorted({line.strip() for line in fixed if len(line.strip()) >= 8 and line.strip() not in lines and line.strip() not in shown})
