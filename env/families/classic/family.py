"""The classic family: one module, its tests and three actions (submit_fix, query_context, give_up), as in the
reference environment; the bash and pdb profiles add a workbench of the module and its tests.

    CLASSIC.builtin()            # easy, medium, hard from tasks/classic/
    CLASSIC.interface("pdb")     # the three actions plus the debugger and the file tools
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from env.families.base import Family
from env.families.classic.concurrency import python_refusal
from env.families.classic.episode import ClassicEpisode
from env.families.classic.grader import grade_episode
from env.families.classic.task import TaskSpec
from env.interface import CLASSIC_ACTIONS, CLASSIC_EXTRA, PROFILES, Interface, profile_named
from env.models import ACTION_TYPES, CLASSIC_TOOLS
from env.runtime import Runtime


class ClassicFamily(Family[TaskSpec]):
    name = "classic"
    description = "One buggy module and its tests; the agent submits the whole corrected module"
    grader = staticmethod(grade_episode)
    interaction: ClassVar[str] = "code"

    def load(self, folder: Path, data: dict[str, Any]) -> TaskSpec:
        return TaskSpec(folder=folder, **data)

    def builtin(self) -> list[TaskSpec]:
        """Every folder under tasks/classic/, listed in their task.json's ``order``: none is left out by a list here."""
        return sorted(super().builtin(), key=lambda task: (task.order, task.id))

    def interface(self, profile: str | None = None, edit_gate: bool | None = None, aliases: object = None) -> Interface:
        chosen = profile_named(profile)
        if chosen.name == "minimal":
            served = ", ".join(name for name in PROFILES if name != "minimal")
            raise ValueError(f"profile 'minimal' works on repository tasks; classic tasks accept: {served}")
        # the default profile keeps the reference environment's three actions, nothing else
        extra = () if chosen.name == "default" else tuple(t for t in chosen.tools if t in CLASSIC_EXTRA)
        return Interface.build(chosen, CLASSIC_ACTIONS + extra, edit_gate, aliases, own_actions=CLASSIC_ACTIONS)

    def refusal(self, task: TaskSpec) -> str:
        return python_refusal() if task.stress is not None else ""

    def episode(self, runtime: Runtime, task: TaskSpec, seed: int, episode_id: str, interface: Interface | None = None) -> ClassicEpisode:
        return ClassicEpisode(runtime, task, seed, episode_id, interface or self.interface())

    def own_tools(self) -> list[dict[str, Any]]:
        return list(CLASSIC_TOOLS)

    def catalogue(self) -> dict[str, Any]:
        return {"action_types": list(ACTION_TYPES), **super().catalogue()}


CLASSIC = ClassicFamily()
