"""Rewards are floats on the wire, always: trainers sum them, and an integer 0 (what an invalid action returned)
breaks typed consumers. Every family, over HTTP and WebSocket, for a reset, an agent's mistake, a tool and the end."""

from __future__ import annotations

import asyncio
import json

import pytest
from websockets.asyncio.client import connect

FAMILIES = {"easy": "query_context", "repo-cache-stale": "list_dir", "proc-easy-test-0": "list_dir"}


def reward_fields(body: dict) -> list:
    obs = body["observation"]
    return [body["reward"], obs["reward"] if "reward" in obs else 0.0, obs["step_reward"], obs["cumulative_reward"], *obs["breakdown"].values()]


def steps(task_id: str) -> list[dict]:
    tool = {"action_type": FAMILIES[task_id]}
    if task_id == "easy":
        tool.update(query_type="function_signature", query_target="binary_search")
    return [{"action_type": "no_such_action"}, tool, {"action_type": "give_up"}]


def test_the_schema_says_number():
    from env.models import DebugObservation, DebugState

    schema = DebugObservation.model_json_schema()["properties"]
    assert schema["reward"]["anyOf"] == [{"type": "number"}, {"type": "null"}]
    assert schema["step_reward"]["type"] == schema["cumulative_reward"]["type"] == "number"
    assert DebugState.model_json_schema()["properties"]["cumulative_reward"]["type"] == "number"


@pytest.mark.parametrize("task_id", sorted(FAMILIES))
def test_every_reward_is_a_float_over_http(client, task_id):
    bodies = [json.loads(client.post("/reset", json={"task_id": task_id, "seed": 1}).text)]
    episode = bodies[0]["observation"]["episode_id"]
    for action in steps(task_id):
        bodies.append(json.loads(client.post("/step", json={"action": action, "episode_id": episode}).text))
    assert bodies[1]["observation"]["error"]  # the mistake was one
    assert bodies[-1]["done"] is True
    values = [value for body in bodies for value in reward_fields(body)]
    assert values and all(type(value) is float for value in values), values
    state = json.loads(client.get("/state", params={"episode_id": episode}).text)
    assert type(state["cumulative_reward"]) is float
    assert sum(body["reward"] for body in bodies[1:]) == pytest.approx(state["cumulative_reward"])


@pytest.mark.parametrize("task_id", sorted(FAMILIES))
def test_every_reward_is_a_float_over_websocket(live_server, task_id):
    async def play() -> list[dict]:
        async with connect(live_server.url.replace("http", "ws") + "/ws", max_size=None) as ws:
            await ws.send(json.dumps({"type": "reset", "data": {"task_id": task_id, "seed": 1}}))
            replies = [json.loads(await ws.recv())["data"]]
            for action in steps(task_id):
                await ws.send(json.dumps({"type": "step", "data": action}))
                replies.append(json.loads(await ws.recv())["data"])
            return replies

    replies = asyncio.run(play())
    values = [value for body in replies for value in reward_fields(body)]
    assert all(type(value) is float for value in values), values
    assert replies[-1]["done"] is True
