"""What every task, task list and episode offers the server and the harness, whatever its family.

    task: Task = catalog.get("easy")                       # task.id, task.family, task.summary() ...
    catalog: Catalog = catalog                         # get(id), ids(), all(): what a Runtime serves
    episode: Playable = family.episode(runtime, task, seed, episode_id, interface)
    episode.observe(0.0, {})      # the first observation
    episode.step(action)          # every later one
    episode.state(); episode.files(); episode.close()
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # annotations only: an agent process imports the contract without OpenEnv's server package
    from env.models import DebugAction, DebugObservation, DebugState


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
        """What /tasks lists about the task (never its solution)."""
        ...


class Catalog(Protocol):
    def get(self, task_id: str) -> Task:
        """The task, or KeyError (a listed id, or one its family makes on request)."""
        ...

    def ids(self) -> list[str]: ...

    def all(self) -> Sequence[Task]: ...


class Playable(Protocol):
    episode_id: str
    done: bool

    @property
    def family(self) -> str:
        """The task's family (what /metrics counts sessions and steps by)."""
        ...

    def observe(self, reward: float, parts: dict[str, float]) -> DebugObservation: ...

    def step(self, action: DebugAction) -> DebugObservation: ...

    def state(self) -> DebugState: ...

    def files(self) -> dict[str, str]:
        """The episode's files as they are now (a classic task's module, a repository's tree): in process only."""
        ...

    def close(self) -> None:
        """Releases what the episode holds (a workspace, a debugging session); safe to call twice."""
        ...
