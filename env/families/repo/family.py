"""The repository family: a small project with its own tests, SWE-bench style (FAIL_TO_PASS / PASS_TO_PASS);
the agent works on a private workspace with the tools of its profile and submits.

    REPO.builtin()               # every folder under tasks/repo/
    REPO.load(folder, data)      # an imported SWE-bench instance loads the same way
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from env.families.base import TASKS_DIR, Action, Family, ResultRow
from env.families.policies import HypothesisKind
from env.families.repo import attacks, policies, validation
from env.families.repo.episode import RepoEpisode
from env.families.repo.grader import grade_repo
from env.families.validation import TaskValidation
from env.interface import Interface, profile_named
from env.project import RepoTask, load_repo_task
from env.runtime import Runtime


class RepoFamily(Family[RepoTask]):
    name = "repo"
    description = "A repository whose FAIL_TO_PASS tests fail; fixed when they pass and PASS_TO_PASS still do"
    grader = staticmethod(grade_repo)

    def load(self, folder: Path, data: dict[str, Any]) -> RepoTask:
        task = load_repo_task(folder, data)
        task.check_folder()  # its patches apply now, or the folder is refused with why
        return task

    def interface(self, profile: str | None = None, edit_gate: bool | None = None, aliases: object = None) -> Interface:
        chosen = profile_named(profile)
        return Interface.build(chosen, chosen.tools, edit_gate, aliases)

    def episode(self, runtime: Runtime, task: RepoTask, seed: int, episode_id: str, interface: Interface | None = None) -> RepoEpisode:
        return RepoEpisode(runtime, task, seed, episode_id, interface or self.interface())

    def oracle_actions(self, task: RepoTask) -> list[Action]:
        """Each file the gold patch changes rewritten with the file tools, then ``submit``."""
        return policies.oracle_actions(task)

    def overfit_actions(self, task: RepoTask) -> list[Action] | None:
        return policies.overfit_actions(task)

    def overfit_ceiling(self, oracle_grade: float) -> float:
        return oracle_grade - 1e-9  # an overfit may fix a held-out test, never all of them

    def degenerate_policies(self, task: RepoTask, hypothesis: HypothesisKind = "wrong") -> dict[str, list[Action]]:
        return policies.repo_policies(task, self.partial_view)  # the stuffed claim is the one hypothesis a submit carries

    def smoke_actions(self, task: RepoTask) -> list[Action]:
        return [{"action_type": "run_tests"}, {"action_type": "list_dir"}] + self.oracle_actions(task)

    def read_only_actions(self, task: RepoTask) -> list[Action]:
        return policies.read_only_actions(task, "view_file")

    def seeded_actions(self, task: RepoTask) -> list[Action]:
        return []  # a repository episode shows its files and test runs: nothing drawn

    def solution_lines(self, task: RepoTask) -> list[str]:
        return policies.solution_lines(task)

    def attack_actions(self, task: RepoTask) -> dict[str, list[Action]]:
        return attacks.attack_actions(task)

    def a_visible_test(self, task: RepoTask) -> str:
        return policies.a_visible_test(task)

    def validate(self, runtime: Runtime, task: RepoTask, runs: int, tasks_dir: Path = TASKS_DIR) -> TaskValidation:
        return validation.validate(runtime, task, runs, tasks_dir)

    def repository(self, task: RepoTask) -> RepoTask | None:
        return task

    def report_table(self, rows: list[ResultRow]) -> str:
        return ""  # the shared tables say it all


REPO = RepoFamily()
