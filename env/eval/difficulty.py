"""Whether the heuristic baseline solves each repository task: the third difficulty signal, measured by playing it.

    python -m env.eval difficulty tasks/synth/parse [--out DIR]

Each task folder's ``difficulty`` is estimated again from its FAIL_TO_PASS count, its call distance (both recorded
by synthesis, ``env.authoring.difficulty``) and this episode's outcome, and written back with its basis. An episode
runs the tests after each edit the agent tries, so this takes minutes per task; the steps are kept under ``--out``.
"""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

from env.authoring.difficulty import Difficulty, record, recorded
from env.eval.run import play
from env.families.catalog import TaskCatalog
from env.families.registry import task_folders
from env.project import RepoTask, load_repo_task
from env.runtime import Runtime
from env.sandbox.runner import Sandbox
from env.server.in_process import InProcessDriver


def heuristic_solves(task: RepoTask, sandbox: Sandbox, steps: Path) -> bool:
    runtime = Runtime(TaskCatalog([task]), sandbox, workers=2)
    with InProcessDriver(runtime) as driver:
        entry = driver.task(task.id)
        if entry is None:
            raise KeyError(task.id)
        return bool(play(driver, "heuristic", entry, 0, steps / f"{task.id}.jsonl")["solved"])


def measure(paths: list[Path], sandbox: Sandbox, out: Path | None = None) -> list[tuple[str, Difficulty]]:
    steps = out or Path(tempfile.mkdtemp(prefix="adbg-difficulty-"))
    results = []
    for path in paths:
        for folder in task_folders(path):
            task = load_repo_task(folder)
            found = dataclasses.replace(recorded(task), heuristic_solved=heuristic_solves(task, sandbox, steps))
            record(folder, found)
            results.append((task.id, found))
    return results
