"""Session slots (ENV_MAX_SESSIONS) and who holds them: no client holds more than ENV_SESSIONS_PER_CLIENT, an MCP
session made over POST /mcp is closed after ENV_SESSION_TIMEOUT_S without a request (as a socket is), and a refused
session is told when a slot frees.

    slots = SessionSlots(per_client=64, idle=idle, table=server, close=close_session)
    slots.over_share(client)             # None, or the Refusal of this client's next session (it holds its share)
    slots.server_full(active, most)      # the Refusal of a full server: when a slot frees, how to raise the limit
    slots.opened(client) / closed(client)   # a /ws or /mcp socket holds a slot for its connection's life
    slots.created(session_id, client)    # an MCP session made over POST /mcp: its client's until it closes
    with slots.in_use(session_id): ...   # a request names it, or a /ws joined it: its idle clock stops meanwhile
    await slots.reap()                   # close the MCP sessions idle past the limit (run() does it on time)

Every session holds one of OpenEnv's slots (``table``, its HTTPEnvServer). A socket holds one while connected; an MCP
session made over POST /mcp holds one until openenv/session/close, or until it has had no request for
ENV_SESSION_TIMEOUT_S (OpenEnv's reaper, left as a backstop at twice that, looks only every quarter of its limit).
A /ws that joins an MCP session (``?session_id=``) takes no slot: the session is its creator's, its clock stops
while the socket is connected, and a joined socket closed for idleness closes the session too (both sat idle for
the limit).

A refusal's retry time is the first moment a slot frees through idleness unless the session is used: the first
deadline among the waiting sockets (closed by the guard on time) and the idle MCP sessions (closed by ``run`` on
time, and by ``reap`` before any session starts). When none is waiting, every session is answering a request, and
one frees a whole idle limit after its request ends at the earliest: the message says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from openenv.core.env_server.exceptions import SessionCapacityError
from pydantic import BaseModel

from env.server.idle import IdleSessions

log = logging.getLogger("env.server")


class SessionTable(Protocol):
    """What is read of OpenEnv's session table (its ``HTTPEnvServer``)."""

    @property
    def max_concurrent_envs(self) -> int: ...

    def get_session_info(self, session_id: str) -> object | None: ...


class Refusal(BaseModel):
    """Why a new session is refused now, when to retry, and the fields its error frame carries besides."""

    reason: str  # for /metrics: sessions_full, sessions_per_client
    message: str
    retry_after_s: int
    fields: dict[str, int | str]

    def data(self) -> dict[str, int | str]:
        return {**self.fields, "retry_after_s": self.retry_after_s}


@dataclass
class _McpSession:
    owner: str
    last_used: float
    busy: int = 0  # requests naming it being answered, /ws connections joined to it


class SessionSlots:
    def __init__(
        self,
        per_client: int,
        idle: IdleSessions,
        table: SessionTable,
        close: Callable[[str], Awaitable[None]],
        clock: Callable[[], float] = time.monotonic,
        on_refusal: Callable[[str], None] | None = None,
    ):
        self.per_client, self.idle, self._table, self._close, self._clock = per_client, idle, table, close, clock
        self._on_refusal = on_refusal  # counts refusals by reason (/metrics)
        self._sockets: Counter[str] = Counter()  # client -> sockets holding a slot (and POST /mcp creates under way)
        self._mcp: dict[str, _McpSession] = {}  # MCP sessions made over POST /mcp
        self._expired: OrderedDict[str, None] = OrderedDict()  # closed for idleness, remembered (bounded) to say so
        self.idle_closes = 0  # for /metrics
        self._task: asyncio.Task[None] | None = None

    # -- who holds what ---------------------------------------------------------------------------------------

    def _prune(self) -> None:
        """Forget the MCP sessions OpenEnv closed itself (openenv/session/close, a /ws joined to one with a pending close)."""
        for session_id in [s for s in self._mcp if self._table.get_session_info(s) is None]:
            del self._mcp[session_id]

    def held(self, client: str) -> int:
        self._prune()
        return self._sockets[client] + sum(1 for s in self._mcp.values() if s.owner == client)

    def opened(self, client: str) -> None:
        self._sockets[client] += 1

    def closed(self, client: str) -> None:
        self._sockets[client] -= 1
        if self._sockets[client] <= 0:
            del self._sockets[client]

    def created(self, session_id: str, client: str) -> None:
        self._mcp[session_id] = _McpSession(client, self._clock())

    @contextlib.contextmanager
    def in_use(self, session_id: str | None) -> Iterator[None]:
        """While a request naming the session is answered (or a /ws is joined to it), it is not idle; its clock
        starts again when that ends."""
        session = self._mcp.get(session_id) if session_id else None
        if session is None:
            yield
            return
        session.busy += 1
        try:
            yield
        finally:
            session.busy -= 1
            session.last_used = self._clock()

    # -- idleness -------------------------------------------------------------------------------------------

    async def reap(self) -> None:
        """Close the MCP sessions made over POST /mcp that have had no request for ENV_SESSION_TIMEOUT_S."""
        self._prune()
        now = self._clock()
        for session_id in [k for k, s in self._mcp.items() if not s.busy and now - s.last_used >= self.idle.idle_s]:
            await self.expire(session_id)

    async def expire(self, session_id: str) -> None:
        """Close an MCP session for idleness (unless a request is using it)."""
        session = self._mcp.get(session_id)
        if session is None or session.busy:
            return
        del self._mcp[session_id]
        self.idle_closes += 1
        self._expired[session_id] = None
        while len(self._expired) > 4 * self._table.max_concurrent_envs:
            self._expired.popitem(last=False)
        try:
            await self._close(session_id)
        except Exception:  # noqa: BLE001 - OpenEnv drops it from its table before cleaning up; whoever asked is not to blame
            log.exception("closing the idle MCP session %s failed", session_id)

    def closed_for_idleness(self, session_id: str) -> str | None:
        """What a request naming an MCP session closed for idleness is told (None if it was not)."""
        if session_id not in self._expired or self._table.get_session_info(session_id) is not None:
            return None
        return (
            f"MCP session {session_id!r} was closed after {self.idle.idle_s:g} s without a request (ENV_SESSION_TIMEOUT_S); "
            "openenv/session/create starts a new one"
        )

    def _waits(self, client: str | None) -> list[float]:
        """Seconds until each session waiting for its client (``client``'s, if given) is closed for idleness."""
        now = self._clock()
        mcp = [s.last_used + self.idle.idle_s - now for s in self._mcp.values() if not s.busy and client in (None, s.owner)]
        return self.idle.waits(client) + mcp

    async def run(self) -> None:
        """Close each idle MCP session when its time comes (the app's startup starts it, its shutdown cancels it)."""
        while True:
            now = self._clock()
            due = [s.last_used + self.idle.idle_s - now for s in self._mcp.values() if not s.busy]
            # a session made or used meanwhile is due later than this wake-up: nothing is missed
            await asyncio.sleep(max(0.05, min(due, default=self.idle.idle_s)))
            try:
                await self.reap()
            except Exception:  # noqa: BLE001 - one failed close must not stop every later one
                log.exception("closing idle MCP sessions failed; trying again")

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        if self._task is None or self._task.done() or self._task.get_loop() is not loop:  # an app served again (tests)
            self._task = loop.create_task(self.run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    # -- refusals -------------------------------------------------------------------------------------------

    def _when(self, client: str | None) -> tuple[int, str]:
        waits = self._waits(client)
        idle_s, first_s = self.idle.idle_s, self.idle.first_reset_s
        limits = f"ENV_SESSION_TIMEOUT_S={idle_s:g}, ENV_FIRST_RESET_TIMEOUT_S={first_s:g} before a /ws connection's first reset"
        whose = "one of this client's sessions" if client is not None else "a session"
        if waits:
            retry = max(1, math.ceil(min(waits)))
            return retry, f"Retry in {retry} s: {whose} idle that long is closed by then unless it is used ({limits})."
        retry = max(1, math.ceil(self.idle.idle_s))
        none = "none of this client's sessions" if client is not None else "no session"
        return retry, (
            f"Retry in {retry} s at the earliest: {none} is waiting for its client now (each is answering a request), "
            f"and one is closed {self.idle.idle_s:g} s after its client goes quiet ({limits})."
        )

    def over_share(self, client: str) -> Refusal | None:
        held = self.held(client)
        if held < self.per_client:
            return None
        retry, when = self._when(client)
        message = (
            f"this client ({client}) holds {held} sessions, the most one client may hold at once (ENV_SESSIONS_PER_CLIENT="
            f"{self.per_client}; WebSocket connections on /ws and /mcp and MCP sessions made over POST /mcp count alike). "
            f"{when} Close a session you no longer use (openenv/session/close, or close its WebSocket). Behind a balancer, "
            "clients are told apart only if the server trusts its X-Forwarded-For (ENV_TRUSTED_PROXIES)."
        )
        fields: dict[str, int | str] = {"client": client, "client_sessions": held, "sessions_per_client": self.per_client}
        return self._refusal(Refusal(reason="sessions_per_client", message=message, retry_after_s=retry, fields=fields))

    def server_full(self, active: int, most: int) -> Refusal:
        retry, when = self._when(None)
        message = (
            f"{SessionCapacityError(active, most)} {when} Each WebSocket connection (/ws, /mcp) and each MCP session made "
            f"over POST /mcp holds one session until it closes or idles out: close sessions you no longer use, or start "
            f"the server with a higher ENV_MAX_SESSIONS (now {most})."
        )
        return self._refusal(
            Refusal(reason="sessions_full", message=message, retry_after_s=retry, fields={"active_sessions": active, "max_sessions": most})
        )

    def _refusal(self, refusal: Refusal) -> Refusal:
        if self._on_refusal is not None:
            self._on_refusal(refusal.reason)
        return refusal
