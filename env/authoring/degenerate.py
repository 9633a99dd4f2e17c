"""Degenerate policies: action lists that fix nothing, for the red-team suite and the validator.

    for name, actions in degenerate_policies(task, hypothesis="wrong").items():
        play(task, actions)        # grade exactly 0.0; the step rewards sum to <= 0

Each family writes its own (``Family.degenerate_policies``): giving up, resubmitting the bug, the bug with a
no-op edit, a stuffed hypothesis, query or test-run spam, alternating a broken submission with the bug, an edit
next to the bug. Each must score exactly 0.0 with any hypothesis, the gold one included (a diagnosis pays only
with a fix), and its step rewards sum to <= 0.
"""

from __future__ import annotations

from env.contract import Task
from env.families.base import Action

# The classic family's own, re-exported where the red-team tests import them (tests/test_architecture.py names this).
from env.families.classic.policies import lookup_table, noop_variants
from env.families.policies import HypothesisKind
from env.families.registry import FAMILIES

__all__ = ["degenerate_policies", "lookup_table", "noop_variants"]


def degenerate_policies(task: Task, hypothesis: HypothesisKind = "wrong") -> dict[str, list[Action]]:
    """Every degenerate policy for ``task`` (the hypothesis kind matters where the family's actions claim one)."""
    return FAMILIES[task.family].degenerate_policies(task, hypothesis)
