"""How hard a repository task is likely to be, from facts about it (never from an agent's words).

    found = estimate(task, "Class.method", heuristic_solved=False)
    found.level          # "easy" | "medium" | "hard"
    found.basis()        # {"fail_to_pass": 3, "call_distance": 2, "heuristic_solved": False}

- The visible FAIL_TO_PASS count: many failing tests triangulate the fault; one is a single clue, none (a mined bug,
  whose failing tests came with the fix and are all held out: the agent has the statement) no clue at all (the
  held-out ones are no clue: the agent never sees them).
- Call distance: the fewest calls from a failing test to the faulty function, read from the code (a test naming
  the function is 1; each function in between adds one; 0 when no chain of names is found). From the visible failing
  tests; from the held-out ones when none is visible (the bug's depth is the same, seen or not).
- Whether the heuristic baseline (small edits near the traceback) solves it, when that was measured: synthesis
  records the first two; ``python -m env.eval difficulty DIR`` plays the heuristic agent on each task (minutes per
  task: it runs the tests after every edit it tries) and records the third.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from env.project import RepoTask, source_only
from env.pyparse import parse

MAX_DISTANCE = 6


@dataclass(frozen=True)
class Difficulty:
    fail_to_pass: int
    call_distance: int  # 0: no chain found
    heuristic_solved: bool | None

    @property
    def points(self) -> int:
        """The signs of hardness counted: -1 (the heuristic agent solves it, nothing else says hard) to 5."""
        points = (self.fail_to_pass <= 2) + (self.fail_to_pass <= 1) + (self.call_distance == 0 or self.call_distance >= 3)
        points += self.call_distance >= 4
        if self.heuristic_solved is not None:
            points += 1 if not self.heuristic_solved else -1
        return points

    @property
    def level(self) -> Literal["easy", "medium", "hard"]:
        return "easy" if self.points <= 0 else "medium" if self.points <= 2 else "hard"

    @property
    def score(self) -> float:
        """``points`` on [0, 1] (the catalog's ``difficulty_score``): -1 is 0.0, 5 is 1.0."""
        return round((self.points + 1) / 6, 3)

    def basis(self) -> dict[str, int | bool | None]:
        return {"fail_to_pass": self.fail_to_pass, "call_distance": self.call_distance, "heuristic_solved": self.heuristic_solved}


def _names(node: ast.AST) -> set[str]:
    used = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            used.add(child.id)
        elif isinstance(child, ast.Attribute):
            used.add(child.attr)
    return used


def _definitions(files: dict[str, str]) -> dict[str, set[str]]:
    """Every function and class name of the project -> the names its body uses (overloads merged)."""
    calls: dict[str, set[str]] = {}
    for path, text in files.items():
        if not path.endswith(".py"):
            continue
        try:
            tree = parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                calls.setdefault(node.name, set()).update(_names(node))
    return calls


def _test_names(tests: dict[str, str], test_id: str) -> set[str]:
    """The names a test function's body uses (a parametrised id's brackets dropped)."""
    path, _, rest = test_id.partition("::")
    wanted = rest.split("[")[0].split("::")[-1]
    try:
        tree = parse(tests.get(path, ""))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == wanted:
            return _names(node)
    return set()


def call_distance(task: RepoTask, function: str) -> int:
    target = function.split(".")[-1]
    calls = _definitions(source_only(task.files))
    best = 0
    # what the agent sees (held-out tests are not in task.files); the held-out tests' code when it sees none
    failing, tests = (task.visible_fail_to_pass, task.files) if task.visible_fail_to_pass else (task.fail_to_pass, task.grading_tests)
    for test in failing:
        frontier, seen = _test_names(tests, test), set()
        for distance in range(1, MAX_DISTANCE + 1):
            if target in frontier:
                best = distance if not best else min(best, distance)
                break
            seen |= frontier
            frontier = {n for name in frontier if name in calls for n in calls[name]} - seen
            if not frontier:
                break
    return best


def estimate(task: RepoTask, function: str, heuristic_solved: bool | None = None) -> Difficulty:
    return Difficulty(len(task.visible_fail_to_pass), call_distance(task, function), heuristic_solved)


def record(folder: Path, found: Difficulty) -> None:
    """Write ``difficulty`` and ``difficulty_basis`` into a task folder's task.json (every other key kept)."""
    path = folder / "task.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["difficulty"] = found.level
    data["difficulty_basis"] = found.basis()
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def recorded(task: RepoTask) -> Difficulty:
    """The difficulty facts a task records; its call distance is measured to the gold fix's functions where it
    records none (an imported or handwritten task)."""
    basis = task.difficulty_basis
    solved = basis.get("heuristic_solved")
    if "call_distance" in basis:
        distance = int(basis["call_distance"] or 0)
    else:
        found = [d for d in (call_distance(task, w.function) for w in task.gold_lines if w.function) if d]
        distance = min(found, default=0)
    return Difficulty(len(task.visible_fail_to_pass), distance, None if solved is None else bool(solved))
