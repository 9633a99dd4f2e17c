"""ASGI guard in front of the app: caps and checks request bodies before anything parses them.

* bodies over the cap get 413 before they are read whole;
* bodies that are not UTF-8 JSON, nest deeper than 64 levels, hold a lone surrogate or a number JSON does not
  have (NaN, Infinity, 1e400) get 400 (the library would otherwise answer some of these with a 500);
* a WebSocket capacity error says how to raise the limit;
* every HTTP request gets its query parameters and episode cookie in :data:`HTTP_REQUEST`, and a response
  to a request that started an episode sets that cookie (see ``transport``).

File uploads to the demo mounted at ``/web`` (multipart forms) are size-capped but not parsed as JSON.
"""

from __future__ import annotations

import json
from http.cookies import CookieError, SimpleCookie
from urllib.parse import parse_qsl, quote, unquote

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from env.server.transport import EPISODE_COOKIE, HTTP_REQUEST, HttpRequest

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
    try:
        value = json.loads(body, parse_constant=_no_constant, parse_float=_finite)
    except _NotANumber as exc:
        return str(exc)
    except UnicodeDecodeError:
        return "the request body is not valid UTF-8"
    except RecursionError:
        return f"the JSON body is nested deeper than {MAX_DEPTH} levels"
    except ValueError as exc:
        return f"the request body is not valid JSON: {exc}"
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
    def __init__(self, app: ASGIApp, max_body_bytes: int):
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def _reject(self, send: Send, status: int, message: str) -> None:
        payload = json.dumps({"detail": message}).encode()
        await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]})
        await send({"type": "http.response.body", "body": payload})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            await self.app(scope, receive, _capacity_hint(send))
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


def _capacity_hint(send: Send) -> Send:
    """The library's capacity error says the server is full; ours also says how to raise the limit."""

    async def wrapped(message: Message) -> None:
        text = message.get("text") if message["type"] == "websocket.send" else None
        if text and '"CAPACITY_REACHED"' in text:
            reply = json.loads(text)
            data = reply.get("data", {}) if reply.get("type") == "error" else {}
            if data.get("code") == "CAPACITY_REACHED":
                data["message"] = (
                    f"{data.get('message', 'the server is at capacity').rstrip()} Each WebSocket connection holds one session until it "
                    f"closes: close sessions you no longer use, or start the server with a higher ENV_MAX_SESSIONS (now "
                    f"{data.get('max_sessions')})."
                )
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
