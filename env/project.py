"""A repository task (SWE-bench style) as data: ``task.json``, the project snapshot, the gold patch.

    task = load_repo_task(Path("tasks/repo/repo-mutable-default"))
    task.files                  # {path: text} of the buggy snapshot, tests included
    task.source_files           # what runs in the sandbox (no test files)
    task.grading_tests          # the test files every graded run uses (test_patch applied)
    task.gold_files             # the snapshot with gold.patch applied (never shown to agents)

Folder layout: ``task.json`` (FAIL_TO_PASS / PASS_TO_PASS as lists or JSON-encoded strings),
``repo/`` (the buggy snapshot), ``gold.patch`` (the fix, non-test files), optionally
``test_patch.diff`` (tests the agent never sees, applied before grading), ``overfit.patch`` (a fix that
fits only the visible tests, kept to prove the held-out tests catch it).

Held-out tests (``HELD_OUT`` in task.json) are ids from FAIL_TO_PASS / PASS_TO_PASS that the agent never sees:
their code lives only in ``test_patch.diff`` and their names in no observation, listing or export. They decide
the resolution with the visible ones; after a graded run the agent learns only how many of them failed.
"""

from __future__ import annotations

import importlib.machinery
import json
import posixpath
import re
import sys
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from env.graders.mechanisms import check_mechanism
from env.patches import Files, Location, apply_patch, changed_lines, patched_paths, touched

# What the trusted test process could import or run from its tree: sources, bytecode, extension modules, stubs, and
# path files (a data file of one of these kinds stays in the sandbox's copy only).
_IMPORTABLE = (*importlib.machinery.all_suffixes(), ".pyi", ".pth")

MAX_FILE_BYTES = 512 * 1024
_TEST_NAME = re.compile(r"^(test_.*\.py|.*_test\.py|conftest\.py)$")
_TEST_DIRS = {"tests", "test", "testing"}
_SKIP_DIRS = {".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".tox", ".venv", "node_modules"}


def is_test_path(path: str) -> bool:
    """Test files are restored from the task before every graded run and never run in the sandbox."""
    parts = path.split("/")
    return bool(_TEST_NAME.match(parts[-1])) or any(part in _TEST_DIRS for part in parts[:-1])


def read_tree(root: Path) -> Files:
    """Every text file under ``root`` (binary and oversized files are left out)."""
    files: Files = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if not path.is_file() or path.is_symlink() or _SKIP_DIRS & set(rel.split("/")):
            continue
        data = path.read_bytes()
        if len(data) > MAX_FILE_BYTES or b"\0" in data:
            continue
        try:
            # interned: a catalog's tasks from one release hold the same files but one, read once per task (630 tasks
            # of 42 libraries: 280 MiB of file texts apart, a few MiB shared)
            files[rel] = sys.intern(data.decode("utf-8"))
        except UnicodeDecodeError:
            continue
    return files


class RepoTask(BaseModel):
    model_config = ConfigDict(frozen=True, populate_by_name=True)

    id: str
    name: str = ""
    family: Literal["repo"] = "repo"
    difficulty: Literal["easy", "medium", "hard"] = "medium"
    tags: list[str] = Field(default_factory=list)
    problem_statement: str
    fail_to_pass: list[str] = Field(alias="FAIL_TO_PASS", min_length=1)
    pass_to_pass: list[str] = Field(default_factory=list, alias="PASS_TO_PASS")
    held_out: list[str] = Field(
        default_factory=list,
        alias="HELD_OUT",
        description="Ids of FAIL_TO_PASS / PASS_TO_PASS tests the agent never sees (their code is in test_patch.diff only)",
    )
    environment: dict[str, str] = Field(default_factory=dict, description="e.g. PYTHONPATH=src for a src/ layout")
    requirements: list[str] = Field(default_factory=list, description="Distributions the tests need (pip names)")
    max_steps: int = Field(30, gt=0)
    instance_id: str = Field("", description="The SWE-bench instance id, for exported predictions")
    repo: str = Field("", description="owner/name of the upstream repository, if imported")
    base_commit: str = ""
    version: str = Field("", description="The release (or SWE-bench version) the snapshot is of")
    environment_setup_commit: str = Field("", description="SWE-bench's commit whose dependency files the requirements came from")
    mechanism: list[str] = Field(default_factory=list, description="The gold fix's mechanism(s), from env.graders.mechanisms (a submit's `mechanism` is scored against it)")
    suspect: list[Location] = Field(
        default_factory=list, description="Where the gold fix changes the buggy files (function, lines): recorded from gold.patch, checked by validate"
    )
    difficulty_basis: dict[str, int | bool | None] = Field(default_factory=dict, description="The facts the difficulty was estimated from")
    synthesis: dict[str, str] = Field(default_factory=dict, description="How a synthesized task's bug was planted (operator, release)")
    sandboxed: list[str] = Field(
        default_factory=list,
        description="Tests the split verdict cannot run: they run with the project in the sandbox, forgeable in principle (see trusted)",
    )
    dropped: dict[str, str] = Field(
        default_factory=dict,
        description="PASS_TO_PASS tests the import left out, each with why (SWE-bench's rule: a PASS_TO_PASS test is one the gold passes)",
    )
    folder: Path

    @field_validator("mechanism")
    @classmethod
    def _known_mechanisms(cls, value: list[str]) -> list[str]:
        return [check_mechanism(v) for v in value]

    @field_validator("fail_to_pass", "pass_to_pass", "held_out", mode="before")
    @classmethod
    def _json_list(cls, value: Any) -> Any:
        # SWE-bench's dataset files store both lists as JSON-encoded strings.
        return json.loads(value) if isinstance(value, str) else value

    # -- the same surface as a classic task, for /tasks and the catalog --------------------

    @model_validator(mode="after")
    def _held_out_are_listed(self) -> RepoTask:
        stray = [t for t in self.held_out if t not in self.fail_to_pass and t not in self.pass_to_pass]
        if stray:
            raise ValueError(f"HELD_OUT names tests that are neither FAIL_TO_PASS nor PASS_TO_PASS: {', '.join(stray[:4])}")
        return self

    @property
    def visible_fail_to_pass(self) -> list[str]:
        """The FAIL_TO_PASS tests the agent may see and run."""
        held = set(self.held_out)
        return [t for t in self.fail_to_pass if t not in held]

    @property
    def visible_pass_to_pass(self) -> list[str]:
        held = set(self.held_out)
        return [t for t in self.pass_to_pass if t not in held]

    @property
    def description(self) -> str:
        return self.problem_statement

    @property
    def max_attempts(self) -> int:
        return 1  # `submit` ends the episode

    @property
    def tests_total(self) -> int:
        return len(self.fail_to_pass) + len(self.pass_to_pass)

    @property
    def trusted(self) -> bool:
        """Every FAIL_TO_PASS test runs under the split: no code of the agent's can forge what resolves the task."""
        return not set(self.fail_to_pass) & set(self.sandboxed)

    def summary(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name or self.id,
            "family": self.family,
            "difficulty": self.difficulty,
            "max_attempts": self.max_attempts,
            "max_steps": self.max_steps,
            "tests_total": self.tests_total,
            "description": self.problem_statement,
            "tags": self.tags,
            "trusted": self.trusted,
        }

    # -- files ----------------------------------------------------------------------------

    @cached_property
    def files(self) -> Files:
        return read_tree(self.folder / "repo")

    @cached_property
    def gold_patch(self) -> str:
        return (self.folder / "gold.patch").read_text(encoding="utf-8")

    @cached_property
    def test_patch(self) -> str:
        path = self.folder / "test_patch.diff"
        return path.read_text(encoding="utf-8") if path.exists() else ""

    @cached_property
    def overfit_patch(self) -> str:
        """A plausible fix that passes every visible test but not the held-out ones (``overfit.patch``, never shown
        to agents): the validator proves it is not resolved."""
        path = self.folder / "overfit.patch"
        return path.read_text(encoding="utf-8") if path.exists() else ""

    @cached_property
    def gold_files(self) -> Files:
        return apply_patch(self.files, self.gold_patch)

    @cached_property
    def visible_tests(self) -> Files:
        """The snapshot's own test files: what the agent's ``run_tests`` uses (restored each time)."""
        return {p: t for p, t in self.files.items() if is_test_path(p)}

    @cached_property
    def grading_tests(self) -> Files:
        """The test files graded runs use: the snapshot's, with the hidden ``test_patch`` applied."""
        tests = self.visible_tests
        if self.test_patch:
            tests = {p: t for p, t in apply_patch(tests, self.test_patch).items() if is_test_path(p)}
        return tests

    @cached_property
    def test_directives(self) -> list[str]:
        """The test files a run collects, as SWE-bench's harness does: those FAIL_TO_PASS and PASS_TO_PASS name, and
        those the test patch touches. Any other test file is never collected, so its import errors touch nothing."""
        named = [t.split("::")[0] for t in self.fail_to_pass + self.pass_to_pass]
        patched = [p for p in patched_paths(self.test_patch) if is_test_path(p)] if self.test_patch else []
        return sorted({p for p in named + patched if p.endswith(".py")})

    @property
    def source_files(self) -> Files:
        return source_only(self.files)

    @cached_property
    def data_files(self) -> Files:
        """The snapshot's files outside the tests that are no Python module (README, JSON, fixtures' inputs): tests read
        them by path from the repository, so the test process's tree holds them too. Modules stay out of it, or they
        would shadow the project's code the tests must reach in the sandbox."""
        return {p: t for p, t in self.files.items() if not is_test_path(p) and not p.endswith(_IMPORTABLE)}

    @cached_property
    def gold_locations(self) -> list[Location]:
        return touched(self.files, self.gold_patch)

    @cached_property
    def gold_lines(self) -> list[Location]:
        """The source lines the gold patch changes, per function: what a submit's ``suspect`` is scored against."""
        return changed_lines(self.source_files, source_only(self.gold_files))

    def check_folder(self) -> None:
        """Read the snapshot and apply every patch now, so that a folder that cannot serve is refused when it loads, with
        the file and why, never first at a run (a traversing path in ``test_patch.diff`` was an HTTP 500 at ``submit``):
        ``repo/`` is a directory, and ``gold.patch``, ``test_patch.diff`` and ``overfit.patch`` can be read, name only
        paths inside the project and apply. What they give stays cached for the runs. ValueError otherwise."""
        if not (self.folder / "repo").is_dir():
            raise ValueError("repo/ is missing or not a directory: a repository task's snapshot lives in repo/")
        checks = {
            "gold.patch": lambda: self.gold_files,
            "test_patch.diff": lambda: (self.grading_tests, self.test_directives),
            "overfit.patch": lambda: apply_patch(self.files, self.overfit_patch) if self.overfit_patch else {},
        }
        for name, check in checks.items():
            try:
                check()
            except OSError as exc:
                raise ValueError(f"{name} cannot be read: {exc.strerror or exc}") from None
            except ValueError as exc:  # PatchError, or text that is not UTF-8
                raise ValueError(f"{name}: {exc}") from None

    @property
    def source_paths(self) -> list[str]:
        """Import roots inside the project: PYTHONPATH entries, then the project root."""
        entries = [p for p in self.environment.get("PYTHONPATH", "").split(":") if p]
        return [posixpath.normpath(p) for p in entries] + ["."]


def source_only(files: Files) -> Files:
    return {p: t for p, t in files.items() if not is_test_path(p)}


def top_level_names(files: Files, paths: list[str]) -> set[str]:
    """The importable top-level modules and packages of a project (what tests import)."""
    names = set()
    for path in files:
        for root in paths:
            prefix = "" if root == "." else root.rstrip("/") + "/"
            if not path.startswith(prefix):
                continue
            first = path[len(prefix) :].split("/")[0]
            if "/" in path[len(prefix) :] and first.isidentifier():
                names.add(first)
            elif first.endswith(".py") and first[:-3].isidentifier():
                names.add(first[:-3])
    return names


def load_repo_task(folder: Path, data: dict[str, Any] | None = None) -> RepoTask:
    if data is None:
        data = json.loads((folder / "task.json").read_text(encoding="utf-8"))
    return RepoTask(folder=folder, **data)
