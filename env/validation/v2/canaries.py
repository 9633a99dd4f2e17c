"""The canaries of every task: plays that must grade at or below the floor (``semantic.canary_floor``). The
manifest's ``capabilities.canaries`` names this module.

    canaries(catalog.get("easy"))   # {"degenerate.give_up": [...actions], "overfit": [...], "attack.shadows_print": [...]}

They are generated from each task, not shipped as recorded trajectories: the degenerate policies
(``env.authoring.degenerate``), the task's recorded overfit (a lookup table of the visible answers, or ``overfit.patch``)
and the attack classes of the integrity reviews (each family's ``attack_actions``: forged test output, always-equal objects, exiting early, patching
the test framework, skipping tests, conftest hooks, ``.pth`` files, rewritten tests).
"""

from __future__ import annotations

from env.authoring.degenerate import degenerate_policies
from env.authoring.oracle import overfit_actions
from env.families.registry import FAMILIES, Task
from env.validation.player import Action


def canaries(task: Task) -> dict[str, list[Action]]:
    """Every canary of a task: degenerate policies (with the gold hypothesis), its recorded overfit, the attacks."""
    found: dict[str, list[Action]] = {f"degenerate.{name}": actions for name, actions in degenerate_policies(task, "correct").items()}
    overfit = overfit_actions(task)
    if overfit is not None:
        found["overfit"] = overfit
    found.update(FAMILIES[task.family].attack_actions(task))  # env/families/*/attacks.py
    return found
