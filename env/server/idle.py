"""Idle WebSocket sessions end: each connection's clock, the close it gets, and when a full server frees a slot.

    idle = IdleSessions(idle_s=600, first_reset_s=60)
    conn = idle.watch(scope, receive, send)      # in the ASGI guard, for /ws and /mcp: conn.receive, conn.send
    idle.retry_after()                           # seconds until the first waiting connection would be closed
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
import math
import time
from collections.abc import Callable

from starlette.types import Message, Receive, Scope, Send

IDLE_CLOSE_CODE = 4408  # 4000-4999 are the application's; 408 as in HTTP's Request Timeout


class IdleSessions:
    def __init__(self, idle_s: float, first_reset_s: float, clock: Callable[[], float] = time.monotonic):
        self.idle_s, self.first_reset_s = idle_s, first_reset_s
        self._clock = clock
        self._deadlines: dict[int, float] = {}  # connection -> when it is closed, while the server waits for it
        self.closes = 0

    def retry_after(self) -> int:
        """Whole seconds until a session slot frees at the latest through idleness: the first waiting connection's
        deadline, else (every session busy) a whole idle limit."""
        now = self._clock()
        first = min(self._deadlines.values(), default=now + self.idle_s)
        return max(1, math.ceil(first - now))

    def watch(self, scope: Scope, receive: Receive, send: Send) -> Connection:
        return Connection(self, scope, receive, send)


class Connection:
    """One WebSocket connection's ``receive``, which closes it when the client stays silent past its limit, and
    ``send``, which drops what the app sends after that close (its own close, which the server would refuse)."""

    def __init__(self, idle: IdleSessions, scope: Scope, receive: Receive, send: Send):
        self._idle, self._receive, self._send = idle, receive, send
        self._path = scope.get("path")
        self.started = self._path != "/ws"  # set on the first reset; an MCP socket has none: its limit is the idle one
        self.closed = False

    async def receive(self) -> Message:
        idle, key = self._idle, id(self)
        limit = idle.idle_s if self.started else idle.first_reset_s
        idle._deadlines[key] = idle._clock() + limit
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
