"""The procedural family in the task catalog: ids, the listed listing, generation on demand.

    task = procedural_task("proc-hard-ood-7")    # generated (and validated), written once, then cached
    LISTED                                    # ("proc-easy-test-0", ...): what /tasks lists
    is_procedural_id("proc-extreme-train-12")    # True

An id names a difficulty preset, a split and an index within the split's seed range; the same id
is the same task, byte for byte, on any machine that has the same salt (``ENV_PROCEDURAL_SALT``, unset: the public
task; ``env.families.procedural.salt``). A task is written as an ordinary task folder
(``task.json``, ``repo/``, ``gold.patch``, the held-out tests in ``test_patch.diff`` and their ids in
``HELD_OUT``, the lookup-table ``overfit.patch`` when one was made) whose ``task.json`` also carries the
procedural facts (noise, drift, the fault, the project's functions), so it loads like any other family.

1.2 million ids exist, so what a server keeps per id is bounded: the ``CACHE_SIZE`` tasks used last (an LRU). A task
pushed out is forgotten here; its folder on the scratch file system and what hangs on the task (its files, its log
facts) go when the last episode holding it ends, so the scratch space and memory the family holds
are at most ``CACHE_SIZE`` tasks plus those of running episodes (bench/bench_procedural_cache.py measures it).
"""

from __future__ import annotations

import atexit
import re
import shutil
import tempfile
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import Field, PrivateAttr

from env.families.procedural.model import PRESETS, SPLIT_SIZE, SPLITS, FunctionInfo
from env.families.procedural.salt import PUBLIC, ProceduralSalt
from env.families.procedural.stored import TaskStore
from env.process_state import process_wide
from env.project import RepoTask
from env.scratch import scratch_root

T = TypeVar("T")

ID = re.compile(r"^proc-(?P<level>[a-z]+)-(?P<split>[a-z]+)-(?P<index>\d{1,6})$")
LISTED = tuple(f"proc-{level}-test-0" for level in PRESETS)
CACHE_SIZE = 32  # generated tasks kept ready: 32 easy and medium ones hold 0.8 MiB of scratch (bench_procedural_cache)
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
    salt: str = Field(PUBLIC, description="the salt the task was generated with: 'public', or its fingerprint (never the salt)")
    _memo: dict[str, object] = PrivateAttr(default_factory=dict)
    _memo_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def memo(self, name: str, compute: Callable[[], T]) -> T:
        """``compute()``, once per task object: what a server derives from a task lives (and goes) with it."""
        with self._memo_lock:  # held while computing: two episodes starting together compute it once
            if name not in self._memo:
                self._memo[name] = compute()
            return self._memo[name]  # type: ignore[return-value]  # what this name's compute() returned

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
        return {**super().summary(), "level": self.level, "split": self.split, "noise": self.noise, "drift": self.drift, "salt": self.salt}


def load_procedural_task(folder: Path, data: dict[str, Any]) -> ProceduralTask:
    data = {"mechanism": BUG_MECHANISMS.get(str(data.get("bug")), []), **data}
    return ProceduralTask(folder=folder, **data)


def procedural_id(level: str, split: str, index: int) -> str:
    """The id of the ``index``-th task of ``level`` in ``split`` (what ``generate`` makes from it)."""
    task_id = f"proc-{level}-{split}-{index}"
    if not is_procedural_id(task_id):
        raise ValueError(f"no procedural task {task_id!r}: levels {', '.join(PRESETS)}, splits {', '.join(SPLITS)}, index 0-{SPLIT_SIZE - 1}")
    return task_id


def is_procedural_id(task_id: str) -> bool:
    match = ID.match(task_id)
    return bool(match) and match["level"] in PRESETS and match["split"] in SPLITS and int(match["index"]) < SPLIT_SIZE


class TaskCache:
    """The generated tasks used last, by (id, salt): at most ``size``; one pushed out loses its folder once unused."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        if size < 1:
            raise ValueError(f"a procedural task cache holds at least 1 task, not {size}")
        self.size = size
        self._lock = threading.Lock()
        self._tasks: OrderedDict[tuple[str, str], ProceduralTask] = OrderedDict()
        self._root: Path | None = None

    @property
    def root(self) -> Path | None:
        """The scratch folder the tasks are written into (None before the first)."""
        return self._root

    def __len__(self) -> int:
        return len(self._tasks)

    def get(self, task_id: str, salt: ProceduralSalt | None = None) -> ProceduralTask:
        """The task ``task_id`` names under ``salt`` (None: the setting's, read now), generated unless kept."""
        match = ID.match(task_id)
        if not match or not is_procedural_id(task_id):
            raise KeyError(task_id)
        salt = salt or ProceduralSalt.from_env()
        key = (task_id, salt.record)
        with self._lock:  # generation is serialised: it runs the generated tests in this process (one pytest session)
            found = self._tasks.get(key)
            if found is None:
                found = self._tasks[key] = self._make(task_id, match, salt)
                while len(self._tasks) > self.size:
                    self._tasks.popitem(last=False)  # its folder goes with the last reference (``_make``'s finalizer)
            self._tasks.move_to_end(key)
            return found

    def _make(self, task_id: str, match: re.Match[str], salt: ProceduralSalt) -> ProceduralTask:
        if self._root is None:
            self._root = Path(tempfile.mkdtemp(prefix="adbg-procedural-", dir=scratch_root()))
            atexit.register(shutil.rmtree, str(self._root), True)
        # A folder of its own per generation: the same id made again after being pushed out never shares one.
        folder = Path(tempfile.mkdtemp(prefix=f"{task_id}-", dir=self._root))
        store = None if salt.salted else TaskStore.from_env()  # a salted task never reaches the disk
        if store is None:
            data = self._generate(task_id, match, salt, folder)
        else:
            with store.making(task_id):  # a process making the same id at once: one makes it, the other reads it
                data = store.load(task_id, folder)
                if data is None:
                    data = self._generate(task_id, match, salt, folder)
                    store.save(task_id, data, folder)
        task = ProceduralTask(folder=folder, **data)
        weakref.finalize(task, shutil.rmtree, str(folder), True)  # an episode still playing it keeps it, and its folder
        return task

    @staticmethod
    def _generate(task_id: str, match: re.Match[str], salt: ProceduralSalt, folder: Path) -> dict[str, Any]:
        """Generate the task into ``folder``; its fields."""
        from env.families.procedural.generator import sample  # generation code is only loaded when a task is made

        generated = sample(match["level"], match["split"], int(match["index"]), salt)
        generated.write(folder)
        data = {**generated.repo_task_data(), "id": task_id, "family": "procedural", "bug": generated.bug,
                "noise": generated.noise, "drift": generated.drift, "level": match["level"], "split": match["split"],
                "seed": generated.seed, "fault": generated.fault, "functions": [f.model_dump() for f in generated.functions],
                "mechanism": BUG_MECHANISMS[generated.bug], "salt": salt.record}
        data.setdefault("name", f"{match['level'].title()} {generated.bug.replace('_', ' ')} incident ({generated.n_files} files)")
        return data


# A task is a pure function of its id and salt, resolved by the families without a Runtime (env.process_state).
_CACHE = process_wide("procedural_tasks", TaskCache)


def procedural_task(task_id: str) -> ProceduralTask:
    """The task an id names under the setting's salt (KeyError if it names none)."""
    return _CACHE.get(task_id)


def task_cache() -> TaskCache:
    """The server's cache of generated tasks (for measuring it: bench/bench_procedural_cache.py)."""
    return _CACHE
