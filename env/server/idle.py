"""Idle WebSocket sessions end: each connection's clock, the close it gets, and when a full server frees a slot.

    idle = IdleSessions(idle_s=600, first_reset_s=60)
    conn = idle.watch(scope, receive, send, "203.0.113.7")   # in the ASGI guard, for /ws and /mcp: conn.receive, conn.send
    idle.waits()                                 # seconds until each waiting connection is closed (waits(client): its own)
    idle.closes                                  # idle closes so far (for /metrics)

A connection's clock runs only while the server waits for its next message (never while a step runs), so a client
that sends a message within the limit after each answer is never cut, whatever its pace. Before the connection's
first reset the limit is shorter: 256 connections that never sent a message held every session slot for good. An
idle connection gets an error frame saying why (code ``IDLE_TIMEOUT``), then a close frame (code 4408) with a short
reason; the library's handler then sees a disconnect and frees the session.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from urllib.parse import parse_qsl

from starlette.types import Message, Receive, Scope, Send

IDLE_CLOSE_CODE = 4408  # 4000-4999 are the application's; 408 as in HTTP's Request Timeout


class IdleSessions:
    def __init__(self, idle_s: float, first_reset_s: float, clock: Callable[[], float] = time.monotonic):
        self.idle_s, self.first_reset_s = idle_s, first_reset_s
        self._clock = clock
        # connection -> when it is closed and whose it is, while the server waits for it
        self._deadlines: dict[int, tuple[float, str]] = {}
        self.closes = 0

    def waits(self, client: str | None = None) -> list[float]:
        """Seconds until each connection the server waits for is closed for idleness (``client``'s alone if given)."""
        now = self._clock()
        return [deadline - now for deadline, owner in list(self._deadlines.values()) if client is None or owner == client]

    def watch(self, scope: Scope, receive: Receive, send: Send, client: str = "unknown") -> Connection:
        return Connection(self, scope, receive, send, client)


class Connection:
    """One WebSocket connection's ``receive``, which closes it when the client stays silent past its limit, and
    ``send``, which drops what the app sends after that close (its own close, which the server would refuse)."""

    def __init__(self, idle: IdleSessions, scope: Scope, receive: Receive, send: Send, client: str):
        self._idle, self._receive, self._send, self.client = idle, receive, send, client
        self._path = scope.get("path")
        # set on the first reset; an MCP socket has none, and a /ws attached to an MCP session (?session_id=) joins
        # one that has its episode: their limit is the idle one
        self.started = self._path != "/ws" or attached_session(scope) is not None
        self.closed = False

    async def receive(self) -> Message:
        idle, key = self._idle, id(self)
        limit = idle.idle_s if self.started else idle.first_reset_s
        idle._deadlines[key] = (idle._clock() + limit, self.client)
        try:
            return await asyncio.wait_for(self._receive(), limit)
        except TimeoutError:
            self.closed = True
            idle.closes += 1
            await _close(self._send, limit, "ENV_SESSION_TIMEOUT_S" if self.started else "ENV_FIRST_RESET_TIMEOUT_S", self._path == "/mcp")
            return {"type": "websocket.disconnect", "code": IDLE_CLOSE_CODE}
        finally:
            idle._deadlines.pop(key, None)

    async def send(self, message: Message) -> None:
        if not self.closed:
            await self._send(message)


def attached_session(scope: Scope) -> str | None:
    """The MCP session a /ws connection joins (``/ws?session_id=...``, as OpenEnv's MCPToolClient does), if any."""
    if scope.get("path") != "/ws":
        return None
    return dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"))).get("session_id") or None


def idle_message(limit: float, setting: str) -> str:
    if setting == "ENV_FIRST_RESET_TIMEOUT_S":
        return f"this connection was closed after {limit:g} s without a reset ({setting}); connect again and send a reset first"
    return (
        f"this session was closed after {limit:g} s without a message ({setting}); its episode is over. Connect again and "
        "send a reset to start a new one (a client that sends a message within the limit after each answer is never closed)"
    )


async def _close(send: Send, limit: float, setting: str, mcp: bool) -> None:
    message = idle_message(limit, setting)
    if mcp:
        frame = {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": message, "data": {"code": "IDLE_TIMEOUT"}}}
    else:
        frame = {"type": "error", "data": {"code": "IDLE_TIMEOUT", "message": message, "idle_seconds": limit}}
    reason = f"idle {limit:g} s ({setting}): session closed; reconnect and reset"[:123]  # a close reason holds 123 bytes
    try:
        await send({"type": "websocket.send", "text": json.dumps(frame)})
        await send({"type": "websocket.close", "code": IDLE_CLOSE_CODE, "reason": reason})
    except Exception:  # noqa: BLE001 - the client went away meanwhile: nobody is left to tell
        pass
