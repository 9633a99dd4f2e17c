"""OpenEnv's tool protocol (MCP, its RFC 003) on this environment: an episode's tools, from the one tool registry.

    tools_of(episode)                    # its family's tools under its profile, as OpenEnv's Tool models
    plan(episode, request)               # a step request told apart: the action wire, a listing, or a call
    as_action(call, interface)           # the one translation: a call_tool is the DebugAction the action wire takes
    tool_observation(name, obs)          # that step's observation as OpenEnv's CallToolObservation

Where requests arrive: ``step`` over HTTP, /ws and in process (``{"type": "call_tool", "tool_name": ..., "arguments":
...}``: the library hands it to ``step_async`` as a DebugAction with extra fields, our action class not being an MCP
one); JSON-RPC ``tools/list`` / ``tools/call`` on POST /mcp (with a session_id) and in /ws ``mcp`` messages, which the
library routes to the session environment's ``mcp_client`` (:class:`SessionTools`); and WS /mcp (:func:`serve_socket`).
``openenv/session/create`` takes the reset's arguments (:func:`create_session`); the library keeps the session table,
closes sessions and attaches /ws to one (``/ws?session_id=``).
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Callable
from typing import Any, Literal, Protocol, runtime_checkable

from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.routing import APIRoute, APIWebSocketRoute
from openenv.core.env_server.exceptions import EnvironmentFactoryError, SessionCapacityError
from openenv.core.env_server.http_server import HTTPEnvServer
from openenv.core.env_server.mcp_types import (
    RESERVED_TOOL_NAMES,
    CallToolAction,
    CallToolObservation,
    JsonRpcErrorCode,
    JsonRpcRequest,
    JsonRpcResponse,
    ListToolsAction,
    ListToolsObservation,
    Tool,
    ToolError,
    ToolErrorType,
)
from openenv.core.env_server.serialization import serialize_observation
from pydantic import BaseModel, ValidationError

from env.contract import Playable
from env.families.base import Episode
from env.families.registry import FAMILIES
from env.interface import Interface
from env.models import DebugAction, DebugObservation
from env.server.slots import Refusal
from env.server.transport import HTTP_REQUEST
from env.tools.base import InvalidArguments, ToolTimeout, UnknownTool, describe_error
from env.tools.base import ToolError as Mistake

# The action's own fields: a tool argument of these names would change what the action is.
_STRUCTURAL = ("action_type", "metadata")


class TextContent(BaseModel):
    type: Literal["text"] = "text"
    text: str


class ToolCallResult(BaseModel):
    """A call's result, shaped as FastMCP's ``CallToolResult``: OpenEnv's ``MCPToolClient.call_tool`` returns ``data``."""

    content: list[TextContent]
    data: dict[str, Any] | None  # the step's observation fields (None when the call was refused before any step)
    is_error: bool


def interface_of(episode: Playable) -> Interface:
    """The episode's tool interface (every family's episodes are :class:`Episode` s, which hold theirs)."""
    if not isinstance(episode, Episode):
        raise TypeError(f"{type(episode).__name__} is not an Episode: it has no tool interface to list or call tools through")
    return episode.interface


def tools_of(episode: Playable) -> list[Tool]:
    """The episode's tools, as ``/tasks`` publishes them for its profile; a reserved name fails closed."""
    interface = interface_of(episode)
    tools = [
        Tool(name=d["function"]["name"], description=d["function"]["description"], input_schema=d["function"]["parameters"])
        for d in FAMILIES[episode.family].tools(interface)
    ]
    reserved = sorted({t.name for t in tools} & RESERVED_TOOL_NAMES)
    if reserved:
        raise RuntimeError(
            f"the {interface.profile.name!r} profile of the {episode.family} family offers {', '.join(reserved)}, "
            f"which OpenEnv reserves ({', '.join(sorted(RESERVED_TOOL_NAMES))}): rename the tool in env/tools or the profile"
        )
    return tools


def tool_request(action: DebugAction) -> ListToolsAction | CallToolAction | None:
    """OpenEnv's action when ``action`` is one (``type`` list_tools or call_tool, no action_type), else None;
    InvalidArguments when it is one but malformed."""
    kind = (action.model_extra or {}).get("type")
    if action.action_type or kind not in ("list_tools", "call_tool"):
        return None
    model: type[ListToolsAction] | type[CallToolAction] = ListToolsAction if kind == "list_tools" else CallToolAction
    try:
        return model.model_validate(action.model_dump(exclude_unset=True))
    except ValidationError as exc:
        raise InvalidArguments(f"{kind}: " + "; ".join(describe_error(e) for e in exc.errors())) from None


def as_action(call: CallToolAction, interface: Interface) -> DebugAction:
    """The DebugAction the action wire would carry for this call: ``{"action_type": name, **arguments}``."""
    name = call.tool_name
    if name in RESERVED_TOOL_NAMES:  # the action wire's aliases may map one (``step``); a tool call may not
        raise UnknownTool(
            f"{name!r} is a name OpenEnv reserves ({', '.join(sorted(RESERVED_TOOL_NAMES))}), not a tool; "
            f"expected one of: {', '.join(interface.tools)}"
        )
    clash = [k for k in _STRUCTURAL if k in call.arguments]
    if clash:
        raise InvalidArguments(f"{name}: " + "; ".join(f"unknown field '{k}'" for k in clash))
    try:
        return DebugAction.model_validate({**call.arguments, "action_type": name})
    except ValidationError as exc:
        raise InvalidArguments(f"{name}: " + "; ".join(describe_error(e) for e in exc.errors())) from None


def error_type(mistake: type[Exception] | None) -> ToolErrorType:
    if mistake is not None and issubclass(mistake, UnknownTool):
        return ToolErrorType.TOOL_NOT_FOUND
    if mistake is not None and issubclass(mistake, InvalidArguments):
        return ToolErrorType.INVALID_ARGS
    if mistake is not None and issubclass(mistake, ToolTimeout):
        return ToolErrorType.TIMEOUT
    return ToolErrorType.EXECUTION_ERROR  # the tool ran on valid arguments and failed, or the episode is over


def call_text(obs: DebugObservation) -> str:
    """What the tool said: its output, a query's answer, the error, else the test output."""
    return obs.tool_output or obs.query_result or obs.error or obs.current_error_output or ""


def tool_observation(name: str, obs: DebugObservation) -> CallToolObservation:
    """The step's observation as the tool's result: its fields as the result's data; reward and done as the step's."""
    error = ToolError(error_type=error_type(obs.mistake), message=obs.error) if obs.error else None
    result = ToolCallResult(
        content=[TextContent(text=call_text(obs))], data=obs.model_dump(exclude={"reward", "done"}), is_error=error is not None
    )
    return CallToolObservation(
        tool_name=name, result=result.model_dump(), error=error, done=obs.done, reward=obs.reward, metadata=obs.metadata
    )


def refused_call(name: str, mistake: Mistake, episode: Playable) -> CallToolObservation:
    """A call that never became an action (a reserved name, arguments no action can hold): no step is taken."""
    error = ToolError(error_type=error_type(type(mistake)), message=str(mistake))
    result = ToolCallResult(content=[TextContent(text=str(mistake))], data=None, is_error=True)
    return CallToolObservation(tool_name=name, result=result.model_dump(), error=error, done=episode.done, reward=0.0)


# What a step request becomes: the DebugAction to step and the tool name it was called by (None on the action wire),
# or the answer itself when no step is taken (a listing, a call that cannot become an action).
Planned = tuple[DebugAction, str | None] | ListToolsObservation | CallToolObservation


def plan(episode: Playable, request: DebugAction | CallToolAction) -> Planned:
    """The one place a step request is told apart: the action wire, a tool listing, or a tool call (translated)."""
    if isinstance(request, CallToolAction):
        call = request
    else:
        try:
            protocol = tool_request(request)
        except InvalidArguments as exc:
            return refused_call(str((request.model_extra or {}).get("tool_name") or ""), exc, episode)
        if protocol is None:
            return request, None
        if isinstance(protocol, ListToolsAction):
            return list_observation(episode)
        call = protocol
    try:
        return as_action(call, interface_of(episode)), call.tool_name
    except Mistake as exc:
        return refused_call(call.tool_name, exc, episode)


def list_observation(episode: Playable) -> ListToolsObservation:
    """Listing is not a step: reward 0.0 (every reward here is a float), done as the episode is."""
    return ListToolsObservation(tools=tools_of(episode), done=episode.done, reward=0.0)


class ToolHost(Protocol):
    """What :class:`SessionTools` needs of the environment (``DebugEnvironment``)."""

    @property
    def episode(self) -> Playable | None: ...

    async def call_tool(self, episode: Playable, call: CallToolAction) -> CallToolObservation: ...


class SessionTools:
    """The environment's ``mcp_client``: OpenEnv's JSON-RPC handler sends a session's ``tools/list`` and ``tools/call``
    here (POST /mcp with a session_id, WS /mcp, /ws ``mcp`` messages). A call is the same step ``call_tool`` takes."""

    def __init__(self, host: ToolHost, no_episode: str):
        # weakly: the environment holds this object, and a strong reference back would make the pair a cycle that
        # outlives the session until the garbage collector runs (the replica counts its sessions in a WeakSet)
        self._host: ToolHost = weakref.proxy(host)
        self._no_episode = no_episode

    def is_connected(self) -> bool:
        return True  # nothing to connect to: the tools run in this process

    async def __aenter__(self) -> SessionTools:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    def _episode(self) -> Playable:
        episode = self._host.episode
        if episode is None:
            raise LookupError(self._no_episode)  # the library answers it as a JSON-RPC error with this message
        return episode

    async def list_tools(self) -> list[dict[str, Any]]:
        # MCP's own key (inputSchema), as the library lists the tools of its FastMCP environments
        return [{"name": t.name, "description": t.description, "inputSchema": t.input_schema} for t in tools_of(self._episode())]

    async def call_tool(self, name: object, arguments: object) -> dict[str, Any]:
        episode = self._episode()
        try:  # JSON-RPC params reach here unchecked: a name or arguments of any JSON type
            call = CallToolAction.model_validate({"tool_name": name, "arguments": arguments})
        except ValidationError as exc:
            mistake = InvalidArguments("tools/call: " + "; ".join(describe_error(e) for e in exc.errors()))
            return refused_call(str(name), mistake, episode).model_dump()
        return (await self._host.call_tool(episode, call)).model_dump()


def openenv_server(app: FastAPI) -> HTTPEnvServer:
    """The library's server behind ``create_app``'s routes. ``create_app`` keeps no reference to it, but its /ws endpoint
    closes over it; /mcp must create sessions in the same table that ``/ws?session_id=`` attaches to."""
    for route in app.router.routes:
        endpoint = getattr(route, "endpoint", None)
        if getattr(route, "path", None) == "/ws" and endpoint is not None and endpoint.__closure__:
            cells = dict(zip(endpoint.__code__.co_freevars, endpoint.__closure__, strict=True))
            server = cells["self"].cell_contents if "self" in cells else None
            if isinstance(server, HTTPEnvServer):
                return server
    raise RuntimeError("OpenEnv's /ws route does not hold its HTTPEnvServer (written for openenv 0.10.0): MCP sessions cannot be created")


# The library's POST /mcp endpoint: it takes the request and answers a JSON-RPC response as a dict.
Endpoint = Callable[[Request], Awaitable[dict[str, Any]]]


def drop_socket(app: FastAPI, path: str) -> None:
    """Remove the library's WebSocket route at ``path`` (ours replaces it)."""
    for route in app.router.routes:
        if isinstance(route, APIWebSocketRoute) and route.path == path:
            app.router.routes.remove(route)
            return
    raise RuntimeError(f"create_app made no WebSocket {path} route (written for openenv 0.10.0)")


def take_endpoint(app: FastAPI, path: str, method: str) -> Endpoint:
    """Remove the library's route for ``method path`` and return its endpoint (it still serves what ours does not)."""
    for route in app.router.routes:
        if isinstance(route, APIRoute) and route.path == path and method in (route.methods or set()):
            app.router.routes.remove(route)
            endpoint: Endpoint = route.endpoint
            return endpoint
    raise RuntimeError(f"create_app made no {method} {path} route (written for openenv 0.10.0)")


@runtime_checkable
class SessionEnvironment(Protocol):
    """What a session's JSON-RPC needs of its environment (``DebugEnvironment``)."""

    mcp_client: SessionTools

    @property
    def episode(self) -> Playable | None: ...

    async def reset_async(self, seed: int | None = None, episode_id: str | None = None, task_id: str | None = None, **options: Any) -> Any: ...


async def reset_session(env: SessionEnvironment, params: dict[str, Any]) -> DebugObservation | str:
    """The session's reset with ``params`` as its arguments: its first observation, or why it started no episode."""
    kwargs = {k: v for k, v in params.items() if k not in ("self", "session_id")}
    # The session holds the episode, as a /ws connection does: not the HTTP episode store, and no cookie.
    token = HTTP_REQUEST.set(None)
    try:
        obs = await env.reset_async(**kwargs)
    except Exception as exc:  # noqa: BLE001  (whatever failed, the client is told in-band: never a 500)
        return f"the reset failed: {exc}"
    finally:
        HTTP_REQUEST.reset(token)
    if env.episode is None or not isinstance(obs, DebugObservation):
        return obs.error if isinstance(obs, DebugObservation) and obs.error else "the reset started no episode"
    return obs


# What a full server answers: the refusal of a new session when ``active`` of ``most`` slots are held (SessionSlots.server_full).
Full = Callable[[int, int], Refusal]


def _refused(exc: SessionCapacityError | EnvironmentFactoryError, full: Full, request_id: str | int | None = None) -> JsonRpcResponse:
    if isinstance(exc, SessionCapacityError):
        refusal = full(exc.active_sessions, exc.max_sessions)
        return JsonRpcResponse.error_response(JsonRpcErrorCode.SERVER_ERROR, refusal.message, request_id=request_id, data=refusal.data())
    return JsonRpcResponse.error_response(JsonRpcErrorCode.SERVER_ERROR, str(exc), request_id=request_id)


async def close_session(server: HTTPEnvServer, session_id: str) -> None:
    """Close a library session (an MCP session made over POST /mcp, idle past its limit) and free its slot."""
    await server._destroy_session(session_id)


async def create_session(server: HTTPEnvServer, rpc: JsonRpcRequest, full: Full) -> JsonRpcResponse:
    """``openenv/session/create`` with the reset arguments (task_id, seed, profile ...) as its params: a library session
    whose environment has reset; the answer holds the session_id and the reset's observation. A refused reset keeps
    no session."""
    try:
        session_id, env = await server._create_session()
    except (SessionCapacityError, EnvironmentFactoryError) as exc:
        return _refused(exc, full, rpc.id)
    if not isinstance(env, SessionEnvironment):
        await server._destroy_session(session_id)
        raise TypeError(f"the session's environment is a {type(env).__name__}, which cannot reset an MCP session")
    started = await reset_session(env, rpc.params)
    if isinstance(started, str):
        await server._destroy_session(session_id)  # a refused reset keeps no session
        return JsonRpcResponse.error_response(JsonRpcErrorCode.INVALID_PARAMS, started, request_id=rpc.id)
    return JsonRpcResponse.success({"session_id": session_id, **serialize_observation(started)}, request_id=rpc.id)


async def socket_answer(env: SessionEnvironment, session_id: str, rpc: JsonRpcRequest) -> JsonRpcResponse:
    """One JSON-RPC request on a WS /mcp connection, whose session is the connection's own."""
    if rpc.method == "openenv/session/create":  # resets the connection's session (a second one ends the first episode)
        started = await reset_session(env, rpc.params)
        if isinstance(started, str):
            return JsonRpcResponse.error_response(JsonRpcErrorCode.INVALID_PARAMS, started, request_id=rpc.id)
        return JsonRpcResponse.success({"session_id": session_id, **serialize_observation(started)}, request_id=rpc.id)
    if rpc.method == "openenv/session/close":
        message = "this connection's session closes with the connection: close the WebSocket"
        return JsonRpcResponse.error_response(JsonRpcErrorCode.INVALID_REQUEST, message, request_id=rpc.id)
    try:
        if rpc.method == "tools/list":
            return JsonRpcResponse.success({"tools": await env.mcp_client.list_tools()}, request_id=rpc.id)
        if rpc.method == "tools/call":
            if not rpc.params.get("name"):
                return JsonRpcResponse.error_response(JsonRpcErrorCode.INVALID_PARAMS, "Missing 'name' in params", request_id=rpc.id)
            result = await env.mcp_client.call_tool(rpc.params["name"], rpc.params.get("arguments", {}))
            return JsonRpcResponse.success(result, request_id=rpc.id)
    except LookupError as exc:  # no episode yet: openenv/session/create (with the reset's arguments) starts one
        return JsonRpcResponse.error_response(JsonRpcErrorCode.INVALID_REQUEST, str(exc), request_id=rpc.id)
    return JsonRpcResponse.error_response(JsonRpcErrorCode.METHOD_NOT_FOUND, f"Method not found: {rpc.method}", request_id=rpc.id)


async def serve_socket(websocket: WebSocket, server: HTTPEnvServer, full: Full) -> None:
    """WS /mcp: a library session per connection, as the library's own route makes, whose openenv/session/create
    resets it with its params (the library's answers the session id alone, leaving the connection no way to start
    an episode). Malformed frames never reach here: the guard answers them."""
    await websocket.accept()
    try:
        session_id, env = await server._create_session()
    except (SessionCapacityError, EnvironmentFactoryError) as exc:
        await websocket.send_text(_refused(exc, full).model_dump_json())
        await websocket.close()
        return
    try:
        if not isinstance(env, SessionEnvironment):
            raise TypeError(f"the session's environment is a {type(env).__name__}, which cannot serve an MCP socket")
        while True:
            raw = await websocket.receive_text()
            try:
                rpc = JsonRpcRequest.model_validate_json(raw)
            except ValidationError as exc:
                reply = JsonRpcResponse.error_response(JsonRpcErrorCode.INVALID_REQUEST, f"Invalid request: {exc}")
            else:
                reply = await socket_answer(env, session_id, rpc)
                # what the library's reaper reads: a session in use is not idle (its own handler records it too)
                server._update_session_activity(session_id, increment_step=rpc.method == "tools/call")
            await websocket.send_text(reply.model_dump_json())
    except WebSocketDisconnect:
        pass
    finally:
        await server._destroy_session(session_id)
