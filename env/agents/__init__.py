"""Agents behind one interface (see base.py): the baselines (random, heuristic, oracle) and the LLM agent.

Each registers itself in ``AGENTS`` where it is defined; importing this package imports them all, so
``from env.agents import AGENTS`` always holds every agent (nobody keeps a list of them elsewhere).
"""

from env.agents import heuristic, llm, oracle, random_agent  # noqa: F401  (each module registers its agent)
from env.agents.base import AGENTS

__all__ = ["AGENTS"]
