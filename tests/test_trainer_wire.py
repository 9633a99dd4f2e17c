"""What RL trainers' loops rely on, over the wire, without installing them (TRL's GRPOTrainer keeps a batch of
sessions open for the whole run; verifiers and SkyRL run hundreds in flight and sum per-step rewards):
sessions held open with ``reset`` re-sent per batch, one task for one ``(task, seed)`` in every session,
float step rewards that sum to the episode's return, and capacity errors that say how to raise the limit."""

from __future__ import annotations

import asyncio
import json

from websockets.asyncio.client import ClientConnection, connect

from env.config import Settings
from env.server.app import build_app
from tests.conftest import LiveServer
from tests.helpers import GOLD, GOOD_HYPOTHESIS, submit


def ws_url(server: LiveServer) -> str:
    return server.url.replace("http", "ws") + "/ws"


async def call(ws: ClientConnection, kind: str, data: dict | None = None) -> dict:
    await ws.send(json.dumps({"type": kind, **({"data": data} if data is not None else {})}))
    return json.loads(await ws.recv())


def test_sessions_held_open_for_a_run_with_a_reset_per_batch(live_server):
    """8 sessions, 3 batches: each batch re-sends reset on every open session and plays the episode to its end."""

    async def run() -> list[list[tuple]]:
        sessions = [await connect(ws_url(live_server), max_size=None) for _ in range(8)]
        try:
            batches = []
            for batch in range(3):
                async def play(i: int, ws: ClientConnection, batch: int = batch) -> tuple:
                    task = ("easy", "medium")[(i + batch) % 2]
                    reset = (await call(ws, "reset", {"task_id": task, "seed": batch}))["data"]
                    action = submit(GOLD[task], GOOD_HYPOTHESIS[task]) if i % 2 else {"action_type": "give_up"}
                    end = (await call(ws, "step", action))["data"]
                    state = (await call(ws, "state"))["data"]
                    return reset["observation"]["task_id"] == task, end["done"], state["step_count"], state["seed"], reset["observation"]["episode_id"]

                batches.append(await asyncio.gather(*(play(i, ws) for i, ws in enumerate(sessions))))
            return batches
        finally:
            for ws in sessions:
                await ws.close()

    batches = asyncio.run(run())
    for batch, results in enumerate(batches):
        assert [r[:4] for r in results] == [(True, True, 1, batch)] * 8
    assert len({r[4] for results in batches for r in results}) == 24  # every reset is a new episode


def test_one_task_seed_gives_one_task_in_parallel_sessions(live_server):
    """A GRPO group: the same (task, seed) in several sessions at once sees the same task, hidden parameters included."""

    async def first(task: str, seed: int) -> dict:
        async with connect(ws_url(live_server), max_size=None) as ws:
            obs = (await call(ws, "reset", {"task_id": task, "seed": seed}))["data"]["observation"]
            view = (await call(ws, "step", {"action_type": "list_dir"} if task.startswith("proc") else {"action_type": "give_up"}))["data"]
            obs.pop("episode_id")
            view["observation"].pop("episode_id")
            return {"reset": obs, "step": view}

    async def group(task: str, seed: int) -> list[dict]:
        return await asyncio.gather(*(first(task, seed) for _ in range(4)))

    for task, seed in (("proc-medium-train-7", 3), ("hard", 5)):
        views = asyncio.run(group(task, seed))
        assert all(view == views[0] for view in views[1:]), task
    other = asyncio.run(group("proc-medium-train-8", 3))[0]
    assert other["reset"]["task_description"] != asyncio.run(group("proc-medium-train-7", 3))[0]["reset"]["task_description"]


def test_step_rewards_are_floats_that_sum_to_the_return(live_server):
    async def run() -> tuple[list, dict]:
        async with connect(ws_url(live_server), max_size=None) as ws:
            await call(ws, "reset", {"task_id": "medium", "seed": 2})
            actions = [
                {"action_type": "query_context", "query_type": "function_signature", "query_target": "hash_password"},
                {"action_type": "query_context", "query_type": "function_signature", "query_target": "authenticate_user"},
                {"action_type": "not_an_action"},
                submit(GOLD["medium"].replace("return", "return  ", 1), "a wrong guess"),
                submit(GOLD["medium"], GOOD_HYPOTHESIS["medium"]),
            ]
            replies = [(await call(ws, "step", action))["data"] for action in actions]
            return [reply["reward"] for reply in replies], replies[-1]

    rewards, last = asyncio.run(run())
    assert all(type(r) is float for r in rewards) and last["done"] is True
    assert round(sum(rewards), 6) == last["observation"]["cumulative_reward"]
    assert len(set(rewards)) > 1  # not a vacuous sum of zeros


def test_a_full_server_says_how_to_raise_the_limit(runtime):
    with LiveServer(build_app(runtime=runtime, settings=Settings(max_sessions=2))) as server:

        async def run() -> dict:
            held = [await connect(ws_url(server)) for _ in range(2)]
            try:
                for ws in held:
                    await call(ws, "reset", {"task_id": "easy"})
                async with connect(ws_url(server)) as third:
                    return json.loads(await third.recv())  # sent as the connection opens, then it closes
            finally:
                for ws in held:
                    await ws.close()

        reply = asyncio.run(run())
    assert reply["type"] == "error" and reply["data"]["code"] == "CAPACITY_REACHED"
    retry = reply["data"]["retry_after_s"]  # when the first held session would be closed for idleness
    assert 590 < retry <= 600
    assert reply["data"]["message"] == (
        f"Server at capacity: 2/2 sessions active. Cannot accept new connections. Retry in {retry} s: a session idle that long "
        "is closed by then unless it is used (ENV_SESSION_TIMEOUT_S=600, ENV_FIRST_RESET_TIMEOUT_S=60 before a /ws connection's "
        "first reset). Each WebSocket connection (/ws, /mcp) and each MCP session made over POST /mcp holds one session until "
        "it closes or idles out: close sessions you no longer use, or start the server with a higher ENV_MAX_SESSIONS (now 2)."
    )


def test_a_grpo_group_gets_one_first_observation_over_every_protocol(live_server):
    """Issue 50, item 4: the same task and seed in sessions at once over HTTP, /ws, MCP (POST /mcp) and ORS: one first
    observation (its episode id aside; ORS, which plays seed 0 unless the spec names one, is given the seed)."""
    import httpx

    task, seed = "proc-medium-train-7", 3

    def same(obs: dict) -> dict:
        return {k: v for k, v in obs.items() if k not in ("episode_id", "reward", "done")}

    async def over_ws() -> dict:
        async with connect(ws_url(live_server), max_size=None) as ws:
            return (await call(ws, "reset", {"task_id": task, "seed": seed}))["data"]["observation"]

    async def ws_group() -> list[dict]:
        return await asyncio.gather(*(over_ws() for _ in range(3)))

    with httpx.Client(base_url=live_server.url, timeout=60) as http:
        views = {"ws": asyncio.run(ws_group())}
        views["http"] = [http.post("/reset", json={"task_id": task, "seed": seed}).json()["observation"] for _ in range(3)]
        rpc = {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create", "params": {"task_id": task, "seed": seed}}
        made = [http.post("/mcp", json=rpc).json()["result"] for _ in range(3)]
        views["mcp"] = [m["observation"] for m in made]
        views["ors"] = []
        for n in range(3):
            sid = f"grpo-{n}"
            views["ors"].append(http.post("/create", json={"task_spec": {"id": task, "seed": seed}}, headers={"X-Session-ID": sid}).json()["observation"])
            http.post("/delete", headers={"X-Session-ID": sid})
        for m in made:
            http.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "openenv/session/close", "params": {"session_id": m["session_id"]}})
    first = same(views["http"][0])
    assert first["task_id"] == task and first["task_description"]
    for protocol, observations in views.items():
        for obs in observations:
            assert same(obs) == first, protocol
    assert len({obs["episode_id"] for observations in views.values() for obs in observations}) == 12
