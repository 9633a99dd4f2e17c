"""What every episode offers the server and the harness, whatever its family (classic, repository, procedural).

    episode: Playable = RepoEpisode(runtime, task, seed, episode_id)
    episode.observe(0.0, {})      # the first observation
    episode.step(action)          # every later one
    episode.state(); episode.files(); episode.close()
"""

from __future__ import annotations

from typing import Protocol

from env.models import DebugAction, DebugObservation, DebugState


class Playable(Protocol):
    episode_id: str
    done: bool

    def observe(self, reward: float, parts: dict[str, float]) -> DebugObservation: ...

    def step(self, action: DebugAction) -> DebugObservation: ...

    def state(self) -> DebugState: ...

    def files(self) -> dict[str, str]:
        """The episode's files as they are now (a classic task's module, a repository's tree): in process only."""
        ...

    def close(self) -> None:
        """Releases what the episode holds (a workspace, a debugging session); safe to call twice."""
        ...
