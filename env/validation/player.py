"""Playing episodes against a running server, as an agent would, for both validators (``presubmission`` and
``v2``): over HTTP (``/reset``, ``/step``) through the harness's one HTTP driver (``env.eval.drivers.HttpDriver``),
over ``/ws`` (OpenEnv's EnvClient wire) and MCP's JSON-RPC (``/mcp``), with the wire's bodies typed as the checks
read them.

    episode = play_http("http://localhost:8000", "easy", 1, [{"action_type": "give_up"}])
    episode.grade, episode.rewards, normalised(episode.bodies)   # the verdict, the step rewards, a comparable record
    with HttpDriver(url) as driver:                              # several episodes on one connection
        play(driver, "easy", 1, actions, give_up=False).steps
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import TypeAlias, TypedDict, cast

import httpx
from websockets.sync.client import connect

from env.eval.drivers import HttpDriver

# A JSON value as it comes off the wire or goes into a report (a string alias: the union refers to itself).
JSON: TypeAlias = "dict[str, JSON] | list[JSON] | str | int | float | bool | None"
Action: TypeAlias = dict[str, JSON]  # an action on the wire: {"action_type": ..., and its arguments} (env.models.DebugAction)

VOLATILE = {"episode_id", "time_remaining", "duration_ms", "session_id"}  # fields two identical episodes may differ in
TIMING = re.compile(r"\d+(\.\d+)?\s?(s|ms|seconds)\b")  # pytest's "in 0.12s" and the like, in tool output


class ToolResult(TypedDict, total=False):
    """What a shell run reports besides its output (the fields the checks read)."""

    exit_code: int | None
    timed_out: bool


class Observation(TypedDict, total=False):
    """The observation's fields the checks read (env.models.DebugObservation on the wire; others pass through)."""

    episode_id: str
    task_id: str
    family: str
    step_number: int
    grader_score: float | None
    score_estimate: float | None
    breakdown: JSON
    tool_output: str | None
    tool_result: ToolResult | None
    error: str | None
    info: dict[str, JSON]
    logs: JSON


class Body(TypedDict):
    """One answer of ``/reset`` or ``/step`` (OpenEnv's StepResponse on the wire)."""

    observation: Observation
    reward: float
    done: bool


@dataclass
class PlayedEpisode:
    """One episode as a validator played it: the reset's body, every step's, and the wall time."""

    reset: Body
    steps: list[Body] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def bodies(self) -> list[Body]:
        return [self.reset, *self.steps]

    @property
    def grade(self) -> float | None:
        return (self.steps[-1] if self.steps else self.reset)["observation"].get("grader_score")

    @property
    def rewards(self) -> list[float]:
        return [body["reward"] for body in self.steps]


def normalised(value: object) -> object:
    """A body without what two identical episodes may differ in (ids, clocks, timings in tool output)."""
    if isinstance(value, dict):
        return {k: normalised(v) for k, v in value.items() if k not in VOLATILE and not k.endswith(("_ms", "_seconds"))}
    if isinstance(value, list):
        return [normalised(v) for v in value]
    if isinstance(value, str):
        return TIMING.sub("<t>", value)
    return value


def play(driver: HttpDriver, task_id: str, seed: int, actions: list[Action], *, profile: str | None = None,
         give_up: bool = True) -> PlayedEpisode:
    """Reset, then the actions until the episode ends (and ``give_up`` if it has not, so that it is graded)."""
    started = time.monotonic()
    episode = PlayedEpisode(cast(Body, driver.start(task_id, seed, **({"profile": profile} if profile else {}))))
    give_up_action: list[Action] = [{"action_type": "give_up"}] if give_up else []
    for action in actions + give_up_action:
        if episode.steps and episode.steps[-1]["done"]:
            break
        body = driver.send(action)
        if "observation" not in body:
            raise RuntimeError(f"{task_id}: /step answered {str(body)[:300]}")
        episode.steps.append(cast(Body, body))
    episode.seconds = time.monotonic() - started
    return episode


def play_http(url: str, task_id: str, seed: int, actions: list[Action], *, profile: str | None = None, give_up: bool = True) -> PlayedEpisode:
    """``play`` on a driver of its own."""
    with HttpDriver(url, timeout_s=300) as driver:
        return play(driver, task_id, seed, actions, profile=profile, give_up=give_up)


def plays_alone(url: str, task_id: str, seed: int) -> bool:
    """One of many concurrent episodes (reset, give_up) keeps its own id, task and step count."""
    with HttpDriver(url, timeout_s=120) as own:
        start = cast(Body, own.start(task_id, seed))["observation"]
        step = cast(Body, own.send({"action_type": "give_up"}))["observation"]
    return step["episode_id"] == start["episode_id"] and step["task_id"] == task_id and step["step_number"] == 1


def play_ws(url: str, task_id: str, seed: int, actions: list[Action]) -> PlayedEpisode:
    """The same over ``/ws`` (OpenEnv's EnvClient wire): ``{"type": "reset"|"step", "data": ...}``."""
    started = time.monotonic()
    ws_url = re.sub(r"^http", "ws", url.rstrip("/")) + "/ws"
    with connect(ws_url, open_timeout=30, max_size=16 * 1024 * 1024) as ws:

        def send(kind: str, data: dict[str, JSON]) -> Body:
            ws.send(json.dumps({"type": kind, "data": data}))
            reply = json.loads(ws.recv(timeout=300))
            if reply.get("type") != "observation":
                raise RuntimeError(f"{task_id}: /ws answered {str(reply)[:300]}")
            answer: Body = reply["data"]
            return answer

        episode = PlayedEpisode(send("reset", {"task_id": task_id, "seed": seed}))
        for action in actions:
            if episode.steps and episode.steps[-1]["done"]:
                break
            episode.steps.append(send("step", action))
        ws.send(json.dumps({"type": "close"}))
    episode.seconds = time.monotonic() - started
    return episode


class McpTool(TypedDict):
    name: str


class McpResult(TypedDict, total=False):
    """The results of the MCP calls the checks make (``openenv/session/create``, ``tools/list``)."""

    session_id: str
    tools: list[McpTool]


def rpc(http: httpx.Client, method: str, params: dict[str, JSON]) -> McpResult:
    """One JSON-RPC call to ``/mcp``; its ``result``, or a RuntimeError naming the error."""
    body = http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).json()
    if "result" not in body:
        raise RuntimeError(f"/mcp {method}: {str(body.get('error', body))[:300]}")
    result: McpResult = body["result"]
    return result
