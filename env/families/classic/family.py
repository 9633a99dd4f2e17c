"""The classic family: one module, its tests and three actions (submit_fix, query_context, give_up), as in the
reference environment; the bash and pdb profiles add a workbench of the module and its tests.

    CLASSIC.builtin()            # easy, medium, hard from tasks/classic/
    CLASSIC.interface("pdb")     # the three actions plus the debugger and the file tools
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from env.families import validation
from env.families.base import TASKS_DIR, Action, Family, ResultRow
from env.families.classic import attacks, policies
from env.families.classic import validation as classic_validation
from env.families.classic.concurrency import python_refusal
from env.families.classic.episode import ClassicEpisode
from env.families.classic.grader import grade_episode
from env.families.classic.task import TaskSpec
from env.families.classic.tools import CLASSIC_ACTIONS, CLASSIC_EXTRA, NAMES, classic_tool
from env.families.policies import HypothesisKind, gold_only_lines
from env.interface import PROFILES, Interface, profile_named
from env.project import RepoTask
from env.runtime import Runtime


class ClassicFamily(Family[TaskSpec]):
    name = "classic"
    description = "One buggy module and its tests; the agent submits the whole corrected module"
    grader = staticmethod(grade_episode)
    interaction: ClassVar[str] = "code"

    def load(self, folder: Path, data: dict[str, Any]) -> TaskSpec:
        task = TaskSpec(folder=folder, **data)
        task.check_folder()  # its modules are read now, or the folder is refused naming the one missing
        return task

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
        return Interface.build(chosen, CLASSIC_ACTIONS + extra, edit_gate, aliases, names=NAMES)

    def refusal(self, task: TaskSpec) -> str:
        return python_refusal() if task.stress is not None else ""

    def episode(self, runtime: Runtime, task: TaskSpec, seed: int, episode_id: str, interface: Interface | None = None) -> ClassicEpisode:
        return ClassicEpisode(runtime, task, seed, episode_id, interface or self.interface())

    def actions(self) -> dict[str, dict[str, Any]]:
        return {name: classic_tool(name).described() for name in CLASSIC_ACTIONS}

    def listing(self) -> dict[str, Any]:
        return {"action_types": list(CLASSIC_ACTIONS), **super().listing()}

    def oracle_actions(self, task: TaskSpec) -> list[Action]:
        return policies.oracle_actions(task)

    def overfit_actions(self, task: TaskSpec) -> list[Action] | None:
        """A table of the visible tests' answers in front of the bug (``policies.lookup_table``)."""
        return policies.overfit_actions(task)

    def overfit_ceiling(self, oracle_grade: float) -> float:
        return 0.0  # the lookup table fixes no held-out case, so it earns nothing

    def degenerate_policies(self, task: TaskSpec, hypothesis: HypothesisKind = "wrong") -> dict[str, list[Action]]:
        return policies.classic_policies(task, hypothesis)

    def smoke_actions(self, task: TaskSpec) -> list[Action]:
        return policies.smoke_actions(task)

    def read_only_actions(self, task: TaskSpec) -> list[Action]:
        return [{"action_type": "query_context", "query_type": q} for q in ("function_signature", "related_code", "error_explanation", "test_details")]

    def seeded_actions(self, task: TaskSpec) -> list[Action]:
        return []  # the seed draws the held-out cases and the concurrency check's scenarios, none of which is shown

    def solution_lines(self, task: TaskSpec) -> list[str]:
        return gold_only_lines(task.buggy_source + "\n" + task.test_source, task.gold_source.splitlines())

    def attack_actions(self, task: TaskSpec) -> dict[str, list[Action]]:
        return attacks.attack_actions(task)

    def a_visible_test(self, task: TaskSpec) -> str:
        return task.tests[0][0]

    def validate(self, runtime: Runtime, task: TaskSpec, runs: int, tasks_dir: Path = TASKS_DIR) -> validation.TaskValidation:
        return classic_validation.validate(runtime, task, runs)  # bundled or not, the same proof

    def repository(self, task: TaskSpec) -> RepoTask | None:
        return None  # one module and its tests: nothing to place, prepare or export as a SWE-bench prediction

    def report_table(self, rows: list[ResultRow]) -> str:
        return ""  # the shared tables say it all


CLASSIC = ClassicFamily()
