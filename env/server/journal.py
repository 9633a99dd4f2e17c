"""Episodes that outlive their replica: with ``ENV_STORE=redis://...`` every episode's reset and the actions it took
are recorded, so that any replica sharing the secret can rebuild an episode whose replica is gone, by replaying them.

    journal = journal_from(settings.store)       # None without ENV_STORE (one process needs nothing)
    journal.started(episode_id, reset)           # the reset's arguments: task id, seed, interface options
    journal.acted(episode_id, action)            # each action the episode took, as the action wire carries it
    journal.recorded(episode_id)                 # Record(reset, actions), or None when it never was recorded
    journal.name(sid, {"episode_id": ...})       # an ORS session's episode, by the session's id; journal.named(sid)

Fail closed: a replica that cannot reach its store starts and steps nothing it could not record (JournalDown, with
a message naming the store), rather than hold episodes no other replica could take over. Records expire after
``ttl_s`` without an action, as idle episodes close.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from pydantic import BaseModel

KEY = "adbg:episode:"


class JournalDown(RuntimeError):
    """The episode store cannot be reached."""


class Record(BaseModel):
    reset: dict[str, Any]
    actions: list[dict[str, Any]]


class Journal(Protocol):
    def started(self, episode_id: str, reset: dict[str, Any]) -> None: ...

    def acted(self, episode_id: str, action: dict[str, Any]) -> None: ...

    def recorded(self, episode_id: str) -> Record | None: ...

    def name(self, session: str, held: dict[str, Any]) -> None: ...

    def named(self, session: str) -> dict[str, Any] | None: ...


class RedisJournal:
    def __init__(self, url: str, ttl_s: float):
        import redis  # only a replica with ENV_STORE needs it

        self.url, self.ttl_s = url, max(1, int(ttl_s))
        self._errors: tuple[type[BaseException], ...] = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError)
        self._redis = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5, decode_responses=True)

    def _down(self, exc: BaseException) -> JournalDown:
        return JournalDown(
            f"the episode store (ENV_STORE={self.url}) cannot be reached ({type(exc).__name__}: {exc}); this replica starts and "
            "steps no episode it could not record, so that another replica could take it over: try again, or fix the store"
        )

    def started(self, episode_id: str, reset: dict[str, Any]) -> None:
        try:
            pipe = self._redis.pipeline()
            pipe.delete(KEY + episode_id + ":actions")
            pipe.set(KEY + episode_id, json.dumps(reset), ex=self.ttl_s)
            pipe.execute()
        except self._errors as exc:
            raise self._down(exc) from None

    def acted(self, episode_id: str, action: dict[str, Any]) -> None:
        try:
            pipe = self._redis.pipeline()
            pipe.rpush(KEY + episode_id + ":actions", json.dumps(action))
            pipe.expire(KEY + episode_id + ":actions", self.ttl_s)
            pipe.expire(KEY + episode_id, self.ttl_s)
            pipe.execute()
        except self._errors as exc:
            raise self._down(exc) from None

    def recorded(self, episode_id: str) -> Record | None:
        try:
            pipe = self._redis.pipeline()
            pipe.get(KEY + episode_id)
            pipe.lrange(KEY + episode_id + ":actions", 0, -1)
            reset, actions = pipe.execute()
        except self._errors as exc:
            raise self._down(exc) from None
        if reset is None:
            return None
        return Record(reset=json.loads(reset), actions=[json.loads(a) for a in actions])


    def name(self, session: str, held: dict[str, Any]) -> None:
        """What an ORS session (by its sid) holds: its episode's id and its prompt, for the replica that takes it over."""
        try:
            self._redis.set(KEY + "session:" + session, json.dumps(held), ex=self.ttl_s)
        except self._errors as exc:
            raise self._down(exc) from None

    def named(self, session: str) -> dict[str, Any] | None:
        try:
            held = self._redis.get(KEY + "session:" + session)
        except self._errors as exc:
            raise self._down(exc) from None
        return None if held is None else dict(json.loads(held))


def journal_from(url: str, ttl_s: float) -> Journal | None:
    """The journal ``ENV_STORE`` names: None when empty; ValueError for a store other than Redis."""
    if not url:
        return None
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise ValueError(f"ENV_STORE={url!r}: the episode store must be a Redis URL (redis://host:port/db, rediss://, unix://)")
    return RedisJournal(url, ttl_s)
