"""Episodes started over plain HTTP, kept between requests and found again by ``episode_id``.

    store = EpisodeStore(capacity=1024, idle_timeout=600, per_client=64)
    store.add(episode, "203.0.113.7")    # on POST /reset over HTTP, with its client (StoreFull past its share)
    store.find(episode_id, cookie)       # on POST /step and GET /state: the body's id, else the cookie's
    store.find(None, None)               # EpisodeNotFound naming the ways to name an episode (single_user=True: the latest)

OpenEnv's HTTP routes build a fresh environment per request, so multi-step HTTP episodes need
this store; WebSocket sessions keep their episode in their own environment instead.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from env.contract import Playable


def _release(episode: Playable) -> None:
    episode.close()  # a repository episode removes its workspace


class StoreFull(RuntimeError):
    pass


class ClientShareFull(StoreFull):
    """The client holds ENV_SESSIONS_PER_CLIENT unfinished HTTP episodes already."""


class EpisodeIdInUse(ValueError):
    pass


class EpisodeNotFound(LookupError):
    """No episode answers the request: the message says which id or cookie named what, and what to do."""


class NoEpisodeNamed(EpisodeNotFound):
    """The request named no episode at all (no id, no cookie)."""


NO_EPISODE_NAMED = (
    "this request names no episode; an episode is reached only by its own client, in one of three ways: the episode_id "
    "from /reset's observation (in the /step body: {\"action\": {...}, \"episode_id\": \"...\"}; on /state: ?episode_id=...), "
    "the adbg_episode cookie /reset set (keep cookies: curl -b/-c, requests.Session, httpx.Client), or a session: a "
    "WebSocket /ws connection, or an OpenEnv MCP session (POST /mcp openenv/session/create with the reset's arguments as "
    "params, then its session_id in the params of tools/list and tools/call)"
)


class EpisodeStore:
    """Kept in order of last use (every add, get and latest moves an episode to the end), so expiring idle
    episodes looks only at the oldest ones: these calls run on the event loop, and a full store holds 1024."""

    def __init__(
        self, capacity: int, idle_timeout: float, clock: Callable[[], float] = time.monotonic, single_user: bool = False, per_client: int | None = None,
    ):
        self.capacity = capacity
        self.per_client = per_client  # ENV_SESSIONS_PER_CLIENT: unfinished episodes one client holds at once (None: no bound)
        self._owners: dict[str, str] = {}  # episode_id -> the client whose /reset started it
        self.single_user = single_user  # ENV_SINGLE_USER: a request naming no episode gets the latest (one client only)
        self._clock = clock
        self.idle_timeout = idle_timeout
        self._episodes: OrderedDict[str, Playable] = OrderedDict()
        self._used: dict[str, float] = {}  # episode_id -> time of its last add, get or latest
        # Ids closed for idleness, remembered (a bounded number) so the client's next request is told why.
        self._expired: OrderedDict[str, None] = OrderedDict()
        self.idle_closes = 0  # for /metrics
        self._latest: str | None = None
        self._lock = threading.Lock()

    def _touch(self, key: str) -> None:
        self._episodes.move_to_end(key)
        self._used[key] = self._clock()

    def _drop(self, key: str) -> None:
        self._used.pop(key, None)
        self._owners.pop(key, None)
        _release(self._episodes.pop(key))

    def _over_share(self, owner: str) -> str | None:
        """Why ``owner`` may not start another episode (it holds its share of unfinished ones), or None. Finished
        episodes do not count: a client playing one episode after another never reaches its share."""
        if self.per_client is None:
            return None
        held = [k for k, ep in self._episodes.items() if self._owners.get(k) == owner and not ep.done]
        if len(held) < self.per_client:
            return None
        retry = max(1, math.ceil(min(self._used[k] for k in held) + self.idle_timeout - self._clock()))
        return (
            f"this client ({owner}) has {len(held)} unfinished HTTP episodes open, the most one client may (ENV_SESSIONS_PER_CLIENT="
            f"{self.per_client}); finish one (give_up ends it), or retry in {retry} s, when its longest idle one closes unless it "
            f"is used (an episode closes after {self.idle_timeout:g} s without a request). Behind a balancer, clients are told "
            "apart only if the server trusts its X-Forwarded-For (ENV_TRUSTED_PROXIES)"
        )

    def _reap(self) -> None:
        cutoff = self._clock() - self.idle_timeout
        while self._episodes:
            oldest = next(iter(self._episodes))
            if self._used[oldest] > cutoff:  # idle for the whole limit (or more): closed
                break
            self._drop(oldest)
            self.idle_closes += 1
            self._expired[oldest] = None
            if len(self._expired) > 4 * self.capacity:
                self._expired.popitem(last=False)

    def reap(self) -> None:
        """Close the episodes idle past the limit now (it also happens on every add, get and latest)."""
        with self._lock:
            self._reap()

    def _idle_closed(self, episode_id: str) -> bool:
        with self._lock:
            return episode_id in self._expired

    def _closed_for_idleness(self) -> str:
        return f"was closed after {self.idle_timeout:g} s without a request (ENV_SESSION_TIMEOUT_S); call POST /reset to start a new episode"

    def add(self, episode: Playable, owner: str | None = None) -> None:
        """Keep ``episode``, started by the client ``owner`` (None: no client's, as in process); StoreFull when the
        store holds only unfinished episodes, or ``owner`` holds its share of them."""
        with self._lock:
            self._reap()
            refused = self._over_share(owner) if owner is not None else None
            if refused is not None:
                raise ClientShareFull(refused)
            if len(self._episodes) >= self.capacity:
                # The least recently used finished episode goes (they gather at the front).
                finished = next((k for k, ep in self._episodes.items() if ep.done), None)
                if finished is None:
                    oldest = self._used[next(iter(self._episodes))]
                    retry = max(1, math.ceil(oldest + self.idle_timeout - self._clock()))
                    raise StoreFull(
                        f"{self.capacity} HTTP episodes are open; retry in {retry} s, when the longest idle one closes unless it is "
                        f"used (an episode closes after {self.idle_timeout:g} s without a request), finish one, use the WebSocket "
                        f"endpoint /ws, or start the server with a higher ENV_HTTP_EPISODES (now {self.capacity})"
                    )
                self._drop(finished)
            if episode.episode_id in self._episodes:
                raise EpisodeIdInUse(f"episode_id {episode.episode_id!r} is already in use by an open episode; choose another or omit it")
            self._expired.pop(episode.episode_id, None)
            self._episodes[episode.episode_id] = episode
            if owner is not None:
                self._owners[episode.episode_id] = owner
            self._touch(episode.episode_id)
            self._latest = episode.episode_id

    def get(self, episode_id: str) -> Playable | None:
        with self._lock:
            self._reap()
            episode = self._episodes.get(episode_id)
            if episode is not None:
                self._touch(episode_id)
            return episode

    def latest(self) -> Playable | None:
        with self._lock:
            self._reap()
            latest = self._latest
            episode = self._episodes.get(latest) if latest else None
            if latest and episode is not None:
                self._touch(latest)
            return episode

    def find(self, episode_id: str | None, cookie: str | None) -> Playable:
        """The episode a request names: the body's (or query's) ``episode_id``, else the episode cookie. A named
        episode that is not here is an error, never another episode; so is naming none (any client's latest episode
        was an attacker's way into a victim's), unless the store is single-user."""
        if episode_id:
            found = self.get(episode_id)
            if found is None:
                if self._idle_closed(episode_id):
                    raise EpisodeNotFound(f"episode_id {episode_id!r} {self._closed_for_idleness()}")
                raise EpisodeNotFound(f"unknown or expired episode_id {episode_id!r}; call POST /reset to start an episode")
            return found
        if cookie:
            found = self.get(cookie)
            if found is None:
                gone = self._closed_for_idleness() if self._idle_closed(cookie) else "is unknown or expired; call POST /reset to start an episode"
                raise EpisodeNotFound(f"the episode your adbg_episode cookie names ({cookie!r}) {gone}")
            return found
        if not self.single_user:
            raise NoEpisodeNamed(NO_EPISODE_NAMED)
        found = self.latest()
        if found is None:
            raise EpisodeNotFound("no HTTP episode is running; call POST /reset first")
        return found

    def open_episodes(self) -> list[Playable]:
        """The episodes kept now (for /metrics), oldest first."""
        with self._lock:
            return list(self._episodes.values())

    def __len__(self) -> int:
        with self._lock:
            return len(self._episodes)
