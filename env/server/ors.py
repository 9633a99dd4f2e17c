"""The Open Reward Standard (ORS) beside OpenEnv: the same process, port, task ids and episodes.

    serve_ors(app, table, slots, replica)      # the routes below, on the app build_app makes

What ORS clients (``ors-sdk``'s ``ORS``/``AsyncORS``, the ``openreward`` SDK, TRL's ``OpenRewardSpec``) send:

    POST /create_session              SSE: ``task_id`` (a new session id, the "sid"), then ``end``
    POST /create                      X-Session-ID; {"task_spec": {"id": ..., "seed": ...}} or {"split": ..., "index": ...}
    POST /ping                        the session is in use (404 once it is gone)
    POST /delete, /delete_session     the session ends (both idempotent)
    GET  /{env}/prompt                the first observation as text blocks
    GET  /{env}/tools, /task_tools    the episode's tools (/tools without a session: the classic tasks' default tools)
    POST /{env}/call                  SSE: ``task_id`` (the call's id), keep-alive comments, ``chunk`` s, ``end``
    /list_environments, /{env}/splits, /tasks, /num_tasks, /task, /task_range: OpenEnv's Task API (env.server.task_api)

An ORS session is an OpenEnv session (the library's table, the slots of ENV_MAX_SESSIONS and ENV_SESSIONS_PER_CLIENT,
closed after ENV_SESSION_TIMEOUT_S without a request, as an MCP session over POST /mcp is): its environment resets
to the task ``/create`` names and every call is the step the same tool call takes over /step, /ws and /mcp. A call's
answer is ORS's ``RunToolOutput``: the step's reward and ``finished``, the observation's fields in ``metadata`` (and
the grade, ``grade``, when it finishes). A call refused before it changed anything (the episode is over; a step that
paid nothing, ended nothing and reports a mistake) is ``ok: false`` in band, and the episode goes on. A step the
machine decided (``infra_failed`` in its metadata: env.infra) is ``ok: true`` with that flag, reward 0.0.

A call runs to its end whether or not its stream stays open: a client whose stream dropped posts the call again
with its ``task_id`` and is sent the same result (the last ``KEPT_CALLS`` calls of each session are kept).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import StreamingResponse
from openenv.core.env_server.exceptions import EnvironmentFactoryError, SessionCapacityError
from openenv.core.env_server.http_server import HTTPEnvServer
from openenv.core.env_server.mcp_types import CallToolObservation
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from env.families.registry import FAMILIES
from env.models import DebugObservation
from env.server.clients import client_of
from env.server.environment import ENV_NAME
from env.server.journal import Journal, JournalDown
from env.server.mcp import SessionEnvironment, ToolCallResult, reset_session, tools_of
from env.server.replica import Replica
from env.server.slots import Refusal, SessionSlots
from env.tools.base import describe_error

CHUNK = 4096  # ORS's chunk size for a call's result
KEEPALIVE_S = 10.0  # a comment line this often while a call runs: the clients' read timeout is 30 s
KEPT_CALLS = 8  # per session: the calls whose results a reconnecting client can still fetch
DEFAULT_SEED = 0  # a task named without a seed: ORS's task is a fixed spec, and a GRPO group must see one instance
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
Event = tuple[str, str]  # a server-sent event's name and data (one line: ours never hold a line break)


class CreateRequest(BaseModel):
    """POST /create's body, as ORS defines it: a task by ``task_spec`` (as the Task API lists it) or by split and index."""

    model_config = ConfigDict(extra="forbid")
    env_name: str | None = None
    task_spec: dict[str, Any] | None = None
    split: str | None = None
    index: int | None = None
    secrets: dict[str, str] | None = None  # ORS's; nothing here needs one

    @model_validator(mode="after")
    def _one_source(self) -> CreateRequest:
        by_index = self.split is not None or self.index is not None
        if (self.task_spec is not None) == by_index:
            raise ValueError("name the task by task_spec (as /{env}/tasks lists it) or by split and index, not both and not neither")
        if by_index and (self.split is None or self.index is None):
            raise ValueError("split and index name a task together: send both")
        return self


class CallRequest(BaseModel):
    """POST /{env}/call's body (ORS's ``ToolCall``): ``task_id`` resumes a call whose stream dropped."""

    model_config = ConfigDict(extra="forbid")
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    task_id: str | None = None


class TaskSpec(BaseModel):
    """What /create reads of a ``task_spec``: the task's id (``id`` as the Task API lists it, or ``task_id``), its seed
    and the interface; the listing's other fields (name, split, difficulty ...) are ignored."""

    model_config = ConfigDict(extra="ignore")
    id: str | None = None
    task_id: str | None = None
    seed: int = DEFAULT_SEED
    profile: str | None = None
    edit_gate: bool | None = None
    aliases: bool | None = None

    def reset_params(self) -> dict[str, Any]:
        name = self.task_id or self.id
        if not name:
            raise ValueError(f"task_spec names no task: send {{\"id\": ...}} as POST /{ENV_NAME}/tasks lists it")
        extra = {k: v for k, v in {"profile": self.profile, "edit_gate": self.edit_gate, "aliases": self.aliases}.items() if v is not None}
        return {"task_id": name, "seed": self.seed, **extra}


@dataclass
class OrsSession:
    sid: str
    library_id: str  # the OpenEnv session that holds its environment
    env: SessionEnvironment
    prompt: list[dict[str, Any]]
    first: dict[str, Any]  # the first observation's fields (POST /create answers them: the clients ignore them)
    calls: OrderedDict[str, asyncio.Task[str]] = field(default_factory=OrderedDict)


def prompt_text(obs: DebugObservation) -> str:
    """The first observation as a model reads it: the task, and the code and tests a classic task shows."""
    if not obs.buggy_code:  # repository and procedural tasks: the tools explore the workspace
        return f"Task: {obs.task_description}\n\nUse the tools to explore the code, edit it, run the tests, then submit."
    return (
        f"Task: {obs.task_description}\n\nBuggy module:\n```python\n{obs.buggy_code}\n```\n\nTests:\n```python\n{obs.test_suite}\n```\n\n"
        f"Current test output:\n{obs.current_error_output}"
    )


def run_tool_output(answer: CallToolObservation) -> dict[str, Any]:
    """A step's answer as ORS's ``RunToolOutput``."""
    result = ToolCallResult.model_validate(answer.result)
    reward = float(answer.reward or 0.0)
    message = answer.error.message if answer.error is not None else None
    data = dict(result.data or {})
    if message is not None and not answer.done and reward == 0.0 and not data.get("infra_failed"):
        return {"ok": False, "error": message}  # nothing was paid or ended: a plain mistake, told in band
    text = "\n".join(c.text for c in result.content)
    status = f"(step {data.get('step_number')}/{data.get('max_steps')}, reward {reward}, tests passed {data.get('tests_passed')}/{data.get('tests_total')})"
    metadata = {**data, "error": message}
    if answer.done:
        metadata["grade"] = data.get("grader_score")
    return {"ok": True, "output": {"blocks": [{"type": "text", "text": f"{text}\n{status}".strip()}], "metadata": metadata, "reward": reward, "finished": answer.done}}


def chunks(text: str, size: int = CHUNK) -> list[str]:
    """JSON ``text`` (compact, ASCII: its only whitespace is the spaces inside its strings) cut in pieces of at most
    ``size`` characters, none starting with a space: the clients strip the space after ``data:`` and any more with
    it. A cut is moved back before a run of spaces, and a run longer than a piece has its cut space escaped."""
    pieces, start = [], 0
    while start < len(text):
        end = min(start + size, len(text))
        cut = end
        while start < cut < len(text) and text[cut] == " ":
            cut -= 1
        if cut == start:  # spaces all the way back: the next piece starts with an escaped one (\u0020, inside a string)
            text = text[:end] + "\\u0020" + text[end + 1 :]
            cut = end
        pieces.append(text[start:cut])
        start = cut
    return pieces or [""]


class OrsSessions:
    """The ORS sessions of this server, by sid."""

    def __init__(self, table: HTTPEnvServer, slots: SessionSlots, replica: Replica, journal: Journal | None = None):
        self._table, self._slots, self._replica = table, slots, replica
        self._journal = journal  # ENV_STORE: a session whose replica is gone is taken over here
        self._sessions: dict[str, OrsSession] = {}

    def new_sid(self) -> str:
        return self._replica.tag(uuid.uuid4().hex)  # a balancer routes a request naming it to this replica

    def _prune(self) -> None:
        for sid in [s for s, held in self._sessions.items() if self._table.get_session_info(held.library_id) is None]:
            del self._sessions[sid]

    def held(self, sid: str) -> OrsSession | None:
        """The session ``sid`` names if it is open here (no error when it is not)."""
        session = self._sessions.get(sid)
        return session if session is not None and self._table.get_session_info(session.library_id) is not None else None

    async def find(self, sid: str, client: str) -> OrsSession:
        """The session ``sid`` names: held here, or taken over from the store when its replica is gone."""
        if sid not in self._sessions and self._journal is not None:
            try:
                held = await asyncio.to_thread(self._journal.named, sid)
            except JournalDown as exc:
                raise HTTPException(status_code=503, detail=str(exc)) from None
            if held is not None and held.get("deleted") and sid not in self._sessions:
                raise HTTPException(status_code=404, detail=f"session {sid!r} was deleted; create a new session")
            if held is not None and not held.get("deleted"):  # recorded by another replica (or this one before a restart)
                params = {"episode_id": held["episode_id"], "resume": True}
                return await self._open(sid, client, params, held.get("prompt"))
        return self._local(sid)

    def _local(self, sid: str) -> OrsSession:
        session = self._sessions.get(sid)
        if session is not None and self._table.get_session_info(session.library_id) is None:
            del self._sessions[sid]
            idle = self._slots.closed_for_idleness(session.library_id) is not None
            why = f"was closed after {self._slots.idle.idle_s:g} s without a request (ENV_SESSION_TIMEOUT_S)" if idle else "is closed"
            raise HTTPException(status_code=404, detail=f"session {sid!r} {why}; create a new session")
        if session is None:
            lost = self._replica.lost(sid)
            raise HTTPException(status_code=404, detail=lost or f"unknown session {sid!r}: POST /create_session, then /create, starts one")
        return session

    async def create(self, sid: str, client: str, body: CreateRequest) -> OrsSession:
        self._prune()
        if sid in self._sessions:
            raise HTTPException(status_code=400, detail=f"session {sid!r} has a task already; /delete it or create another session")
        if body.env_name is not None and body.env_name.lower() != ENV_NAME:
            raise HTTPException(status_code=404, detail=f"unknown environment {body.env_name!r}; this server serves {ENV_NAME!r}")
        session = await self._open(sid, client, self._params(body))
        if self._journal is not None:
            held = {"episode_id": session.first["episode_id"], "prompt": session.prompt}
            try:
                await asyncio.to_thread(self._journal.name, sid, held)
            except JournalDown as exc:
                await self.delete(sid)
                raise HTTPException(status_code=503, detail=str(exc)) from None
        return session

    async def _open(self, sid: str, client: str, params: dict[str, Any], prompt: list[dict[str, Any]] | None = None) -> OrsSession:
        """A library session whose environment resets with ``params`` (or resumes a recorded episode), kept as ``sid``."""
        if self._replica.draining:
            raise HTTPException(status_code=503, detail=self._replica.refusal())
        refused = self._slots.over_share(client)
        if refused is not None:
            raise _refusal(429, refused)
        self._slots.opened(client)  # held while the session is made: a burst of creates cannot pass the check together
        try:
            try:
                library_id, env = await self._table._create_session()
            except SessionCapacityError as exc:
                raise _refusal(503, self._slots.server_full(exc.active_sessions, exc.max_sessions)) from None
            except EnvironmentFactoryError as exc:
                raise HTTPException(status_code=503, detail=str(exc)) from None
            if not isinstance(env, SessionEnvironment):
                await self._table._destroy_session(library_id)
                raise TypeError(f"the session's environment is a {type(env).__name__}, which cannot play an ORS session")
            started = await reset_session(env, params)
            if isinstance(started, str):
                await self._table._destroy_session(library_id)  # a refused task keeps no session
                raise HTTPException(status_code=400, detail=started)
        finally:
            self._slots.closed(client)
        self._slots.created(library_id, client)
        first = started.model_dump(exclude={"reward", "done"})
        session = OrsSession(sid, library_id, env, prompt or [{"type": "text", "text": prompt_text(started)}], first)
        self._sessions[sid] = session
        return session

    @staticmethod
    def _params(body: CreateRequest) -> dict[str, Any]:
        if body.task_spec is None:
            return {"split": body.split, "index": body.index, "seed": DEFAULT_SEED}
        try:
            return TaskSpec.model_validate(body.task_spec).reset_params()
        except ValidationError as exc:
            raise HTTPException(status_code=400, detail="task_spec: " + "; ".join(describe_error(e) for e in exc.errors())) from None
        except ValueError as exc:
            raise HTTPException(status_code=400, detail=str(exc)) from None

    async def delete(self, sid: str) -> None:
        session = self._sessions.pop(sid, None)
        if session is not None:
            for call in session.calls.values():
                call.cancel()
            await self._table._destroy_session(session.library_id)
            if self._journal is not None:  # no replica takes a deleted session over
                with contextlib.suppress(JournalDown):
                    await asyncio.to_thread(self._journal.name, sid, {"deleted": True})

    def touch(self, session: OrsSession) -> None:
        with self._slots.in_use(session.library_id):  # its idle clock starts again now
            pass

    def start_call(self, session: OrsSession, call: CallRequest) -> str:
        call_id = uuid.uuid4().hex
        session.calls[call_id] = asyncio.get_running_loop().create_task(self._call(session, call))
        while len(session.calls) > KEPT_CALLS:
            oldest, task = next(iter(session.calls.items()))
            if not task.done():
                break  # a call still running is kept whatever the count
            del session.calls[oldest]
        return call_id

    async def _call(self, session: OrsSession, call: CallRequest) -> str:
        with self._slots.in_use(session.library_id):  # a session whose call is running is not idle
            episode = session.env.episode
            if episode is None:
                return _json({"ok": False, "error": "this session has no episode: POST /create names its task"})
            if episode.done:
                grade = episode.state().grader_score
                return _json({"ok": False, "error": f"the episode is finished (grade {grade}); create a new session to play the task again"})
            answer = await session.env.mcp_client.call_tool(call.name, call.input)
            return _json(run_tool_output(CallToolObservation.model_validate(answer)))

    async def stream(self, session: OrsSession, call_id: str) -> AsyncIterator[Event | None]:
        """The call's events; None while it runs, every KEEPALIVE_S (a keep-alive comment)."""
        task = session.calls.get(call_id)
        if task is None:
            yield "error", f"unknown task_id {call_id[:80]!r} in this session: the call's result was not kept; call the tool again"
            return
        yield "task_id", call_id
        while True:
            done, _ = await asyncio.wait({task}, timeout=KEEPALIVE_S)  # a dropped stream leaves the call running
            if done:
                break
            yield None
        if task.cancelled():
            yield "error", "the call was cancelled: its session was deleted"
            return
        failed = task.exception()
        if failed is not None:
            yield "error", f"the call failed on the server: {type(failed).__name__}: {failed}"
            return
        pieces = chunks(task.result())
        for n, piece in enumerate(pieces):
            yield ("end" if n == len(pieces) - 1 else "chunk"), piece


def event_stream(events: AsyncIterator[Event | None]) -> StreamingResponse:
    """Server-sent events, written here: sse-starlette 2.x (which openreward pins) keeps one exit event for the
    whole process, bound to the first event loop, and fails in any other (each test client runs its own)."""

    async def body() -> AsyncIterator[bytes]:
        async for event in events:
            yield b": keep-alive\r\n\r\n" if event is None else f"event: {event[0]}\r\ndata: {event[1]}\r\n\r\n".encode()

    return StreamingResponse(body(), media_type="text/event-stream", headers=SSE_HEADERS)


def _json(value: dict[str, Any]) -> str:
    """Compact and ASCII: the only whitespace left is spaces inside strings, which ``chunks`` keeps off a piece's start."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=True)


def _refusal(status: int, refusal: Refusal) -> HTTPException:
    return HTTPException(status_code=status, detail=refusal.message, headers={"Retry-After": str(refusal.retry_after_s)})


def _sid(request: Request) -> str:
    sid = (request.headers.get("x-session-id") or "").strip()
    if not sid:
        raise HTTPException(status_code=400, detail="the X-Session-ID header is required: POST /create_session answers one")
    return sid


def _env(env_name: str) -> None:
    if env_name.lower() != ENV_NAME:
        raise HTTPException(status_code=404, detail=f"unknown environment {env_name!r}; this server serves {ENV_NAME!r}")


def serve_ors(app: FastAPI, table: HTTPEnvServer, slots: SessionSlots, replica: Replica, journal: Journal | None = None) -> OrsSessions:
    sessions = OrsSessions(table, slots, replica, journal)
    tags: list[str | Enum] = ["ORS"]

    @app.post("/create_session", tags=tags, summary="ORS: a new session id (SSE: task_id, end)")
    async def create_session() -> StreamingResponse:
        sid = sessions.new_sid()

        async def events() -> AsyncIterator[Event | None]:
            yield "task_id", sid
            yield "end", ""

        return event_stream(events())

    @app.post("/create", tags=tags, summary="ORS: start the session's episode (task_spec, or split and index)")
    async def create(request: Request, body: CreateRequest) -> dict[str, Any]:
        session = await sessions.create(_sid(request), client_of(request.scope), body)
        return {"sid": session.sid, "observation": session.first}

    @app.post("/ping", tags=tags, summary="ORS: the session is in use")
    async def ping(request: Request) -> dict[str, str]:
        sessions.touch(await sessions.find(_sid(request), client_of(request.scope)))
        return {"status": "ok"}

    @app.post("/delete", tags=tags, summary="ORS: end the session's episode and the session")
    async def delete(request: Request) -> dict[str, str]:
        sid = _sid(request)
        await sessions.delete(sid)
        return {"sid": sid}

    @app.post("/delete_session", tags=tags, summary="ORS: end the session (as /delete)")
    async def delete_session(request: Request) -> dict[str, str]:
        return await delete(request)

    @app.get("/{env_name}/prompt", tags=tags, summary="ORS: the task as text blocks")
    @app.get("/prompt", tags=tags, summary="ORS: the task as text blocks (the openreward SDK's path)")
    async def prompt(request: Request, env_name: str = ENV_NAME) -> list[dict[str, Any]]:
        _env(env_name)
        session = await sessions.find(_sid(request), client_of(request.scope))
        sessions.touch(session)
        return session.prompt

    def tool_specs(session: OrsSession | None) -> dict[str, Any]:
        episode = session.env.episode if session is not None else None
        if episode is not None:
            tools = [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in tools_of(episode)]
        else:  # no episode named: the classic tasks' default tools (an episode's own are at /task_tools)
            classic = FAMILIES["classic"]
            tools = [
                {"name": d["function"]["name"], "description": d["function"]["description"], "input_schema": d["function"]["parameters"]}
                for d in classic.tools(classic.interface(None, None, None))
            ]
        return {"tools": tools}

    @app.get("/{env_name}/tools", tags=tags, summary="ORS: the session's tools (without one: the classic tasks' default tools)")
    @app.get("/tools", tags=tags, summary="ORS: as /{env}/tools (the openreward SDK's path)")
    async def tools(request: Request, env_name: str = ENV_NAME) -> dict[str, Any]:
        _env(env_name)
        sid = (request.headers.get("x-session-id") or "").strip()
        return tool_specs(sessions.held(sid) if sid else None)

    @app.get("/{env_name}/task_tools", tags=tags, summary="ORS: the session's episode's tools")
    @app.get("/task_tools", tags=tags, summary="ORS: as /{env}/task_tools (the openreward SDK's path)")
    async def task_tools(request: Request, env_name: str = ENV_NAME) -> dict[str, Any]:
        _env(env_name)
        session = await sessions.find(_sid(request), client_of(request.scope))
        sessions.touch(session)
        return tool_specs(session)

    @app.post("/{env_name}/call", tags=tags, summary="ORS: call a tool (SSE: task_id, chunk..., end; or error)")
    @app.post("/call", tags=tags, summary="ORS: as /{env}/call (the openreward SDK's path)")
    async def call(request: Request, body: CallRequest, env_name: str = ENV_NAME) -> StreamingResponse:
        _env(env_name)
        session = await sessions.find(_sid(request), client_of(request.scope))
        call_id = body.task_id or sessions.start_call(session, body)
        return event_stream(sessions.stream(session, call_id))

    return sessions
