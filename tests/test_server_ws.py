"""WebSocket sessions with OpenEnv's own clients, capacity, `openenv validate`, and a free event loop."""

import asyncio
import json
import subprocess
import sys
import threading
import time

import pytest
from openenv.core.generic_client import GenericEnvClient
from websockets.asyncio.client import connect

from env.client import DebugEnvClient
from env.config import Settings
from env.models import DebugAction
from env.runtime import Runtime
from env.server.app import build_app
from tests.conftest import LiveServer
from tests.helpers import GOLD, GOOD_HYPOTHESIS, submit


def test_generic_env_client_plays_a_full_episode_over_ws(live_server):
    with GenericEnvClient(base_url=live_server.url) as client:
        first = client.reset(task_id="easy", seed=5)
        assert first.observation["tests_passed"] == 6 and first.reward == 0.0 and first.done is False
        query = client.step({"action_type": "query_context", "query_type": "test_details", "query_target": "test_finds_last_element"})
        assert query.reward == 0.0 and "last run: FAILED" in query.observation["query_result"]
        final = client.step(submit(GOLD["easy"], GOOD_HYPOTHESIS["easy"]))
        assert final.done is True and final.reward == 0.55
        assert final.observation["grader_score"] == 0.96  # queries are steps, not attempts
        state = client.state()
        assert state["step_count"] == 2 and state["solved"] is True


def test_typed_client_plays_an_episode_and_reports_agent_mistakes(live_server):
    with DebugEnvClient(base_url=live_server.url) as client:
        result = client.reset(task_id="hard", seed=2)
        assert result.observation.tests_passed == 8
        bad = client.step(DebugAction(action_type="submit_fix", fixed_code=GOLD["hard"]))
        assert bad.reward == -0.1 and bad.observation.breakdown["missing_hypothesis"] == -0.1
        good = client.step(DebugAction(action_type="submit_fix", fixed_code=GOLD["hard"], hypothesis=GOOD_HYPOTHESIS["hard"]))
        assert good.done and good.reward == 0.5 and good.observation.grader_score == 1.0
        assert client.state().attempts_used == 1


def test_a_ws_episode_is_not_the_latest_http_episode(live_server):
    import httpx

    http_episode = httpx.post(f"{live_server.url}/reset", json={"task_id": "medium"}).json()["observation"]["episode_id"]
    with GenericEnvClient(base_url=live_server.url) as client:
        client.reset(task_id="easy")
        step = httpx.post(f"{live_server.url}/step", json={"action": {"action_type": "give_up"}, "episode_id": http_episode}).json()
        assert step["observation"]["episode_id"] == http_episode


def test_64_concurrent_ws_sessions_stay_isolated(live_server):
    async def session(i: int) -> tuple:
        task_id = ("easy", "medium", "hard")[i % 3]
        async with connect(live_server.url.replace("http", "ws") + "/ws", max_size=None) as ws:
            await ws.send(json.dumps({"type": "reset", "data": {"task_id": task_id, "seed": i}}))
            reset = json.loads(await ws.recv())["data"]
            await ws.send(json.dumps({"type": "step", "data": {"action_type": "query_context", "query_type": "function_signature"}}))
            json.loads(await ws.recv())
            action = submit(GOLD[task_id], GOOD_HYPOTHESIS[task_id]) if i % 2 else {"action_type": "give_up"}
            await ws.send(json.dumps({"type": "step", "data": action}))
            final = json.loads(await ws.recv())["data"]
            await ws.send(json.dumps({"type": "state"}))
            state = json.loads(await ws.recv())["data"]
            return (
                reset["observation"]["task_id"] == task_id,
                final["observation"]["episode_id"] == reset["observation"]["episode_id"] == state["episode_id"],
                state["step_count"],
                final["done"],
                state["solved"] == bool(i % 2),
            )

    async def main() -> list:
        return await asyncio.gather(*(session(i) for i in range(64)))

    assert asyncio.run(main()) == [(True, True, 2, True, True)] * 64


def test_capacity_is_configurable_and_reported(runtime: Runtime):
    async def main(url: str) -> tuple:
        async with connect(url) as first, connect(url) as second:
            await first.send(json.dumps({"type": "reset", "data": {}}))
            await first.recv()
            return json.loads(await second.recv())

    with LiveServer(build_app(runtime=runtime, settings=Settings(max_sessions=1))) as server:
        reply = asyncio.run(main(server.url.replace("http", "ws") + "/ws"))
    assert reply["type"] == "error" and reply["data"]["code"] == "CAPACITY_REACHED"


def test_openenv_validate_url_passes(live_server):
    done = subprocess.run(
        [sys.executable, "-m", "openenv.cli", "validate", "--url", live_server.url],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().endswith("Verdict: PASS") and "FAIL" not in done.stdout


def test_health_answers_while_submissions_run(live_server):
    import httpx

    slow = GOLD["easy"].replace("    left, right = 0, len(arr) - 1", "    import math\n    for _ in range(4 * 10**6):\n        math.sqrt(2)\n    left, right = 0, len(arr) - 1")
    finished = []

    def submit_slow(i: int) -> None:
        episode = httpx.post(f"{live_server.url}/reset", json={"task_id": "easy", "seed": i}).json()["observation"]["episode_id"]
        httpx.post(f"{live_server.url}/step", json={"action": submit(slow, "h"), "episode_id": episode}, timeout=60)
        finished.append(time.monotonic())

    workers = [threading.Thread(target=submit_slow, args=(i,)) for i in range(4)]
    for w in workers:
        w.start()
    time.sleep(0.3)
    answered = []
    while any(w.is_alive() for w in workers) and len(answered) < 5:
        assert httpx.get(f"{live_server.url}/health").json()["status"] == "healthy"
        answered.append(time.monotonic())
    for w in workers:
        w.join()
    # /health answered while the first submission was still running.
    assert answered and answered[0] < min(finished)


@pytest.mark.parametrize(
    "data, error",
    [
        ({"task_id": 5}, "reset: 'task_id' must be a string, not int"),
        ({"task_id": "easy", "seed": "abc"}, "reset: 'seed' must be an integer, not str"),
        ({"task_id": "easy", "seed": True}, "reset: 'seed' must be an integer, not bool"),
        ({"task_id": "easy", "seed": 1.5}, "reset: 'seed' must be an integer, not float"),
        # a profile that is not a string was an unhashable-type error, sent raw as EXECUTION_ERROR
        ({"task_id": "easy", "profile": ["pdb"]}, "reset: 'profile' must be a string naming a profile, not list; available: "),
        ({"task_id": "easy", "profile": {"a": 1}}, "reset: 'profile' must be a string naming a profile, not dict; available: "),
    ],
)
def test_a_malformed_ws_reset_is_an_observation_with_the_error(live_server, data, error):
    async def main() -> dict:
        async with connect(live_server.url.replace("http", "ws") + "/ws") as ws:
            await ws.send(json.dumps({"type": "reset", "data": data}))
            return json.loads(await ws.recv())

    reply = asyncio.run(main())
    assert reply["type"] == "observation"
    message = reply["data"]["observation"]["error"]
    assert reply["data"]["done"] is True
    assert message == error or (error.endswith("available: ") and message.startswith(error) and "pdb" in message)
