"""The oracle: plays the gold fix (it reads the task's folder), proving every task solvable over the API."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from env.agents.base import Action, Agent, Observation, register

if TYPE_CHECKING:
    from env.families.catalog import TaskCatalog


@register("oracle")
class OracleAgent(Agent):
    def __init__(self, catalog: TaskCatalog | None = None):
        # The families load the server's models (OpenEnv's server package, ~0.7 s): only the oracle needs them, so
        # they are imported when one is made, not when the agents register (inference.py imports every agent).
        from env.families.catalog import TaskCatalog

        self.catalog = catalog or TaskCatalog.from_env()
        self.plan: list[Action] = []

    def begin(self, task: dict[str, Any], observation: Observation, rng: random.Random) -> None:
        from env.authoring.oracle import oracle_actions
        from env.families.registry import FAMILIES

        super().begin(task, observation, rng)
        spec = self.catalog.get(task["id"])
        self.plan = oracle_actions(spec)
        interface = (observation.get("info") or {}).get("interface") or {}
        if interface.get("unlocked") is False:  # an edit gate: one debugger command opens it
            self.plan.insert(0, {"action_type": "debug_start", "test": FAMILIES[spec.family].a_visible_test(spec)})

    def act(self, observation: Observation) -> Action:
        return self.plan.pop(0) if self.plan else {"action_type": "give_up"}

