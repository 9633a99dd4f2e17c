"""This server as one replica behind a balancer: its name in episode ids, and draining before it stops.

    replica = Replica("r1", drain_seconds=30)
    replica.tag("6f1c...")                   # "r1.6f1c...": the balancer routes a request naming it to r1
    replica.owner("r2.77ab...")              # "r2"
    replica.drain()                          # SIGTERM: no new episode here; open ones get `deadline`
    replica.going_away()                     # the message every observation carries while draining

Episodes live in the memory of the replica that started them. A request naming an episode of another replica
reaches this one only when that replica is gone (the balancer routes by the tag while it is up), so its answer
names the episode and says it is lost, never serves another episode.
"""

from __future__ import annotations

import re
import time
import weakref
from collections.abc import Callable
from typing import Protocol

from env.contract import Playable

_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,31}$")


class Session(Protocol):
    """A WebSocket session's environment, as the replica counts it."""

    @property
    def episode(self) -> Playable | None: ...


class Replica:
    def __init__(self, name: str = "", drain_seconds: float = 30.0, clock: Callable[[], float] = time.monotonic):
        self.name = name
        self.drain_seconds = drain_seconds
        self._clock = clock
        self.deadline: float | None = None  # set by drain()
        self.sessions: weakref.WeakSet[Session] = weakref.WeakSet()  # WebSocket environments holding an episode

    @property
    def draining(self) -> bool:
        return self.deadline is not None

    def drain(self) -> None:
        if self.deadline is None:
            self.deadline = self._clock() + self.drain_seconds

    def seconds_left(self) -> float:
        return max(0.0, (self.deadline or self._clock()) - self._clock())

    def tag(self, episode_id: str) -> str:
        """An episode id carrying this replica's name (unchanged without a name, or when it carries it already)."""
        if not self.name or episode_id.startswith(self.name + "."):
            return episode_id
        return f"{self.name}.{episode_id}"

    def owner(self, episode_id: str) -> str | None:
        """The replica an episode id names, when this server is a named replica and the id carries a name."""
        if not self.name:
            return None
        head, dot, _ = episode_id.partition(".")
        return head if dot and _NAME.match(head) else None

    def lost(self, episode_id: str) -> str | None:
        """Why an unknown episode is lost, when its id names another replica."""
        owner = self.owner(episode_id)
        if owner is None or owner == self.name:
            return None
        return (
            f"episode {episode_id!r} was started on replica {owner!r}, which is gone (stopped or killed): its episodes are lost; "
            f"this is replica {self.name!r}; call POST /reset to start a new episode"
        )

    def session_episodes(self) -> list[Playable]:
        """The WebSocket sessions' episodes now (finished ones included)."""
        for _ in range(5):
            try:
                sessions = list(self.sessions)
                break
            except RuntimeError:  # the drain's thread reads while the event loop adds a session: read again
                continue
        else:
            sessions = []
        return [e for e in (s.episode for s in sessions) if e is not None]

    def refusal(self) -> str:
        return (
            f"replica {self.name or 'this server'} is draining (it stops in {self.seconds_left():.0f} s): it starts no new episode; "
            "connect again through the balancer to start one on another replica"
        )

    def going_away(self) -> str:
        return (
            f"replica {self.name or 'this server'} is going away in {self.seconds_left():.0f} s: finish this episode before then "
            "(it is lost after), then reset through the balancer to continue on another replica"
        )
