"""A task as data: its ``task.json`` (validated here) plus the files beside it.

    spec = load_task(Path("tasks/classic/easy"))     # env.families.registry.load_task
    spec.tests_total        # counted from tests.py, never written by hand
    spec.buggy_source       # what the agent starts from

Folder layout: ``task.json``, ``buggy.py`` (the module as shipped), ``fix.py`` (the gold fix,
never shown to the agent or the sandbox), ``tests.py`` (trusted tests taking ``sol``), and
``held_out.py`` (``cases(rng)``: trusted cases drawn per episode from the server's secret, never shown;
a task whose verdict is already secret, like the concurrency check, may have none).

``tests.py`` and ``held_out.py`` are the operator's code: they run in the server process, which is the classic
verdict's trusted side (each test calls the sandboxed module over a pipe and passes only by returning normally
here), with the server's secret and every task's folder in reach. Serve only classic folders you would run as part
of the server (docs/tasks.md, "Task folders are input").
"""

from __future__ import annotations

import ast
import importlib.util
import random
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from env.families.classic.concurrency import ConcurrencyCheck, CounterCheck, StressSpec
from env.graders.hypothesis import HypothesisRules
from env.graders.mechanisms import check_mechanism
from env.patches import Location, changed_lines
from env.pyparse import parse


class TaskSpec(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True, populate_by_name=True)

    id: str
    name: str
    difficulty: Literal["easy", "medium", "hard"]
    family: str
    description: str
    order: int = Field(description="Where the task is listed among the classic tasks (lower first; ties by id)")
    max_attempts: int = Field(gt=0)
    max_steps: int = Field(gt=0)
    module: str
    allowed_imports: frozenset[str]
    hypothesis: HypothesisRules
    stress: StressSpec | None = None
    gold_hypothesis: str = Field("", description="What the gold fix fixes, for the oracle agent (never shown to agents)")
    mechanism: list[str] = Field(min_length=1, description="The gold fix's mechanism(s), from env.graders.mechanisms")
    fail_to_pass: list[str] = Field(alias="FAIL_TO_PASS", min_length=1, description="tests.py::name, or stress::Class for the stress check")
    pass_to_pass: list[str] = Field(alias="PASS_TO_PASS")
    folder: Path

    @field_validator("mechanism")
    @classmethod
    def _known_mechanisms(cls, value: list[str]) -> list[str]:
        return [check_mechanism(v) for v in value]

    @property
    def filename(self) -> str:
        return f"{self.module}.py"

    @cached_property
    def buggy_source(self) -> str:
        return (self.folder / "buggy.py").read_text(encoding="utf-8")

    @cached_property
    def gold_source(self) -> str:
        return (self.folder / "fix.py").read_text(encoding="utf-8")

    @cached_property
    def test_source(self) -> str:
        return (self.folder / "tests.py").read_text(encoding="utf-8")

    def check_folder(self) -> None:
        """Read the folder's modules now, so that a folder missing one is refused when it loads, naming it, never first
        at a reset (a missing ``buggy.py`` was an HTTP 500 there). ValueError otherwise."""
        modules = {"buggy.py": lambda: self.buggy_source, "fix.py": lambda: self.gold_source, "tests.py": lambda: self.test_source}
        for name, read in modules.items():
            try:
                read()
            except OSError as exc:
                raise ValueError(f"{name} cannot be read: {exc.strerror or exc}") from None
            except ValueError as exc:  # not UTF-8
                raise ValueError(f"{name}: {exc}") from None

    @property
    def concurrency(self) -> ConcurrencyCheck | None:
        """The submission's concurrency check (None: the task has none)."""
        return CounterCheck(self.stress) if self.stress is not None else None

    @cached_property
    def gold_locations(self) -> list[Location]:
        """The buggy module's lines (and functions) the gold fix changes: what a ``suspect`` is scored against."""
        return changed_lines({self.filename: self.buggy_source}, {self.filename: self.gold_source})

    @cached_property
    def buggy_ast(self) -> str:
        return normalized_ast(self.buggy_source)

    @cached_property
    def _tests_module(self) -> ModuleType:
        spec = importlib.util.spec_from_file_location(f"adbg_task_tests_{self.id}", self.folder / "tests.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    @cached_property
    def tests(self) -> list[tuple[str, Callable[[Any], None]]]:
        """Test ids and functions in file order, fixed before any submission runs."""
        found = [
            (name, fn)
            for name, fn in vars(self._tests_module).items()
            if name.startswith("test_") and callable(fn) and getattr(fn, "__module__", "") == self._tests_module.__name__
        ]
        return sorted(found, key=lambda item: item[1].__code__.co_firstlineno)

    @property
    def tests_total(self) -> int:
        return len(self.tests)

    @cached_property
    def _held_out_module(self) -> ModuleType | None:
        path = self.folder / "held_out.py"
        if not path.is_file():
            return None
        spec = importlib.util.spec_from_file_location(f"adbg_task_held_out_{self.id}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    def held_out_cases(self, rng: random.Random) -> list[tuple[str, Callable[[Any], None]]]:
        """This episode's held-out cases (``rng`` from the server's secret and the seed); [] if the task has none."""
        module = self._held_out_module
        return [] if module is None else list(module.cases(rng))

    def summary(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "family": self.family,
            "difficulty": self.difficulty,
            "max_attempts": self.max_attempts,
            "max_steps": self.max_steps,
            "tests_total": self.tests_total,
            "description": self.description,
            "tags": ["classic"],
            "trusted": True,  # the classic verdict's tests always run in the server; only the module is sandboxed
        }


def normalized_ast(source: str) -> str:
    """The code's AST dump: equal for two sources that differ only in comments and whitespace."""
    try:
        return ast.dump(parse(source))
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return ""
