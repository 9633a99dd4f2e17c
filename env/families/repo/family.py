"""The repository family: a small project with its own tests, SWE-bench style (FAIL_TO_PASS / PASS_TO_PASS);
the agent works on a private workspace with the tools of its profile and submits.

    REPO.builtin()               # every folder under tasks/repo/
    REPO.load(folder, data)      # an imported SWE-bench instance loads the same way
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from env.families.base import Family
from env.families.repo.episode import RepoEpisode
from env.families.repo.grader import grade_repo
from env.interface import Interface, profile_named
from env.project import RepoTask, load_repo_task
from env.runtime import Runtime


class RepoFamily(Family[RepoTask]):
    name = "repo"
    description = "A repository whose FAIL_TO_PASS tests fail; fixed when they pass and PASS_TO_PASS still do"
    grader = staticmethod(grade_repo)

    def load(self, folder: Path, data: dict[str, Any]) -> RepoTask:
        return load_repo_task(folder, data)

    def interface(self, profile: str | None = None, edit_gate: bool | None = None, aliases: object = None) -> Interface:
        chosen = profile_named(profile)
        return Interface.build(chosen, chosen.tools, edit_gate, aliases)

    def episode(self, runtime: Runtime, task: RepoTask, seed: int, episode_id: str, interface: Interface | None = None) -> RepoEpisode:
        return RepoEpisode(runtime, task, seed, episode_id, interface or self.interface())


REPO = RepoFamily()
