"""A typed client for AgentDebuggerEnv over its WebSocket endpoint ``/ws``, without OpenEnv.

    from env.client import DebugAction, DebugEnvClient

    with DebugEnvClient(base_url="http://localhost:8000") as client:   # synchronous use
        result = client.reset(task_id="easy", seed=1)
        result = client.step(DebugAction(action_type="give_up", final_diagnosis="off-by-one"))
        result.observation.grader_score, result.reward, result.done

``async with DebugEnvClient(...) as client: await client.reset(...)`` works the same way.
Each client connection is its own episode on the server.

It speaks OpenEnv's WebSocket protocol (``{"type": "reset" | "step" | "state" | "close", "data": ...}``
answered by ``{"type": "observation" | "state" | "error", "data": ...}``) like OpenEnv's
``EnvClient``, but imports neither OpenEnv nor its web interface, so a training worker imports it
in a fraction of a second (``bench/bench_client_import.py``). A server-side ``DebugAction`` from
``env.models`` is accepted as well: both share the fields of ``env.wire``.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, TypeVar
from urllib.parse import urlsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

from env.wire import ActionFields, DebugAction, DebugObservation, DebugState

# The close code of a session the server ended for idleness (env.server.idle.IDLE_CLOSE_CODE; not imported: the
# client imports nothing of the server).
IDLE_CLOSE_CODE = 4408

__all__ = ["DebugAction", "DebugEnvClient", "DebugObservation", "DebugState", "ServerError", "StepResult"]

T = TypeVar("T")
# A decoded JSON object, as the server sends it.
Payload: TypeAlias = dict[str, Any]
# What a call returns: the result itself in synchronous use, a coroutine to await in asynchronous use.
Outcome: TypeAlias = T | Coroutine[None, None, T]
Mode: TypeAlias = Literal["sync", "async"]


@dataclass
class StepResult:
    """The answer to a reset or a step (the shape of OpenEnv's ``StepResult``)."""

    observation: DebugObservation
    reward: float | None = None
    done: bool = False
    metadata: dict[str, Any] | None = None


class ServerError(RuntimeError):
    """The server answered with an error frame (a RuntimeError, as OpenEnv's client raises)."""


def ws_url(base_url: str) -> str:
    """``http(s)://host:port`` (or ``ws(s)://``, or a bare host) to the episode endpoint ``ws(s)://host:port/ws``."""
    url = base_url.rstrip("/")
    for http, ws in (("http://", "ws://"), ("https://", "wss://")):
        if url.startswith(http):
            url = ws + url[len(http):]
    if not url.startswith(("ws://", "wss://")):
        url = "ws://" + url
    return url + "/ws"


def is_loopback(url: str) -> bool:
    """Whether the URL's host is this machine (its hostname, not a substring: ``localhost.example.com`` is not)."""
    host = urlsplit(url).hostname
    if host is None:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class DebugEnvClient:
    """One WebSocket connection, one episode. Synchronous in ``with`` (or ``.sync()``), asynchronous in
    ``async with``; outside either, a call made where an event loop runs is asynchronous. A client
    stays in the mode of its first use."""

    def __init__(
        self,
        base_url: str,
        connect_timeout_s: float = 10.0,
        message_timeout_s: float = 60.0,
        max_message_size_mb: float = 100.0,
        websocket_ping_interval_s: float | None = 20.0,
        websocket_ping_timeout_s: float | None = 20.0,
        *,
        headers: dict[str, str] | None = None,
    ) -> None:
        self._base_url = base_url.rstrip("/")
        self._ws_url = ws_url(base_url)
        self._connect_timeout = connect_timeout_s
        self._message_timeout = message_timeout_s
        self._max_size = int(max_message_size_mb * 1024 * 1024)
        self._ping_interval = websocket_ping_interval_s
        self._ping_timeout = websocket_ping_timeout_s
        self._headers = headers
        self._mode: Mode | None = None
        self._ws: ClientConnection | None = None
        self._ws_loop: asyncio.AbstractEventLoop | None = None
        # Sockets dropped mid-request close in the background; strong references keep the tasks alive.
        self._closing: set[asyncio.Task[None]] = set()
        # Synchronous use runs the same coroutines on a private event loop in a daemon thread.
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return self._base_url

    # The episode API: each returns its result, or a coroutine in asynchronous use.

    def reset(self, **kwargs: object) -> Outcome[StepResult]:
        """Start the episode; ``kwargs`` go to the environment's reset (``task_id``, ``seed``, ...)."""
        return self._dispatch(lambda: self._request_async({"type": "reset", "data": kwargs}, parse_result))

    def step(self, action: ActionFields) -> Outcome[StepResult]:
        # The fields a type does not use are left out, as the environment requires; metadata is client-side.
        data = action.model_dump(exclude_none=True, exclude={"metadata"})
        return self._dispatch(lambda: self._request_async({"type": "step", "data": data}, parse_result))

    def state(self) -> Outcome[DebugState]:
        return self._dispatch(lambda: self._request_async({"type": "state"}, DebugState.model_validate))

    def connect(self) -> Outcome[DebugEnvClient]:
        return self._dispatch(self._connect_async)

    def close(self) -> Outcome[None]:
        if self._mode != "sync":
            return self._dispatch(self._close_async)
        if self._loop is not None:  # otherwise nothing was ever opened
            self._run(self._close_async())
            self._stop_loop()
        return None

    def sync(self) -> DebugEnvClient:
        """This client, fixed to synchronous use (OpenEnv's ``EnvClient.sync()`` spelling)."""
        self._claim("sync")
        return self

    def __enter__(self) -> DebugEnvClient:
        self._claim("sync")
        self._run(self._connect_async())
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> DebugEnvClient:
        self._claim("async")
        await self._connect_async()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._close_async()

    # Sync / async dispatch.

    def _claim(self, mode: Mode) -> None:
        if self._mode is None:
            self._mode = mode
        elif self._mode != mode:
            raise RuntimeError(f"this DebugEnvClient is in {self._mode} use; create another client to mix sync and async code")

    def _dispatch(self, factory: Callable[[], Coroutine[None, None, T]]) -> Outcome[T]:
        mode = self._mode
        if mode is None:
            try:
                asyncio.get_running_loop()
                mode = "async"
            except RuntimeError:
                mode = "sync"
        self._claim(mode)
        return factory() if mode == "async" else self._run(factory())

    def _run(self, coro: Coroutine[None, None, T]) -> T:
        if self._loop is None or self._thread is None or not self._thread.is_alive():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="debug-env-client-loop", daemon=True)
            thread.start()
            self._loop, self._thread = loop, thread
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def _stop_loop(self) -> None:
        loop, thread = self._loop, self._thread
        self._loop = self._thread = None
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
        if not thread.is_alive():
            loop.close()

    # The protocol.

    async def _connect_async(self) -> DebugEnvClient:
        loop = asyncio.get_running_loop()
        if self._ws is not None:
            # A socket closed by the far end, or bound to another (finished) event loop, is dropped.
            if self._ws_loop is loop and self._ws.state not in (State.CLOSING, State.CLOSED):
                return self
            self._ws = self._ws_loop = None
        # A dropped socket's session holds a server slot until its close handshake ends.
        await self._drain_closing()
        # The proxy is skipped per connection for this machine (not via NO_PROXY: concurrent clients would race on it).
        proxy: dict[str, None] = {"proxy": None} if is_loopback(self._ws_url) else {}
        try:
            self._ws = await connect(
                self._ws_url,
                open_timeout=self._connect_timeout,
                max_size=self._max_size,
                ping_interval=self._ping_interval,
                ping_timeout=self._ping_timeout,
                additional_headers=self._headers,
                **proxy,
            )
        except Exception as exc:
            raise ConnectionError(f"Failed to connect to {self._ws_url}: {exc}") from exc
        self._ws_loop = loop
        return self

    async def _request_async(self, message: Payload, parse: Callable[[Payload], T]) -> T:
        old = self._ws
        if old is not None and old.state is State.CLOSED and old.close_code == IDLE_CLOSE_CODE and message.get("type") != "reset":
            # A step on a fresh connection would only say that no episode runs there: say why the episode ended.
            self._ws = self._ws_loop = None
            raise ServerError(f"Server error: the server closed this session: {old.close_reason}; its episode is over, send a reset (code: IDLE_TIMEOUT)")
        await self._connect_async()
        ws = self._ws
        assert ws is not None
        try:
            await ws.send(json.dumps(message))
        except ConnectionClosed:
            pass  # a refused session (at capacity) sends an error frame, then closes: read that frame below
        try:
            raw = await asyncio.wait_for(ws.recv(), timeout=self._message_timeout)
        except (TimeoutError, asyncio.CancelledError):
            # The answer may still arrive later and would be read as the next request's: drop this socket.
            self._ws = self._ws_loop = None
            self._close_in_background(ws, notify=False)
            raise
        response: Payload = json.loads(raw)
        data: Payload = response.get("data", {})
        if response.get("type") == "error":
            raise ServerError(f"Server error: {data.get('message', 'Unknown error')} (code: {data.get('code', 'UNKNOWN')})")
        return parse(data)

    async def _close_async(self) -> None:
        ws, self._ws, self._ws_loop = self._ws, None, None
        if ws is not None:
            # Shielded: a cancelled caller still ends the server's session cleanly.
            await asyncio.shield(self._close_in_background(ws, notify=True))
        await self._drain_closing()

    def _close_in_background(self, ws: ClientConnection, notify: bool) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(close_socket(ws, notify))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)
        return task

    async def _drain_closing(self) -> None:
        loop = asyncio.get_running_loop()
        tasks = [t for t in self._closing if not t.done() and t.get_loop() is loop]
        if tasks:
            await asyncio.shield(asyncio.gather(*tasks, return_exceptions=True))


async def close_socket(ws: ClientConnection, notify: bool) -> None:
    """Best effort: tell the server the episode is over (``close``), then close the socket."""
    try:
        if notify:
            await ws.send(json.dumps({"type": "close"}))
        await ws.close()
    except (Exception, asyncio.CancelledError):
        pass  # the socket is being abandoned either way


def parse_result(data: Payload) -> StepResult:
    """A reset's or step's ``data``: the observation, with its ``done`` and ``reward`` alongside."""
    done = data.get("done", False)
    reward = data.get("reward")
    observation = DebugObservation.model_validate({**data.get("observation", {}), "done": done, "reward": reward})
    return StepResult(observation=observation, reward=reward, done=done, metadata=data.get("metadata"))
