"""The resumable record of a synthesis (or a mining): one JSON line per candidate decided, one per run's wall time.

    append(path, decision.model_dump_json())      # a line a stop cut short is ended first
    read_ledger(path)                             # the decisions, a cut line skipped (its candidate is decided again)
    read_lines(path, PairDecision)                # another ledger's lines, as its own model
    run_seconds(path)                             # every run's wall time so far
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel

Line = TypeVar("Line", bound=BaseModel)


class Decision(BaseModel):
    """One line of the ledger: what became of one candidate."""

    key: str
    # busy: the machine starved its runs (nothing decided: a resumed synthesis tries it again)
    status: Literal["valid", "invalid", "uncaught", "duplicate", "uncovered", "no-op", "hangs", "breaks-collection", "setup", "busy"]
    task: str = ""
    detail: str = ""
    seconds: float = 0.0
    # What validating it cost, when it got that far: runs of each state, CPU of this process's tree (env.authoring.cost)
    validation_runs: int = 0
    validation_cpu_seconds: float = 0.0
    validation_wall_seconds: float = 0.0


def append(path: Path, line: str) -> None:
    """One JSON line; a line a stop cut short is ended first, so it never swallows this one."""
    cut = path.is_file() and path.stat().st_size > 0 and not path.read_bytes().endswith(b"\n")
    with path.open("a", encoding="utf-8") as handle:
        handle.write(("\n" if cut else "") + line + "\n")


def run_seconds(path: Path) -> list[float]:
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            found.append(float(json.loads(line)["seconds"]))
        except (ValueError, TypeError, KeyError):
            continue  # a line cut by a stop mid-write
    return found


def read_ledger(path: Path) -> list[Decision]:
    return read_lines(path, Decision)


def read_lines(path: Path, model: type[Line]) -> list[Line]:
    if not path.is_file():
        return []
    decisions = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            decisions.append(model.model_validate_json(line))
        except ValueError:
            continue  # a line cut by a stop mid-write: that candidate is decided again
    return decisions
