"""The procedural family's data: bug types, difficulty presets, splits, and a generated task.

    task = generate(7, "logic_error", noise=0.3, drift=0.1, seed=42)     # env.families.procedural.generator
    task.fault                        # "pagehouse/discounts.py::volume_bp"
    task.functions[0].calls           # ["pagehouse/catalog.py::get", ...]
    folder = task.write(Path("out/proc-42"))   # task.json, repo/, gold.patch
    load_repo_task(folder)            # an ordinary repository task

``T ~ D(n, b, η, δ, seed)``: ``n`` service modules, bug type ``b``, noise ``η`` and drift ``δ``
(carried for the log model, which lives elsewhere), and the seed. Difficulty presets map to ranges of
``(n, η, δ)``; splits fix the bug types and a seed range each, disjoint between splits.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from env.patches import make_patch

BugType = Literal["logic_error", "key_error", "dependency_error", "state_corruption", "stochastic_bug"]
BUG_TYPES: tuple[BugType, ...] = ("logic_error", "key_error", "dependency_error", "state_corruption", "stochastic_bug")

MIN_FILES, MAX_FILES = 2, 20


class Preset(BaseModel):
    """Inclusive ranges a difficulty draws from."""

    model_config = ConfigDict(frozen=True)

    files: tuple[int, int]
    noise: tuple[float, float]
    drift: tuple[float, float]


PRESETS: dict[str, Preset] = {
    "easy": Preset(files=(2, 4), noise=(0.0, 0.2), drift=(0.0, 0.1)),
    "medium": Preset(files=(5, 8), noise=(0.2, 0.4), drift=(0.1, 0.2)),
    "hard": Preset(files=(9, 14), noise=(0.4, 0.6), drift=(0.2, 0.35)),
    "extreme": Preset(files=(15, 20), noise=(0.6, 0.9), drift=(0.35, 0.5)),
}

# RepoTask knows three difficulties; extreme is a harder "hard".
REPO_DIFFICULTY: dict[str, Literal["easy", "medium", "hard"]] = {"easy": "easy", "medium": "medium", "hard": "hard", "extreme": "hard"}

SPLITS: dict[str, tuple[BugType, ...]] = {
    "train": ("logic_error", "key_error"),
    "test": ("logic_error", "key_error"),
    "ood": ("state_corruption", "stochastic_bug"),
}
SPLIT_SIZE = 100_000
SPLIT_BASE: dict[str, int] = {"train": 0, "test": 100_000, "ood": 200_000}


def split_seed(split: str, index: int) -> int:
    """The seed of the ``index``-th task of a split: train 0-99 999, test 100 000-199 999, ood 200 000-299 999."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; known: {', '.join(SPLITS)}")
    if not 0 <= index < SPLIT_SIZE:
        raise ValueError(f"index must be within [0, {SPLIT_SIZE - 1}], got {index}")
    return SPLIT_BASE[split] + index


Outcome = Literal["PASSED", "FAILED", "ERROR", "SKIPPED"]


class CheckReport(BaseModel):
    """The validation of a task: each test's outcome in every run of the buggy and the gold files."""

    ok: bool
    problems: list[str]
    buggy: list[dict[str, Outcome]] = Field(description="one {test id: outcome} per run")
    gold: list[dict[str, Outcome]]
    seconds: float
    held_out: list[str] = Field(default_factory=list, description="the ids in the lists the agent never sees")
    overfit: dict[str, Outcome] | None = Field(None, description="one run of the lookup-table fix, when the task has one")


class FunctionInfo(BaseModel):
    """One function of the generated service, as the log and noise models need it."""

    file: str = Field(description="e.g. pagehouse/orders.py")
    name: str = Field(description="place, or Cart.add for a method")
    calls: list[str] = Field(default_factory=list, description="project functions it calls, as file::name")
    logs: list[str] = Field(default_factory=list, description="the %-style templates of the messages it logs")


class GeneratedTask(BaseModel):
    """A validated procedural task: the buggy service, its tests, the gold files and the facts about it."""

    id: str
    name: str
    seed: int
    n_files: int
    bug: BugType
    noise: float
    drift: float
    difficulty: str | None = None
    split: str | None = None
    package: str
    files: dict[str, str] = Field(description="the buggy project, tests included")
    gold_files: dict[str, str] = Field(description="the same paths, fixed")
    fail_to_pass: list[str] = Field(description="every FAIL_TO_PASS test, held-out ones included")
    pass_to_pass: list[str]
    held_out: list[str] = Field(default_factory=list, description="ids of FAIL_TO_PASS / PASS_TO_PASS tests the agent never sees")
    held_out_files: dict[str, str] = Field(default_factory=dict, description="their test files: only in test_patch.diff, never in files")
    overfit: dict[str, str] = Field(default_factory=dict, description="the fault file fitted to the visible tests only (empty: none made)")
    fault: str = Field(description="file::function holding the defect; the gold fix changes only that function")
    functions: list[FunctionInfo]
    problem_statement: str
    environment: dict[str, str] = Field(default_factory=dict)
    max_steps: int
    tags: list[str] = Field(default_factory=list)
    validation: CheckReport | None = Field(None, exclude=True, description="the check made when the task was generated")

    @property
    def source_files(self) -> list[str]:
        """The service's modules (what ``n_files`` counts): the package's files, its ``__init__.py`` excepted."""
        return sorted(p for p in self.files if p.startswith(self.package + "/") and p.endswith(".py") and not p.endswith("/__init__.py"))

    @property
    def gold_patch(self) -> str:
        return make_patch(self.files, self.gold_files)

    @property
    def test_patch(self) -> str:
        """The held-out test files as new files: applied only for graded runs."""
        return make_patch({}, self.held_out_files)

    @property
    def overfit_patch(self) -> str:
        """The lookup-table fix (empty when none could be made)."""
        return make_patch(self.files, {**self.files, **self.overfit}) if self.overfit else ""

    def repo_task_data(self) -> dict[str, Any]:
        """``task.json`` of the task folder: what ``load_repo_task`` / ``RepoTask`` read."""
        return {
            "id": self.id,
            "name": self.name,
            "family": "repo",
            "difficulty": REPO_DIFFICULTY.get(self.difficulty or "", _difficulty_for(self.n_files)),
            "tags": list(self.tags),
            "problem_statement": self.problem_statement,
            "FAIL_TO_PASS": list(self.fail_to_pass),
            "PASS_TO_PASS": list(self.pass_to_pass),
            "HELD_OUT": list(self.held_out),
            "environment": dict(self.environment),
            "max_steps": self.max_steps,
        }

    def write(self, folder: Path) -> Path:
        """The task as a folder: ``task.json``, the buggy snapshot in ``repo/``, ``gold.patch``, the held-out tests in
        ``test_patch.diff`` (never in ``repo/``) and, when one was made, ``overfit.patch``."""
        for rel, text in sorted(self.files.items()):
            path = folder / "repo" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        (folder / "gold.patch").write_text(self.gold_patch, encoding="utf-8")
        (folder / "test_patch.diff").write_text(self.test_patch, encoding="utf-8")
        if self.overfit:
            (folder / "overfit.patch").write_text(self.overfit_patch, encoding="utf-8")
        (folder / "task.json").write_text(json.dumps(self.repo_task_data(), indent=2) + "\n", encoding="utf-8")
        return folder


def _difficulty_for(n_files: int) -> Literal["easy", "medium", "hard"]:
    """Without a preset, the preset whose file range holds ``n_files``."""
    for level, preset in PRESETS.items():
        if preset.files[0] <= n_files <= preset.files[1]:
            return REPO_DIFFICULTY[level]
    return "hard"
