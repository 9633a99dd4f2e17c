"""ASGI guard in front of the app: caps and checks request bodies before anything parses them.

* bodies over the cap get 413 before they are read whole;
* bodies that are not UTF-8 JSON, nest deeper than 64 levels, hold a lone surrogate or a number JSON does not
  have (NaN, Infinity, 1e400) get 400 (the library would otherwise answer some of these with a 500);
* a session WebSocket (``/ws``, ``/mcp``) idle past its limit is closed with a reason (``idle``), its messages are
  held to the body rules (answered in-band), and its capacity error says when to retry and how to raise the limit;
* a session WebSocket from a client that holds its share of the slots (``slots``: ENV_SESSIONS_PER_CLIENT) is
  accepted, told so in an error frame and closed (code 1013) before it takes a slot;
* every HTTP request gets its query parameters and episode cookie in :data:`HTTP_REQUEST`, and a response
  to a request that started an episode sets that cookie (see ``transport``).

File uploads to the demo mounted at ``/web`` (multipart forms) are size-capped but not parsed as JSON.
"""

from __future__ import annotations

import json
from http.cookies import CookieError, SimpleCookie
from urllib.parse import parse_qsl, quote, unquote

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from env.server.clients import client_of
from env.server.idle import Connection, IdleSessions, attached_session
from env.server.slots import Refusal, SessionSlots
from env.server.transport import EPISODE_COOKIE, HTTP_REQUEST, HttpRequest

SESSION_SOCKETS = ("/ws", "/mcp")  # the library's WebSocket routes that hold a session slot

MAX_DEPTH = 64


class _NotANumber(ValueError):
    """A number JSON does not have: NaN, Infinity, or one too large for a float (Python's parser takes them, and
    the library's 422 answer could not then be encoded: a 500)."""


def _no_constant(name: str) -> float:
    raise _NotANumber(f"the JSON body holds {name}, which is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise _NotANumber(f"the JSON body holds the number {text[:40]}, too large for a float")
    return value


def body_problem(body: bytes) -> str | None:
    """Why this JSON body is unacceptable, or None."""
    return parse_body(body)[1]


def parse_body(body: bytes) -> tuple[object, str | None]:
    """The JSON value of ``body`` and None, or None and why it is unacceptable."""
    try:
        value = json.loads(body, parse_constant=_no_constant, parse_float=_finite)
    except _NotANumber as exc:
        return None, str(exc)
    except UnicodeDecodeError:
        return None, "the request body is not valid UTF-8"
    except RecursionError:
        return None, f"the JSON body is nested deeper than {MAX_DEPTH} levels"
    except ValueError as exc:
        return None, f"the request body is not valid JSON: {exc}"
    return value, _value_problem(value)


def _value_problem(value: object) -> str | None:
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return f"the JSON body is nested deeper than {MAX_DEPTH} levels"
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return "the JSON body contains a lone surrogate (\\ud800-\\udfff), which is not valid text"
        elif isinstance(item, dict):
            stack.extend((k, depth + 1) for k in item)
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return None


TRY_AGAIN_LATER = 1013  # the WebSocket close code of a refused session (RFC 6455's registry)


class RequestGuard:
    def __init__(self, app: ASGIApp, max_body_bytes: int, idle: IdleSessions | None = None, slots: SessionSlots | None = None):
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.idle = idle
        self.slots = slots

    async def _reject(self, send: Send, status: int, message: str) -> None:
        payload = json.dumps({"detail": message}).encode()
        await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]})
        await send({"type": "http.response.body", "body": payload})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            if scope.get("path") in SESSION_SOCKETS and self.idle is not None:
                await self._session_socket(scope, receive, send, self.idle)
            else:
                await self.app(scope, receive, _capacity_hint(send, self.slots))
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = HttpRequest(
            query=dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"))), cookie_episode=_episode_cookie(scope), client=client_of(scope)
        )
        token = HTTP_REQUEST.set(request)
        send = _setting_cookie(send, request)
        try:
            if scope["method"] not in ("POST", "PUT", "PATCH"):
                await self.app(scope, receive, send)
                return
            headers = dict(scope.get("headers", []))
            declared = headers.get(b"content-length", b"0")
            if declared.isdigit() and int(declared) > self.max_body_bytes:
                await self._reject(send, 413, f"request body of {int(declared)} bytes exceeds the limit of {self.max_body_bytes} bytes")
                return
            chunks, size, more = [], 0, True
            while more:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > self.max_body_bytes:
                    await self._reject(send, 413, f"request body exceeds the limit of {self.max_body_bytes} bytes")
                    return
                chunks.append(chunk)
                more = message.get("more_body", False)
            body = b"".join(chunks)
            upload = scope.get("path", "").startswith("/web/") and headers.get(b"content-type", b"").startswith(b"multipart/form-data")
            problem = body_problem(body) if body.strip() and not upload else None
            if problem:
                await self._reject(send, 400, problem)
                return
            replayed = False

            async def replay() -> Message:
                nonlocal replayed
                if not replayed:
                    replayed = True
                    return {"type": "http.request", "body": body, "more_body": False}
                return await receive()

            await self.app(scope, replay, send)
        finally:
            HTTP_REQUEST.reset(token)


    async def _session_socket(self, scope: Scope, receive: Receive, send: Send, idle: IdleSessions) -> None:
        """A /ws or /mcp connection: watched for idleness; unless it joins an MCP session (``/ws?session_id=``), it
        holds one of its client's slots while connected, and is refused when the client holds its share."""
        client, joined, mcp = client_of(scope), attached_session(scope), scope.get("path") == "/mcp"
        conn = idle.watch(scope, receive, send, client)
        slots = self.slots
        if slots is None:
            await self.app(scope, self._checked(conn, mcp), _capacity_hint(conn.send, None))
            return
        await slots.reap()  # an MCP session idle past the limit frees its slot now, as the refusals promise
        if joined is None:
            refused = slots.over_share(client)
            if refused is not None:
                await _refuse_socket(receive, send, refused, mcp)
                return
            slots.opened(client)  # at once, with no await since the check: a burst of connections cannot pass it together
        try:
            with slots.in_use(joined):
                await self.app(scope, self._checked(conn, mcp), _capacity_hint(conn.send, slots))
        finally:
            if joined is None:
                slots.closed(client)
        if joined is not None and conn.closed:  # the joined socket sat idle for the limit: so did its session
            await slots.expire(joined)

    def _checked(self, conn: Connection, mcp: bool) -> Receive:
        """A session socket's ``receive``: a message that is not UTF-8 JSON text within the size cap (the body rules
        of HTTP) is answered here with an error frame and never reaches the library (a lone surrogate or a deep
        nesting made it drop the session); a reset starts the connection's longer idle limit."""

        async def receive() -> Message:
            while True:
                message = await conn.receive()
                if message["type"] != "websocket.receive":
                    return message
                text = message.get("text")
                raw = text.encode("utf-8", "surrogatepass") if text is not None else message.get("bytes") or b""
                if len(raw) > self.max_body_bytes:
                    problem: str | None = f"message of {len(raw)} bytes exceeds the limit of {self.max_body_bytes} bytes"
                else:
                    value, problem = parse_body(raw)
                if problem:
                    await conn.send({"type": "websocket.send", "text": _error_frame(problem.replace("request body", "message").replace("JSON body", "message"), mcp)})
                    continue
                if isinstance(value, dict) and value.get("type") == "reset":
                    conn.started = True
                return {"type": "websocket.receive", "text": raw.decode("utf-8")}

        return receive


def _error_frame(message: str, mcp: bool) -> str:
    if mcp:
        return json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": message}})
    return json.dumps({"type": "error", "data": {"message": message, "code": "INVALID_JSON"}})


def _refusal_frame(refusal: Refusal, mcp: bool) -> str:
    if mcp:
        return json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": refusal.message, "data": refusal.data()}})
    return json.dumps({"type": "error", "data": {"code": "CAPACITY_REACHED", "message": refusal.message, **refusal.data()}})


async def _refuse_socket(receive: Receive, send: Send, refusal: Refusal, mcp: bool) -> None:
    """Accept (a refused handshake would tell the client nothing), say why in an error frame, and close."""
    if (await receive())["type"] != "websocket.connect":
        return
    reason = f"{refusal.reason}: retry in {refusal.retry_after_s} s"[:123]  # a close reason holds 123 bytes
    try:
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.send", "text": _refusal_frame(refusal, mcp)})
        await send({"type": "websocket.close", "code": TRY_AGAIN_LATER, "reason": reason})
    except Exception:  # noqa: BLE001 - the client went away meanwhile: nobody is left to tell
        pass


def _capacity_hint(send: Send, slots: SessionSlots | None) -> Send:
    """The library's capacity error on /ws says the server is full; ours also says when a slot frees and how to raise
    the limit (``slots.server_full``)."""

    async def wrapped(message: Message) -> None:
        text = message.get("text") if message["type"] == "websocket.send" else None
        if slots is not None and text and '"CAPACITY_REACHED"' in text:
            reply = json.loads(text)
            data = reply.get("data", {}) if reply.get("type") == "error" else {}
            if data.get("code") == "CAPACITY_REACHED" and isinstance(data.get("active_sessions"), int) and isinstance(data.get("max_sessions"), int):
                refusal = slots.server_full(data["active_sessions"], data["max_sessions"])
                data.update(refusal.data(), message=refusal.message)
                message = {**message, "text": json.dumps(reply)}
        await send(message)

    return wrapped


def _episode_cookie(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"cookie":
            try:
                cookie = SimpleCookie(value.decode("latin-1"))
            except CookieError:
                continue  # a malformed Cookie header names no episode
            if EPISODE_COOKIE in cookie:
                return unquote(cookie[EPISODE_COOKIE].value)
    return None


def _setting_cookie(send: Send, request: HttpRequest) -> Send:
    """``send`` that adds ``Set-Cookie`` naming the episode this request started, if it started one."""

    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start" and request.started:
            # Quoted: an episode_id chosen by the client may hold characters a cookie cannot.
            cookie = f"{EPISODE_COOKIE}={quote(request.started, safe='')}; Path=/; HttpOnly; SameSite=Lax"
            message = {**message, "headers": [*message.get("headers", []), (b"set-cookie", cookie.encode("latin-1"))]}
        await send(message)

    return wrapped
