"""The procedural family in the task catalog: ids, the listed listing, generation on demand.

    task = procedural_task("proc-hard-ood-7")    # generated (and validated), written once, then cached
    LISTED                                    # ("proc-easy-test-0", ...): what /tasks lists
    is_procedural_id("proc-extreme-train-12")    # True

An id names a difficulty preset, a split and an index within the split's seed range; the same id
is the same task, byte for byte, on any machine. A task is written as an ordinary task folder
(``task.json``, ``repo/``, ``gold.patch``, the held-out tests in ``test_patch.diff`` and their ids in
``HELD_OUT``, the lookup-table ``overfit.patch`` when one was made) whose ``task.json`` also carries the
procedural facts (noise, drift, the fault, the project's functions), so it loads like any other family.
"""

from __future__ import annotations

import atexit
import re
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from env.families.procedural.model import PRESETS, SPLIT_SIZE, SPLITS, FunctionInfo
from env.project import RepoTask
from env.scratch import scratch_root

ID = re.compile(r"^proc-(?P<level>[a-z]+)-(?P<split>[a-z]+)-(?P<index>\d{1,6})$")
LISTED = tuple(f"proc-{level}-test-0" for level in PRESETS)
# What each bug type's sites change (env.families.procedural.bugs): the mechanisms a submit's `mechanism` may name.
BUG_MECHANISMS: dict[str, list[str]] = {
    "logic_error": ["off_by_one", "wrong_operator", "wrong_condition", "wrong_value", "wrong_order"],
    "key_error": ["wrong_variable", "stale_state"],
    "dependency_error": ["swapped_arguments", "wrong_value", "wrong_variable"],
    "state_corruption": ["shared_mutable_state", "stale_state"],
    "stochastic_bug": ["off_by_one", "wrong_value"],
}


class ProceduralTask(RepoTask):
    family: Literal["procedural"] = "procedural"  # type: ignore[assignment]
    bug: str
    noise: float = Field(ge=0, le=1)
    drift: float = Field(ge=0, le=1)
    level: str | None = None
    split: str | None = None
    seed: int
    fault: str = Field(description="file::function holding the defect (never shown to agents)")
    functions: list[FunctionInfo] = Field(default_factory=list)

    @property
    def fault_file(self) -> str:
        return self.fault.split("::")[0]

    def neighbours(self) -> list[str]:
        """Real callers and callees of the faulty function (file::function)."""
        callees = next((f.calls for f in self.functions if f"{f.file}::{f.name}" == self.fault), [])
        callers = [f"{f.file}::{f.name}" for f in self.functions if self.fault in f.calls]
        return sorted(set(callers) | set(callees))

    def relevant_files(self) -> list[str]:
        return sorted({self.fault_file} | {n.split("::")[0] for n in self.neighbours()})

    def summary(self) -> dict[str, Any]:
        return {**super().summary(), "level": self.level, "split": self.split, "noise": self.noise, "drift": self.drift}


def load_procedural_task(folder: Path, data: dict[str, Any]) -> ProceduralTask:
    data = {"mechanism": BUG_MECHANISMS.get(str(data.get("bug")), []), **data}
    return ProceduralTask(folder=folder, **data)


def is_procedural_id(task_id: str) -> bool:
    match = ID.match(task_id)
    return bool(match) and match["level"] in PRESETS and match["split"] in SPLITS and int(match["index"]) < SPLIT_SIZE


class _Cache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tasks: dict[str, ProceduralTask] = {}
        self._root: Path | None = None

    def get(self, task_id: str) -> ProceduralTask:
        from env.families.procedural.generator import sample  # generation code is only loaded when a task is made

        match = ID.match(task_id)
        if not match or not is_procedural_id(task_id):
            raise KeyError(task_id)
        with self._lock:
            if task_id not in self._tasks:
                if self._root is None:
                    self._root = Path(tempfile.mkdtemp(prefix="adbg-procedural-", dir=scratch_root()))
                    atexit.register(shutil.rmtree, str(self._root), True)
                generated = sample(match["level"], match["split"], int(match["index"]))
                folder = generated.write(self._root / task_id)
                data = {**generated.repo_task_data(), "id": task_id, "family": "procedural", "bug": generated.bug,
                        "noise": generated.noise, "drift": generated.drift, "level": match["level"], "split": match["split"],
                        "seed": generated.seed, "fault": generated.fault, "functions": [f.model_dump() for f in generated.functions],
                        "mechanism": BUG_MECHANISMS[generated.bug]}
                data.setdefault("name", f"{match['level'].title()} {generated.bug.replace('_', ' ')} incident ({generated.n_files} files)")
                self._tasks[task_id] = ProceduralTask(folder=folder, **data)
            return self._tasks[task_id]


_CACHE = _Cache()


def procedural_task(task_id: str) -> ProceduralTask:
    """The task an id names (KeyError if it names none)."""
    return _CACHE.get(task_id)
