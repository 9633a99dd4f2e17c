"""What an agent is: it sees wire-level observations (dicts) and returns wire-level actions (dicts).

    agent = AGENTS["heuristic"]()
    agent.begin(task_summary, first_observation, random.Random(seed))
    while not done:
        action = agent.act(observation)          # e.g. {"action_type": "run_tests"}

The same agent plays in-process or over /ws: the harness (env.eval.drivers) only moves dicts.
``task_summary`` is the task's /tasks entry (family, limits, and a repository task's tools).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from env.registry import Registry

Observation = dict[str, Any]
Action = dict[str, Any]


class Agent:
    name = "agent"

    def begin(self, task: dict[str, Any], observation: Observation, rng: random.Random) -> None:
        self.task, self.rng = task, rng

    def act(self, observation: Observation) -> Action:
        raise NotImplementedError

    def usage(self) -> dict[str, int]:
        """Tokens spent on the last action (LLM agents); baselines spend none."""
        return {}

    @classmethod
    def unready(cls) -> str:
        """Why no episode of this agent can be played here (what to set, named), or "": asked before any is played."""
        return ""


AGENTS: Registry[Callable[[], Agent]] = Registry("agent")


def unready(made: Callable[[], Agent]) -> str:
    """Why a registered agent (its class) cannot play here (``Agent.unready``), or ""."""
    return made.unready() if isinstance(made, type) and issubclass(made, Agent) else ""


def register(name: str) -> Callable[[type[Agent]], type[Agent]]:
    def add(cls: type[Agent]) -> type[Agent]:
        cls.name = name
        AGENTS.add(name, cls)
        return cls

    return add
