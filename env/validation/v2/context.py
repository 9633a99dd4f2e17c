"""The run: what every check of one validation reads (the server, the manifest, the tasks) and the episodes
several checks share (the oracle's and the floor's, played once per task however many checks read them)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NotRequired, Required, TypedDict, TypeVar

from openenv.validation.manifest import NormalizedManifest

from env.authoring.oracle import oracle_actions
from env.families.catalog import TaskCatalog
from env.families.registry import Task
from env.validation.player import PlayedEpisode, play_http

ROOT = Path(__file__).resolve().parents[3]
WORKERS = 4  # tasks played at once
LIMITS: tuple[Literal["max_steps", "max_attempts", "tests_total"], ...] = ("max_steps", "max_attempts", "tests_total")
T = TypeVar("T")


class ToolFunction(TypedDict):
    name: str


class PublishedTool(TypedDict):
    """A tool as /tasks publishes it (OpenAI's function-tool shape)."""

    function: ToolFunction


class Profile(TypedDict, total=False):
    tools: list[PublishedTool]


class ListedTask(TypedDict, total=False):
    """One task of ``GET /tasks`` (the fields the checks read)."""

    id: Required[str]
    family: str
    tools: list[PublishedTool]
    profiles: dict[str, Profile] | None
    max_steps: int
    max_attempts: int
    tests_total: int


class ManifestTask(TypedDict, total=False):
    """One entry of openenv.yaml's ``tasks`` list."""

    id: Required[str]
    max_steps: int
    max_attempts: int
    tests_total: int


class RawManifest(TypedDict, total=False):
    """openenv.yaml as YAML reads it (what OpenEnv's normalized manifest leaves out: the task list)."""

    tasks: NotRequired[list[ManifestTask]]


@dataclass
class Shared:
    """One shared play: the first reader plays it, the others wait for its outcome (an episode or the error)."""

    done: threading.Event = field(default_factory=threading.Event)
    episode: PlayedEpisode | None = None
    error: BaseException | None = None


@dataclass
class Run:
    """What every check of one validation reads: the server, the manifest, the tasks, and plays shared between checks."""

    url: str
    root: Path
    manifest: NormalizedManifest | None
    raw_manifest: RawManifest
    catalog: TaskCatalog
    task_ids: list[str]
    listed: list[ListedTask]
    server_pid: int | None = None
    _cache: dict[tuple[str, str], Shared] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def task(self, task_id: str) -> Task:
        return self.catalog.get(task_id)

    def family(self, task_id: str) -> str:
        return next((t.get("family", "") for t in self.listed if t["id"] == task_id), "")

    def representatives(self, among: list[str] | None = None) -> list[str]:
        """One task per family, and the race task: where a check's meaning needs no more than that."""
        chosen: list[str] = []
        for task_id in self.task_ids if among is None else among:
            if self.family(task_id) not in {self.family(c) for c in chosen} or task_id == "hard":
                chosen.append(task_id)
        return chosen

    def cached(self, key: tuple[str, str], make: Callable[[], PlayedEpisode]) -> PlayedEpisode:
        with self._lock:
            shared = self._cache.get(key)
            owner = shared is None
            if shared is None:
                shared = self._cache[key] = Shared()
        if owner:
            try:
                shared.episode = make()
            except BaseException as exc:  # recorded, re-raised in every reader
                shared.error = exc
            shared.done.set()
        shared.done.wait()
        if shared.error is not None:
            raise shared.error
        assert shared.episode is not None
        return shared.episode

    def oracle(self, task_id: str) -> PlayedEpisode:
        return self.cached(("oracle", task_id), lambda: play_http(self.url, task_id, 1, oracle_actions(self.task(task_id))))

    def floor(self, task_id: str) -> PlayedEpisode:
        return self.cached(("floor", task_id), lambda: play_http(self.url, task_id, 1, []))


def each_task(task_ids: Iterable[str], work: Callable[[str], T]) -> list[T]:
    with ThreadPoolExecutor(WORKERS) as pool:
        return list(pool.map(work, task_ids))
