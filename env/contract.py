"""What every task, task list and episode offers the server and the harness, whatever its family.

    task: Task = catalog.get("easy")                       # task.id, task.family, task.summary() ...
    catalog: Catalog = catalog                         # get(id), ids(split), summary(task): what a Runtime serves
    episode: Playable = family.episode(runtime, task, seed, episode_id, interface)
    episode.observe(0.0, {})      # the first observation
    episode.step(action)          # every later one
    episode.state(); episode.files(); episode.close()
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:  # annotations only: an agent process imports the contract without OpenEnv's server package
    from env.models import DebugAction, DebugObservation, DebugState


# The splits a trainer reads (OpenEnv's Task API and GET /tasks): every listed task is in exactly one.
Split = Literal["train", "validation", "test"]
SPLITS: tuple[Split, ...] = ("train", "validation", "test")
# Where a built catalog's task came from: a real bug mined from a release pair, or a bug planted by mutation.
Source = Literal["mined", "synthesized"]
SOURCES: tuple[Source, ...] = ("mined", "synthesized")
Difficulty = Literal["easy", "medium", "hard"]
DIFFICULTIES: tuple[Difficulty, ...] = ("easy", "medium", "hard")


class TaskFilter(BaseModel):
    """Which listed tasks a listing keeps (GET /tasks's query): every field given must hold; none given keeps all."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    family: str | None = None
    library: str | None = None
    source: Source | None = None
    difficulty: Difficulty | None = None
    split: Split | None = None


class Task(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def family(self) -> str: ...

    @property
    def max_steps(self) -> int: ...

    @property
    def tests_total(self) -> int: ...

    def summary(self) -> dict[str, Any]:
        """What /tasks lists about the task (never its solution), with ``difficulty``; the catalog adds where it
        serves it (``Catalog.summary``: its ``split``, and a built catalog's ``library`` and ``source``)."""
        ...


class Catalog(Protocol):
    def get(self, task_id: str) -> Task:
        """The task, or KeyError (a listed id, or one its family makes on request)."""
        ...

    def ids(self, split: Split | None = None) -> list[str]:
        """The listed ids, in listing order (of one split when ``split`` is given)."""
        ...

    def all(self, split: Split | None = None) -> Sequence[Task]: ...

    def summary(self, task: Task) -> dict[str, Any]:
        """``task.summary()`` with its ``split`` (and a built catalog's task's ``library`` and ``source``)."""
        ...

    def select(self, query: TaskFilter) -> Sequence[Task]:
        """The listed tasks ``query`` keeps, in listing order; ValueError for a family or library not served here."""
        ...


class Playable(Protocol):
    episode_id: str
    done: bool

    @property
    def family(self) -> str:
        """The task's family (what /metrics counts sessions and steps by)."""
        ...

    def observe(self, reward: float, parts: dict[str, float]) -> DebugObservation: ...

    def step(self, action: DebugAction) -> DebugObservation: ...

    def submits(self, action_type: str) -> bool:
        """Whether a step of ``action_type`` (an alias too) is a submission (what /metrics counts as one)."""
        ...

    def state(self) -> DebugState: ...

    def files(self) -> dict[str, str]:
        """The episode's files as they are now (a classic task's module, a repository's tree): in process only."""
        ...

    def close(self) -> None:
        """Releases what the episode holds (a workspace, a debugging session); safe to call twice."""
        ...
