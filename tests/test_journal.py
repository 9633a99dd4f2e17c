"""Episodes outlive their replica (issue 50, item 3): with ENV_STORE a replica records every episode's reset and
actions in Redis (Debian's redis-server, started here on loopback; `make redis` installs it), and another replica
sharing the secret rebuilds an episode it does not hold by replaying them, answering as the lost one would have."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from websockets.asyncio.client import connect

from env.config import Settings
from env.server.app import build_app
from tests.conftest import LiveServer, refusing_port
from tests.helpers import GOLD, GOOD_HYPOTHESIS

QUERY = {"action_type": "query_context", "query_type": "test_details", "query_target": "test_finds_middle_element"}
FIX = {"action_type": "submit_fix", "fixed_code": GOLD["easy"], "hypothesis": GOOD_HYPOTHESIS["easy"]}
WRONG = {"action_type": "submit_fix", "fixed_code": GOLD["easy"].replace("return mid", "return mid + 0 * 1", 1).replace("<=", "<", 1), "hypothesis": "h"}


def replica(runtime, name: str, store: str) -> LiveServer:
    return LiveServer(build_app(runtime=runtime, settings=Settings(replica=name, store=store)))


def step(url: str, episode: str, action: dict) -> dict:
    return httpx.post(f"{url}/step", json={"action": action, "episode_id": episode}, timeout=60).json()


def test_a_replica_takes_over_an_http_episode_and_answers_as_the_lost_one_would(runtime, redis_url):
    with replica(runtime, "r1", redis_url) as r1, replica(runtime, "r2", redis_url) as r2:
        # uninterrupted, on r1 alone
        alone = httpx.post(f"{r1.url}/reset", json={"task_id": "easy", "seed": 5}).json()["observation"]["episode_id"]
        expected = [step(r1.url, alone, a) for a in (QUERY, WRONG, FIX)]
        # the same steps, r1 "lost" after two: r2 is asked for the third
        episode = httpx.post(f"{r1.url}/reset", json={"task_id": "easy", "seed": 5}).json()["observation"]["episode_id"]
        assert episode.startswith("r1.")
        first, second = step(r1.url, episode, QUERY), step(r1.url, episode, WRONG)
        third = step(r2.url, episode, FIX)
    assert third["observation"]["info"].pop("resumed") is True  # the first answer after the take-over says so
    for got, want in zip((first, second, third), expected, strict=True):
        for answer in (got, want):  # the episode's id and each run's wall time are the only things that may differ
            answer["observation"].pop("episode_id")
            for attempt in answer["observation"]["previous_attempts"]:
                attempt.pop("execution_time_ms")
        differing = {k: (got["observation"].get(k), v) for k, v in want["observation"].items() if got["observation"].get(k) != v}
        assert differing == {} and got["reward"] == want["reward"] and got["done"] == want["done"]
    assert (third["done"], third["observation"]["grader_score"], third["observation"]["step_number"]) == (True, 0.845, 3)


def test_a_websocket_client_resumes_its_episode_on_another_replica(runtime, redis_url):
    async def play(r1: str, r2: str) -> tuple[dict, dict]:
        async with connect(r1.replace("http", "ws") + "/ws", max_size=None) as ws:
            await ws.send(json.dumps({"type": "reset", "data": {"task_id": "medium", "seed": 2}}))
            episode = json.loads(await ws.recv())["data"]["observation"]["episode_id"]
            await ws.send(json.dumps({"type": "step", "data": QUERY | {"query_type": "function_signature", "query_target": "hash_password"}}))
            await ws.recv()
        async with connect(r2.replace("http", "ws") + "/ws", max_size=None) as ws:  # the client reconnects naming its episode
            await ws.send(json.dumps({"type": "reset", "data": {"episode_id": episode, "resume": True}}))
            resumed = json.loads(await ws.recv())["data"]
            await ws.send(json.dumps({"type": "step", "data": {"action_type": "submit_fix", "fixed_code": GOLD["medium"], "hypothesis": GOOD_HYPOTHESIS["medium"]}}))
            return resumed, json.loads(await ws.recv())["data"]

    with replica(runtime, "r1", redis_url) as r1, replica(runtime, "r2", redis_url) as r2:
        resumed, finished = asyncio.run(play(r1.url, r2.url))
    obs = resumed["observation"]
    assert (obs["step_number"], obs["info"]["resumed"], obs["info"]["replayed_actions"], obs["episode_id"][:3]) == (1, True, 1, "r1.")
    assert finished["done"] and finished["observation"]["grader_score"] > 0.9 and finished["observation"]["step_number"] == 2


def test_another_secret_cannot_take_an_episode_over(runtime, redis_url, isolation, catalog):
    from env.runtime import Runtime
    from env.sandbox.limits import Limits
    from env.sandbox.runner import Sandbox
    from env.secret import ServerSecret

    other = Runtime(catalog, Sandbox(Limits(), isolation), workers=4, secret=ServerSecret("another replica's secret"))
    try:
        with replica(runtime, "r1", redis_url) as r1, replica(other, "r2", redis_url) as r2:
            episode = httpx.post(f"{r1.url}/reset", json={"task_id": "easy", "seed": 1}).json()["observation"]["episode_id"]
            refused = step(r2.url, episode, QUERY)
        assert refused["observation"]["error"].startswith(f"episode {episode!r} was recorded by a replica with another secret")
    finally:
        other.sandbox.close()


def test_a_store_that_is_down_fails_closed_with_a_clear_message(runtime):
    with refusing_port() as port, replica(runtime, "r1", down := f"redis://127.0.0.1:{port}/0") as r1:
        reset = httpx.post(f"{r1.url}/reset", json={"task_id": "easy", "seed": 1}).json()
        assert reset["done"] is True
        assert reset["observation"]["error"].startswith(f"the episode store (ENV_STORE={down}) cannot be reached (ConnectionError")
        assert reset["observation"]["error"].endswith("this replica starts and steps no episode it could not record, so that another replica could take it over: try again, or fix the store")
        assert 'adbg_refusals_total{reason="store_down"} 1.0' in httpx.get(f"{r1.url}/metrics").text


def test_a_store_that_is_not_redis_is_refused_at_start():
    with pytest.raises(ValueError, match="ENV_STORE='postgres://x': the episode store must be a Redis URL"):
        build_app(settings=Settings(store="postgres://x"))


def test_an_ors_session_is_taken_over_by_another_replica(runtime, redis_url):
    """An ORS session's id names its episode in the store: a replica that does not hold it takes it over, with the
    session's own prompt; a deleted session is not brought back."""
    with replica(runtime, "r1", redis_url) as r1, replica(runtime, "r2", redis_url) as r2:
        h = {"X-Session-ID": "r1.ors-takeover"}
        made = httpx.post(f"{r1.url}/create", json={"task_spec": {"id": "easy", "seed": 5}}, headers=h).json()
        prompt = httpx.get(f"{r1.url}/agentdebugger-env/prompt", headers=h).json()
        with httpx.stream("POST", f"{r1.url}/call", json={"name": "query_context", "input": {k: v for k, v in QUERY.items() if k != "action_type"}}, headers=h) as s:
            assert [line for line in s.iter_lines() if line.startswith("event: ")][-1] == "event: end"
        assert httpx.get(f"{r2.url}/prompt", headers=h).json() == prompt  # r2 takes it over: the same prompt
        with httpx.stream("POST", f"{r2.url}/call", json={"name": "submit_fix", "input": {k: v for k, v in FIX.items() if k != "action_type"}}, headers=h) as s:
            data = [line.removeprefix("data: ") for line in s.iter_lines() if line.startswith("data: ")]
        out = json.loads("".join(data[1:]))["output"]  # data[0]: the call's task_id
        assert (out["finished"], out["metadata"]["step_number"], out["metadata"]["episode_id"]) == (True, 2, made["observation"]["episode_id"])
        assert out["metadata"]["grade"] == 0.96
        httpx.post(f"{r2.url}/delete", headers=h)
        httpx.post(f"{r1.url}/delete", headers=h)  # r1's own copy, which its client would have deleted there
        gone = httpx.post(f"{r2.url}/ping", headers=h)
        assert (gone.status_code, gone.json()["detail"]) == (404, "session 'r1.ors-takeover' was deleted; create a new session")
