"""The oracle: plays the gold fix (it reads the task's folder), proving every task solvable over the API."""

from __future__ import annotations

import random
from typing import Any

from env.agents.base import Action, Agent, Observation, register
from env.tasks.oracle import oracle_actions
from env.tasks.registry import TaskRegistry


@register("oracle")
class OracleAgent(Agent):
    def __init__(self, registry: TaskRegistry | None = None):
        self.registry = registry or TaskRegistry.from_env()
        self.plan: list[Action] = []

    def begin(self, task: dict[str, Any], observation: Observation, rng: random.Random) -> None:
        super().begin(task, observation, rng)
        self.plan = oracle_actions(self.registry.get(task["id"]))

    def act(self, observation: Observation) -> Action:
        return self.plan.pop(0) if self.plan else {"action_type": "give_up"}
