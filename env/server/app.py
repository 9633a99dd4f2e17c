"""The FastAPI app: OpenEnv's ``create_app`` plus ``GET /``, ``GET /tasks``, ``GET /state``, a richer ``/health``, and
``/mcp`` (POST and WebSocket) whose ``openenv/session/create`` resets the session with its params.

    app = build_app()                                # for tests: fastapi.testclient.TestClient(app)
    app = build_app(web_ui=web_ui)                   # what env.server.main serves, with the demo at /web
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

from fastapi import Cookie, FastAPI, HTTPException, Request, Response, WebSocket
from fastapi.exception_handlers import request_validation_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.mcp_types import JsonRpcErrorCode, JsonRpcRequest, JsonRpcResponse
from openenv.core.env_server.types import ConcurrencyConfig
from pydantic import ValidationError

from env.config import Settings
from env.families.catalog import TaskCatalog
from env.families.registry import FAMILIES
from env.interface import ALIASES, PROFILES, tool_schemas
from env.listing import FILTERS, FilterError, listed, listing_entry, task_filter
from env.models import DebugAction, DebugObservation, DebugState
from env.runtime import Runtime
from env.server.clients import client_of
from env.server.environment import ENV_NAME, DebugEnvironment
from env.server.episodes import NO_EPISODE_NAMED, EpisodeNotFound, EpisodeStore, NoEpisodeNamed
from env.server.guard import RequestGuard
from env.server.idle import IdleSessions
from env.server.journal import journal_from
from env.server.mcp import close_session, create_session, drop_socket, openenv_server, serve_socket, take_endpoint
from env.server.metrics import CONTENT_TYPE, ServerMetrics
from env.server.ors import serve_ors
from env.server.replica import Replica
from env.server.server_timing import ServerTiming
from env.server.slots import SessionSlots
from env.server.task_api import serve_task_api
from env.settings import unknown as unknown_settings

if TYPE_CHECKING:
    import gradio as gr

log = logging.getLogger("env.server")

VERSION = "1.0.0"

# Given the runtime, the ``gradio_builder`` OpenEnv's ``create_app`` mounts at /web when ENABLE_WEB_INTERFACE=true
# (called with the library's arguments, it makes the demo's Blocks).
WebUI = Callable[[Runtime], Callable[..., "gr.Blocks"]]


def build_app(runtime: Runtime | None = None, settings: Settings | None = None, web_ui: WebUI | None = None) -> FastAPI:
    settings = settings or Settings.from_env()
    for line in unknown_settings():  # a misspelt ENV_/SANDBOX_ variable would otherwise be ignored in silence
        log.warning(line)
    runtime = runtime or Runtime.from_env(TaskCatalog.from_env())
    store = EpisodeStore(settings.http_episodes, settings.session_timeout_s, single_user=settings.single_user, per_client=settings.sessions_per_client)
    if settings.sessions_per_client >= settings.max_sessions:
        log.warning(
            "ENV_SESSIONS_PER_CLIENT=%d is not below ENV_MAX_SESSIONS=%d: one client can take every session (fine for one trainer alone)",
            settings.sessions_per_client, settings.max_sessions,
        )
    replica = Replica(settings.replica, settings.drain_seconds)
    idle = IdleSessions(settings.session_timeout_s, settings.first_reset_timeout_s)
    metrics = ServerMetrics(replica, store, settings, idle, runtime.cpu)
    journal = journal_from(settings.store, 2 * settings.session_timeout_s)  # None without ENV_STORE
    factory = functools.partial(DebugEnvironment, runtime=runtime, store=store, replica=replica, metrics=metrics, journal=journal)
    app = create_app(
        factory,
        DebugAction,
        DebugObservation,
        env_name=ENV_NAME,
        state_cls=DebugState,
        # The guard closes idle WebSockets itself, with a reason (the library's reaper would free the slot and leave
        # the socket open, and it takes state messages for silence), and SessionSlots closes idle MCP sessions made
        # over POST /mcp after the limit; the library's reaper, at twice the limit, is left as a backstop.
        concurrency_config=ConcurrencyConfig(max_concurrent_envs=settings.max_sessions, session_timeout=2 * settings.session_timeout_s),
        # With ENABLE_WEB_INTERFACE=true the library mounts a UI at /web: ours, alone (the library's playground
        # shares one environment between all visitors, which our sessions must never do).
        gradio_builder=web_ui(runtime) if web_ui is not None else _no_web_ui,
        show_default_tab=False,
        title_override="AgentDebuggerEnv",
    )
    app.version = VERSION
    app.add_exception_handler(RequestValidationError, _invalid_request)
    app.state.runtime, app.state.store, app.state.settings = runtime, store, settings
    app.state.replica, app.state.metrics, app.state.idle = replica, metrics, idle
    # The library's /health only says "healthy"; ours also reports the sandbox's isolation.
    app.router.routes = [r for r in app.router.routes if getattr(r, "path", None) != "/health"]

    @app.get("/health", tags=["Health"], summary="Health check and isolation layers (503 while the replica drains)")
    async def health(response: Response) -> dict[str, Any]:
        if replica.draining:  # a balancer's health check then sends new sessions elsewhere
            response.status_code = 503
        return health_report(runtime, replica, store, settings)

    @app.get("/metrics", tags=["Health"], summary="Prometheus metrics: sessions by family, steps, sandbox latency, capacity, draining")
    async def prometheus_metrics() -> Response:
        store.reap()  # HTTP episodes idle past the limit are closed lazily: count them now
        return Response(content=metrics.render(), media_type=CONTENT_TYPE)

    # The library's POST /mcp: ours answers openenv/session/create with a reset (its params are the reset's arguments)
    # and a tool request naming no session (the library would build a throw-away environment with no episode for it);
    # the rest (session/close, a session's tools/list and tools/call through DebugEnvironment.mcp_client) is the library's.
    library_mcp = take_endpoint(app, "/mcp", "POST")
    sessions = openenv_server(app)
    slots = SessionSlots(settings.sessions_per_client, idle, sessions, functools.partial(close_session, sessions), on_refusal=metrics.refused)
    app.state.slots = slots
    metrics.count_mcp_closes(lambda: slots.idle_closes)
    app.router.on_startup.append(slots.start)  # closes idle MCP sessions on time
    app.router.on_shutdown.append(slots.stop)

    @app.post("/mcp", tags=["MCP"], summary="MCP JSON-RPC: tools/list, tools/call, openenv/session/create (with reset arguments) and close")
    async def mcp(request: Request) -> dict[str, Any]:
        try:
            rpc = JsonRpcRequest.model_validate_json(await request.body())
        except ValidationError:
            return await library_mcp(request)  # the library's parse and request errors, unchanged
        named = rpc.params.get("session_id")
        if named is not None and not isinstance(named, str):  # the library would look an unhashable id up: a 500
            message = f"'session_id' must be a string (the one openenv/session/create answered), not {type(named).__name__}"
            return JsonRpcResponse.error_response(JsonRpcErrorCode.INVALID_PARAMS, message, request_id=rpc.id).model_dump()
        if rpc.method == "openenv/session/create":
            return (await new_session(rpc, client_of(request.scope))).model_dump()
        if rpc.method in ("tools/list", "tools/call") and not rpc.params.get("session_id"):
            return JsonRpcResponse.error_response(JsonRpcErrorCode.INVALID_PARAMS, NO_EPISODE_NAMED, request_id=rpc.id).model_dump()
        gone = slots.closed_for_idleness(named) if named else None
        if gone is not None:
            return JsonRpcResponse.error_response(JsonRpcErrorCode.INVALID_PARAMS, gone, request_id=rpc.id).model_dump()
        with slots.in_use(named):  # a session is not idle while its request is answered
            return await library_mcp(request)

    async def new_session(rpc: JsonRpcRequest, client: str) -> JsonRpcResponse:
        """openenv/session/create from ``client``: refused when it holds its share of the slots, else its session."""
        await slots.reap()  # an MCP session idle past the limit frees its slot now, as the refusals promise
        refused = slots.over_share(client)
        if refused is not None:
            return JsonRpcResponse.error_response(JsonRpcErrorCode.SERVER_ERROR, refused.message, request_id=rpc.id, data=refused.data())
        slots.opened(client)  # held while the session is made: a burst of creates cannot pass the check together
        try:
            answer = await create_session(sessions, rpc, slots.server_full)
        finally:
            slots.closed(client)
        if answer.error is None and isinstance(answer.result, dict):
            slots.created(answer.result["session_id"], client)
        return answer

    # The library's WS /mcp: ours answers openenv/session/create by resetting the connection's session with its params.
    drop_socket(app, "/mcp")

    @app.websocket("/mcp")
    async def mcp_socket(websocket: WebSocket) -> None:
        await serve_socket(websocket, sessions, slots.server_full)

    # The library's /state serves a throw-away environment; ours finds the episode as /step does.
    app.router.routes = [r for r in app.router.routes if getattr(r, "path", None) != "/state"]

    @app.get("/state", tags=["State Management"], summary="An HTTP episode's state", response_model=DebugState)
    def state(episode_id: str | None = None, adbg_episode: str | None = Cookie(None)) -> DebugState:
        """?episode_id=..., else the episode the adbg_episode cookie names (400 when neither is sent)."""
        try:
            return store.find(episode_id, adbg_episode).state()
        except NoEpisodeNamed as exc:
            raise HTTPException(status_code=400, detail=str(exc)) from None
        except EpisodeNotFound as exc:
            raise HTTPException(status_code=404, detail=replica.lost(episode_id or adbg_episode or "") or str(exc)) from None

    serve_listing(app, runtime)
    serve_task_api(app, runtime, ENV_NAME)
    app.state.ors = serve_ors(app, sessions, slots, replica, journal)  # after the routes its /{env}/... paths must not shadow

    @app.get("/", tags=["Environment Info"], summary="API overview")
    async def overview() -> dict[str, Any]:
        return await asyncio.get_running_loop().run_in_executor(runtime.executor, api_overview, runtime)  # may generate listed tasks

    app.add_middleware(RequestGuard, max_body_bytes=settings.max_body_bytes, idle=idle, slots=slots)
    if settings.server_timing:  # outermost: its total holds the guard's work too
        app.add_middleware(ServerTiming)
    return app


def serve_listing(app: FastAPI, runtime: Runtime) -> None:
    """GET /tasks (filtered by its query) and GET /tasks/{task_id}, computed in the runtime's threads: a listing may
    generate the procedural tasks listed on request."""
    loop = asyncio.get_running_loop

    @app.get("/tasks", tags=["Environment Info"], summary="The listed tasks with their split, limits and tools; the query filters them")
    async def tasks(
        request: Request, family: str | None = None, library: str | None = None, source: str | None = None, difficulty: str | None = None,
        split: str | None = None,
    ) -> list[dict[str, Any]]:
        """Every filter given must hold (?split=train&library=attrs); an unknown filter or value is a 400 saying what is accepted."""
        try:
            query = task_filter(request.query_params.multi_items())
            return await loop().run_in_executor(runtime.executor, listed, runtime.catalog, query)
        except FilterError as exc:
            raise HTTPException(status_code=400, detail=str(exc)) from None

    @app.get("/tasks/{task_id}", tags=["Environment Info"], summary="One task (a procedural id is generated on request)")
    async def one_task(task_id: str) -> dict[str, Any]:
        try:
            task = await loop().run_in_executor(runtime.executor, runtime.catalog.get, task_id)
        except KeyError:
            raise HTTPException(status_code=404, detail=f"unknown task_id {task_id!r}") from None
        return listing_entry(runtime.catalog.summary(task))

    assert tuple(inspect.signature(tasks).parameters)[1:] == FILTERS, "/tasks documents every filter, in TaskFilter's order"


def health_report(runtime: Runtime, replica: Replica, store: EpisodeStore, settings: Settings) -> dict[str, Any]:
    """What GET /health answers: the library's status, plus the sandbox's isolation and what replicas must agree on."""
    iso = runtime.isolation
    return {
        "status": "draining" if replica.draining else "healthy",
        "replica": replica.name,
        "unfinished_episodes": unfinished(replica, store),
        "environment": ENV_NAME,
        "version": VERSION,
        "isolation": {
            "tier": iso.tier, "can_execute": iso.can_execute, "reason": iso.reason,
            "layers": {k: v.model_dump() for k, v in iso.layers.items()},
            # each guarantee a run needs, and the active layer that gives it on this host
            "guarantees": {k: v.model_dump() for k, v in iso.guarantees.items()},
            "shell_guarantees": {k: v.model_dump() for k, v in iso.shell_guarantees.items()},
            "shell_refusal": iso.shell_refusal,
        },
        "http_episodes": len(store),
        # ENV_SINGLE_USER: requests naming no episode get the latest one, whoever started it
        "single_user": settings.single_user,
        # names the secret the verdicts derive from (never the secret): replicas and resumed runs must agree
        "secret_fingerprint": runtime.secret.fingerprint,
        "secret_generated": runtime.secret.generated,
    }


def api_overview(runtime: Runtime) -> dict[str, Any]:
    """What GET / answers: the endpoints, actions, tools, profiles and tasks, in one page."""
    return {
        "name": ENV_NAME,
        "version": VERSION,
        "description": DebugEnvironment(runtime).get_metadata().description,
        "endpoints": {
            "GET /": "this overview",
            "GET /health": "health and the sandbox's active isolation layers (503 while the replica drains)",
            "GET /metrics": "Prometheus metrics (sessions by family, steps, submissions, sandbox run latency, capacity, draining)",
            "GET /tasks": "tasks with split, difficulty, limits and test counts; ?split=, ?family=, ?library=, ?source=, ?difficulty= filter them",
            "GET /tasks/{task_id}": "one task (a procedural id is generated on request)",
            f"GET /{ENV_NAME}/splits": "OpenEnv's Task API: the splits (train, validation, test); POST .../tasks, .../num_tasks, .../task, .../task_range "
            'list a split\'s tasks, and POST /reset {"split": ..., "index": ...} plays one',
            "POST /reset": 'start an episode: {"task_id": "easy", "seed": 1}; the observation carries episode_id',
            "POST /step": 'act: {"action": {...}, "episode_id": "..."} (without episode_id: the episode the adbg_episode '
            'cookie from /reset names); an action may be a tool call, {"type": "call_tool", "tool_name": ..., "arguments": {...}}, '
            'or {"type": "list_tools"}',
            "GET /state": "episode state (?episode_id=..., else the adbg_episode cookie)",
            "GET /schema": "JSON schemas of action, observation and state",
            "GET /metadata": "environment metadata",
            "POST /mcp": "MCP JSON-RPC: openenv/session/create (params: the reset's, e.g. {\"task_id\": \"easy\", \"seed\": 1}), "
            "then tools/list and tools/call with its session_id; openenv/session/close",
            "WS /ws": "one episode per connection (OpenEnv clients)",
            "GET /docs": "OpenAPI documentation",
        },
        "action_types": {name: doc for family in FAMILIES.values() for name, doc in family.actions().items()},
        "repository_tools": {t["function"]["name"]: t["function"]["description"] for t in tool_schemas()},
        "profiles": {name: p.description for name, p in PROFILES.items()},
        "reset_options": {
            "profile": " | ".join(PROFILES) + " (the tool interface; see /tasks for each profile's tools)",
            "edit_gate": "true/false: lock edit tools until a debugger command succeeds in the relay (default: on for pdb)",
            "aliases": "{name: tool} added to the tool-name alias table",
        },
        "tool_aliases": {name: list(alias.tools) for name, alias in ALIASES.items()},
        "tasks": [runtime.catalog.summary(task) for task in runtime.catalog.all()],
    }


def unfinished(replica: Replica, store: EpisodeStore) -> int:
    """Episodes still being played here (WebSocket sessions' and HTTP ones): what a drain waits for."""
    return sum(1 for e in [*replica.session_episodes(), *store.open_episodes()] if not e.done)


async def _invalid_request(request: Request, exc: Exception) -> Response:
    """FastAPI's 422, except that a body sent without a JSON content-type is a 415 that says so (the 422 only said
    the input should be a valid dictionary, which is true of what the client meant to send)."""
    assert isinstance(exc, RequestValidationError)
    declared = request.headers.get("content-type", "")
    if declared.split(";")[0].strip().lower() != "application/json" and any(tuple(e.get("loc", ()))[:1] == ("body",) for e in exc.errors()):
        shown = f"'{declared[:80]}'" if declared else "missing"
        return JSONResponse(status_code=415, content={"detail": f"the request body must be JSON sent with content-type: application/json (this request's content-type: {shown})"})
    return await request_validation_exception_handler(request, exc)


def _no_web_ui(*_library_args: object) -> NoReturn:
    raise RuntimeError("ENABLE_WEB_INTERFACE is on, but this app was built without a web UI (build_app(web_ui=...)); "
                       "start the server as env.server.main does")
