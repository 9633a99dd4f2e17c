"""Predictions in SWE-bench's format, exported from finished episodes and evaluated back.

    pred = Prediction.from_observation(final_obs, model="my-agent")   # after a repository episode
    write_predictions([pred], Path("preds.jsonl"))
    python -m env.authoring evaluate preds.jsonl                            # FULL / PARTIAL / NO per instance
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from env.contract import Task
from env.families.catalog import TaskCatalog
from env.families.registry import FAMILIES
from env.patches import PatchError, apply_patch
from env.runtime import Runtime
from env.verdict.busy import MachineBusy, until_decided
from env.verdict.outcome import resolution
from env.verdict.repo_judge import run_tests


class Prediction(BaseModel):
    instance_id: str
    model_name_or_path: str
    model_patch: str

    @classmethod
    def from_observation(cls, observation: Any, model: str, catalog: TaskCatalog | None = None) -> Prediction:
        """From a repository episode's terminal observation (its ``info`` carries the patch)."""
        if not getattr(observation, "done", False) or "model_patch" not in (observation.info or {}):
            raise ValueError("the observation is not the end of a repository episode")
        instance_id = observation.task_id
        if catalog is not None:
            instance_id = instance_of(catalog.get(observation.task_id))
        return cls(instance_id=instance_id, model_name_or_path=model, model_patch=observation.info["model_patch"])


def instance_of(task: Task) -> str:
    """The id a task's predictions go under: its SWE-bench instance id if its family's tasks are repositories that
    record one, else its own id."""
    repository = FAMILIES[task.family].repository(task)
    return (repository.instance_id if repository is not None else "") or task.id


class Evaluation(BaseModel):
    instance_id: str
    resolution: Literal["FULL", "PARTIAL", "NO", "ERROR"]  # ERROR: not decided, the machine's fault (never the patch's)
    detail: str = ""


def write_predictions(predictions: list[Prediction], path: Path) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for prediction in predictions:
            handle.write(prediction.model_dump_json() + "\n")


def read_predictions(path: Path) -> list[Prediction]:
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        return [Prediction.model_validate(item) for item in json.loads(text)]
    return [Prediction.model_validate_json(line) for line in text.splitlines() if line.strip()]


def evaluate(runtime: Runtime, prediction: Prediction) -> Evaluation:
    """Apply the patch to the task's snapshot and grade it like SWE-bench (empty patch: NO). The limits count CPU time
    (``Limits.for_validity``): a run the machine starved runs again, and is ERROR, not NO, when every attempt was
    starved (more-itertools' gold patch was graded NO at load 4 on 2 cores, its runs stopped by the wall clock)."""
    repositories = (FAMILIES[t.family].repository(t) for t in runtime.catalog.all())
    tasks = [t for t in repositories if t is not None and prediction.instance_id in (t.instance_id, t.id)]
    if not tasks:
        return Evaluation(instance_id=prediction.instance_id, resolution="NO", detail="no such repository task")
    task = tasks[0]
    if not prediction.model_patch.strip():
        return Evaluation(instance_id=prediction.instance_id, resolution="NO", detail="empty patch")
    try:
        files = apply_patch(task.files, prediction.model_patch)
    except PatchError as exc:
        return Evaluation(instance_id=prediction.instance_id, resolution="NO", detail=str(exc))
    sandbox = runtime.sandbox.for_validity()
    try:
        verdict = until_decided(lambda: run_tests(sandbox, task, files))
    except MachineBusy as exc:
        return Evaluation(instance_id=prediction.instance_id, resolution="ERROR", detail=f"not decided, the machine was too busy: {exc}")
    if verdict.error:
        return Evaluation(instance_id=prediction.instance_id, resolution="NO", detail=verdict.error)
    return Evaluation(instance_id=prediction.instance_id, resolution=resolution(verdict.outcomes, task.fail_to_pass, task.pass_to_pass))
