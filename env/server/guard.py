"""ASGI guard in front of the app: caps and checks request bodies before anything parses them.

* bodies over the cap get 413 before they are read whole;
* bodies that are not UTF-8 JSON, nest deeper than 64 levels, hold a lone surrogate or a number JSON does not
  have (NaN, Infinity, 1e400) get 400 (the library would otherwise answer some of these with a 500);
* a session WebSocket (``/ws``, ``/mcp``) idle past its limit is closed with a reason (``idle``), its messages are
  held to the body rules (answered in-band), and its capacity error says when to retry and how to raise the limit;
* every HTTP request gets its query parameters and episode cookie in :data:`HTTP_REQUEST`, and a response
  to a request that started an episode sets that cookie (see ``transport``).

File uploads to the demo mounted at ``/web`` (multipart forms) are size-capped but not parsed as JSON.
"""

from __future__ import annotations

import json
from http.cookies import CookieError, SimpleCookie
from urllib.parse import parse_qsl, quote, unquote

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from env.server.idle import Connection, IdleSessions
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


class RequestGuard:
    def __init__(self, app: ASGIApp, max_body_bytes: int, idle: IdleSessions | None = None):
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.idle = idle

    async def _reject(self, send: Send, status: int, message: str) -> None:
        payload = json.dumps({"detail": message}).encode()
        await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]})
        await send({"type": "http.response.body", "body": payload})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            if scope.get("path") in SESSION_SOCKETS and self.idle is not None:
                conn = self.idle.watch(scope, receive, send)
                await self.app(scope, self._checked(conn, scope.get("path") == "/mcp"), _capacity_hint(conn.send, self.idle))
            else:
                await self.app(scope, receive, _capacity_hint(send, self.idle))
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = HttpRequest(query=dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"))), cookie_episode=_episode_cookie(scope))
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


def _capacity_hint(send: Send, idle: IdleSessions | None) -> Send:
    """The library's capacity error says the server is full; ours also says when to retry and how to raise the limit."""

    async def wrapped(message: Message) -> None:
        text = message.get("text") if message["type"] == "websocket.send" else None
        if text and '"CAPACITY_REACHED"' in text:
            reply = json.loads(text)
            data = reply.get("data", {}) if reply.get("type") == "error" else {}
            if data.get("code") == "CAPACITY_REACHED":
                retry = idle.retry_after() if idle is not None else None
                when = (
                    f"Retry in {retry} s: a session idle that long is closed by then (ENV_SESSION_TIMEOUT_S={idle.idle_s:g}, "
                    f"ENV_FIRST_RESET_TIMEOUT_S={idle.first_reset_s:g} before its first reset). " if idle is not None else ""
                )
                data["message"] = (
                    f"{data.get('message', 'the server is at capacity').rstrip()} {when}Each WebSocket connection holds one session "
                    f"until it closes or idles out: close sessions you no longer use, or start the server with a higher "
                    f"ENV_MAX_SESSIONS (now {data.get('max_sessions')})."
                )
                if retry is not None:
                    data["retry_after_s"] = retry
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
