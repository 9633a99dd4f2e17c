"""One server as a replica behind a balancer (issue 21): episode ids carry the replica, an episode of a replica that
is gone gets a clear error naming it, SIGTERM drains, /metrics tells what the replica does, and (task_id, seed) is
the same episode on every replica sharing a secret."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from openenv.core.generic_client import GenericEnvClient

from env.config import Settings
from env.runtime import Runtime
from env.server.app import build_app
from tests.conftest import TEST_SECRET, free_port
from tests.helpers import BUGGY, GOLD, GOOD_HYPOTHESIS, submit

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def r1(runtime: Runtime) -> Iterator[TestClient]:
    with TestClient(build_app(runtime=runtime, settings=Settings(replica="r1", drain_seconds=30))) as client:
        yield client


def _metric(text: str, name: str, **labels: str) -> float:
    wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in text.splitlines():
        found = re.match(r"^(\w+)(?:\{([^}]*)\})? (\S+)$", line)
        if found and found.group(1) == name and ",".join(sorted((found.group(2) or "").split(","))) == wanted:
            return float(found.group(3))
    raise AssertionError(f"no {name}{{{wanted}}} in /metrics")


def test_http_episode_ids_carry_the_replica_and_find_their_episode(r1: TestClient):
    obs = r1.post("/reset", json={"task_id": "easy", "seed": 1}).json()["observation"]
    episode = obs["episode_id"]
    assert re.fullmatch(r"r1\.[0-9a-f-]{36}", episode) and obs["info"]["replica"] == "r1"
    assert r1.cookies["adbg_episode"] == episode
    chosen = r1.post("/reset", json={"task_id": "easy", "episode_id": "mine"}).json()["observation"]["episode_id"]
    assert chosen == "r1.mine"  # a client's own id is tagged too, or the balancer could not route it
    step = r1.post("/step", json={"action": {"action_type": "give_up"}, "episode_id": episode}).json()
    assert (step["observation"]["episode_id"], step["done"], step["observation"]["error"]) == (episode, True, None)
    assert r1.get("/state", params={"episode_id": episode}).json()["episode_id"] == episode


def test_an_episode_of_a_replica_that_is_gone_gets_an_error_naming_it(r1: TestClient):
    r1.post("/reset", json={"task_id": "easy", "seed": 1})  # an episode here: never served in its place
    lost = ("episode 'r2.5b0e' was started on replica 'r2', which is gone (stopped or killed): its episodes are lost; "
            "this is replica 'r1'; call POST /reset to start a new episode")  # fmt: skip
    r = r1.post("/step", json={"action": {"action_type": "give_up"}, "episode_id": "r2.5b0e"})
    assert r.status_code == 200 and r.json()["observation"]["error"] == lost and r.json()["observation"]["episode_id"] == ""
    r = r1.get("/state", params={"episode_id": "r2.5b0e"})
    assert (r.status_code, r.json()) == (404, {"detail": lost})
    r1.cookies.clear()
    r1.cookies.set("adbg_episode", "r2.5b0e")
    assert r1.post("/step", json={"action": {"action_type": "give_up"}}).json()["observation"]["error"] == lost
    r1.cookies.clear()
    unknown = r1.post("/step", json={"action": {"action_type": "give_up"}, "episode_id": "r1.nope"}).json()["observation"]["error"]
    assert unknown == "unknown or expired episode_id 'r1.nope'; call POST /reset to start an episode"


def test_a_draining_replica_refuses_new_episodes_and_warns_open_ones(r1: TestClient):
    episode = r1.post("/reset", json={"task_id": "easy", "seed": 1}).json()["observation"]["episode_id"]
    with r1.websocket_connect("/ws") as ws:
        ws.send_json({"type": "reset", "data": {"task_id": "easy", "seed": 2}})
        assert ws.receive_json()["data"]["observation"]["error"] is None
        assert r1.get("/health").status_code == 200
        r1.app.state.replica.drain()
        health = r1.get("/health")
        assert health.status_code == 503 and health.json()["status"] == "draining" and health.json()["unfinished_episodes"] == 2
        ws.send_json({"type": "step", "data": {"action_type": "query_context", "query_type": "function_signature", "query_target": "binary_search"}})
        warned = ws.receive_json()["data"]["observation"]
        assert re.fullmatch(r"replica r1 is going away in (29|30) s: finish this episode before then \(it is lost after\), "
                            r"then reset through the balancer to continue on another replica", warned["info"]["replica_going_away"])  # fmt: skip
        ws.send_json({"type": "reset", "data": {"task_id": "easy", "seed": 3}})
        refused = ws.receive_json()["data"]["observation"]["error"]
    assert re.fullmatch(r"replica r1 is draining \(it stops in (29|30) s\): it starts no new episode; connect again through the "
                        r"balancer to start one on another replica", refused)  # fmt: skip
    assert r1.post("/reset", json={"task_id": "easy"}).json()["observation"]["error"].startswith("replica r1 is draining (it stops in ")
    done = r1.post("/step", json={"action": submit(GOLD["easy"], GOOD_HYPOTHESIS["easy"]), "episode_id": episode}).json()
    assert done["done"] and "replica_going_away" not in done["observation"]["info"]  # a finished episode needs no warning
    assert r1.get("/health").json()["unfinished_episodes"] == 0


def test_metrics_count_sessions_steps_submissions_refusals_and_sandbox_runs(r1: TestClient):
    before = r1.get("/metrics")
    assert before.status_code == 200 and before.headers["content-type"].startswith("text/plain")
    assert _metric(before.text, "adbg_draining") == 0.0
    assert _metric(before.text, "adbg_capacity_left", transport="http") == 1024.0
    first = r1.post("/reset", json={"task_id": "easy", "seed": 1}).json()["observation"]["episode_id"]
    r1.post("/reset", json={"task_id": "repo-mutable-default", "seed": 1})
    r1.post("/step", json={"action": {"action_type": "query_context", "query_type": "function_signature", "query_target": "binary_search"}, "episode_id": first})
    r1.post("/step", json={"action": submit(GOLD["easy"], GOOD_HYPOTHESIS["easy"]), "episode_id": first})
    r1.post("/step", json={"action": {"action_type": "give_up"}, "episode_id": "r2.gone"})
    text = r1.get("/metrics").text
    assert _metric(text, "adbg_steps_total", family="classic") == 2.0
    assert _metric(text, "adbg_submissions_total", family="classic") == 1.0
    assert _metric(text, "adbg_active_sessions", family="repo", transport="http") == 1.0  # the easy one is finished
    assert _metric(text, "adbg_capacity_left", transport="http") == 1022.0
    assert _metric(text, "adbg_refusals_total", reason="unknown_episode") == 1.0
    assert _metric(text, "adbg_sandbox_run_seconds_count") >= 1.0  # the submission ran in the sandbox
    r1.app.state.replica.drain()
    r1.post("/reset", json={"task_id": "easy"})
    text = r1.get("/metrics").text
    assert _metric(text, "adbg_draining") == 1.0 and _metric(text, "adbg_refusals_total", reason="draining") == 1.0
    assert 29.0 <= _metric(text, "adbg_drain_seconds_left") <= 30.0


def test_task_and_seed_give_the_same_episode_on_every_replica_sharing_the_secret(runtime: Runtime, isolation):
    other = Runtime(runtime.catalog, runtime.sandbox, workers=2, secret=TEST_SECRET)  # a second replica's runtime
    apps = [build_app(runtime=runtime, settings=Settings(replica="r1")), build_app(runtime=other, settings=Settings(replica="r2"))]
    seen, judged = [], []
    for app in apps:
        with TestClient(app) as client:
            obs = [client.post("/reset", json={"task_id": task, "seed": 7}).json()["observation"] for task in ("hard", "proc-hard-test-42", "repo-slice-window")]
            for o in obs:
                assert o["episode_id"].startswith(o["info"]["replica"] + ".")
                o.pop("episode_id")
                o["info"].pop("replica")
            seen.append(obs)
            # the hidden parameters too: the race task's stress schedule and its verdict on one wrong fix
            hard = client.post("/reset", json={"task_id": "hard", "seed": 7}).json()["observation"]["episode_id"]
            wrong = client.post("/step", json={"action": submit(BUGGY["hard"], "a guess"), "episode_id": hard}).json()["observation"]
            judged.append({k: wrong[k] for k in ("test_results", "tests_passed", "tests_total", "grader_score")})
    assert seen[0] == seen[1] and judged[0] == judged[1]


# -- draining a real server process -----------------------------------------------------------------------------


def _start(port: int, drain: float) -> subprocess.Popen[bytes]:
    env = {**os.environ, "HOST": "127.0.0.1", "PORT": str(port), "ENV_REPLICA": "r9", "ENV_DRAIN_SECONDS": str(drain), "ENV_SECRET": "replica test secret"}
    server = subprocess.Popen([sys.executable, "-m", "env.server"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            time.sleep(0.2)
    server.kill()
    raise AssertionError("the server did not start: " + (server.stderr.read().decode() if server.stderr else ""))


def test_sigterm_drains_open_sessions_until_the_deadline_then_stops(tmp_path: Path):
    port = free_port()
    server = _start(port, drain=4)
    try:
        with GenericEnvClient(base_url=f"http://127.0.0.1:{port}") as client:
            client.reset(task_id="easy", seed=1)
            server.send_signal(signal.SIGTERM)
            deadline = time.monotonic() + 5  # the signal is handled between two of the event loop's callbacks
            while httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code != 503:
                assert time.monotonic() < deadline, "/health still answers 200 five seconds after SIGTERM"
                time.sleep(0.05)
            warned = client.step({"action_type": "query_context", "query_type": "function_signature", "query_target": "binary_search"})
            assert "is going away in" in warned.observation["info"]["replica_going_away"]
            started = time.monotonic()
            assert server.wait(timeout=15) == 0  # stopped at the deadline, the session still open
            assert 1.5 < time.monotonic() - started < 8
            with pytest.raises(Exception) as lost:  # the connection is gone: the client says so at its next step
                client.step({"action_type": "give_up"})
            assert lost.value is not None
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


def test_sigterm_with_nothing_open_stops_at_once():
    port = free_port()
    server = _start(port, drain=30)
    try:
        started = time.monotonic()
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=10) == 0
        assert time.monotonic() - started < 3  # no unfinished episode: no reason to wait 30 s
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
