"""Two replicas behind HAProxy on loopback, with the deployment's own configuration (deploy/haproxy/haproxy.cfg):
sessions of every family through the balancer, none crossed; then one replica is killed mid-run and nobody is lost
silently: its sessions get a clear error, the others finish, new sessions land on the survivor, /metrics shows it."""

from __future__ import annotations

import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import TypeVar

import httpx
import pytest
from openenv.core.client_types import StepResult
from openenv.core.generic_client import GenericEnvClient
from websockets.exceptions import ConnectionClosed

from env.authoring.oracle import oracle_actions
from env.families.catalog import TaskCatalog
from env.server.environment import NO_EPISODE_ON_CONNECTION
from env.server.local import start_balancer, start_local_server

T = TypeVar("T")
CATALOG = TaskCatalog.builtin()
SECRET = {"ENV_SECRET": "the failover test's shared secret"}
MIXED = ["easy", "medium", "proc-easy-test-3", "repo-slice-window"]


class Cluster:
    def __init__(self, store: str = "") -> None:
        self.replicas: dict[str, tuple[subprocess.Popen[bytes], str]] = {}
        for name in ("r1", "r2"):
            self.replicas[name] = start_local_server(env={"ENV_REPLICA": name, "ENV_DRAIN_SECONDS": "0", "ENV_STORE": store, **SECRET})
        self.balancer, self.url = start_balancer({name: url.removeprefix("http://") for name, (_, url) in self.replicas.items()})

    def metrics(self, name: str) -> str:
        return httpx.get(f"{self.replicas[name][1]}/metrics", timeout=10).text

    def kill(self, name: str) -> None:
        proc = self.replicas[name][0]
        proc.kill()  # SIGKILL: no drain, no goodbye
        proc.wait(timeout=10)

    def close(self) -> None:
        self.balancer.terminate()
        self.balancer.wait(timeout=10)
        for proc, _ in self.replicas.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=30)


@pytest.fixture()
def cluster(isolation) -> Iterator[Cluster]:
    try:
        made = Cluster()
    except RuntimeError as exc:
        pytest.fail(f"the loopback cluster did not start (make test installs haproxy): {exc}")
    try:
        yield made
    finally:
        made.close()


def _metric(text: str, name: str, **labels: str) -> float:
    total = 0.0
    for line in text.splitlines():
        found = re.match(r"^(\w+)(?:\{([^}]*)\})? (\S+)$", line)
        if found and found.group(1) == name and all(f'{k}="{v}"' in (found.group(2) or "") for k, v in labels.items()):
            total += float(found.group(3))
    return total


def _ws_episode(url: str, index: int) -> tuple[str, str, float]:
    task = CATALOG.get(MIXED[index % len(MIXED)])
    with GenericEnvClient(base_url=url) as client:
        first = client.reset(task_id=task.id, seed=index)
        episode, replica = first.observation["episode_id"], first.observation["info"]["replica"]
        assert episode.startswith(replica + ".") and first.observation["task_id"] == task.id
        final = None
        for action in oracle_actions(task):
            final = client.step(action)
            assert final.observation["episode_id"] == episode and final.observation["task_id"] == task.id  # never crossed
        assert final is not None and final.done
        return replica, task.id, final.observation["grader_score"] or 0.0


def _http_episode(url: str, index: int) -> tuple[str, str, float]:
    task = CATALOG.get(MIXED[index % len(MIXED)])
    with httpx.Client(base_url=url, timeout=120) as client:
        first = client.post("/reset", json={"task_id": task.id, "seed": 100 + index}).json()["observation"]
        episode = first["episode_id"]
        body: dict = {}
        for action in oracle_actions(task):
            body = client.post("/step", json={"action": action, "episode_id": episode}).json()
            assert body["observation"]["episode_id"] == episode and body["observation"]["task_id"] == task.id  # never crossed
        assert body["done"]
        return episode.split(".")[0], task.id, body["observation"]["grader_score"] or 0.0


def _step_reconnecting(client: GenericEnvClient, action: dict) -> StepResult[dict]:
    """A step of a client whose replica may just have died. OpenEnv's client reconnects when it has seen its connection
    close; a step sent before it saw that (the balancer's close still on its way) raises, and the next step reconnects."""
    try:
        return client.step(action)
    except ConnectionClosed:
        return client.step(action)


def test_sessions_of_every_family_go_through_the_balancer_and_none_is_lost_when_a_replica_dies(cluster: Cluster):
    with ThreadPoolExecutor(8) as pool:
        ws = list(pool.map(lambda i: _ws_episode(cluster.url, i), range(32)))
        http = list(pool.map(lambda i: _http_episode(cluster.url, i), range(8)))
    assert all(score >= 0.9 for _, _, score in ws + http)  # every one solved by the oracle, on its own episode
    assert {replica for replica, _, _ in ws} == {"r1", "r2"}  # both replicas took sessions
    steps = {name: _metric(cluster.metrics(name), "adbg_steps_total") for name in ("r1", "r2")}
    assert sum(steps.values()) == sum(len(oracle_actions(CATALOG.get(task))) for _, task, _ in ws + http)

    # Mid-run: sessions open on both replicas, then r1 is killed.
    clients = [GenericEnvClient(base_url=cluster.url).__enter__() for _ in range(8)]
    placed = [c.reset(task_id="medium", seed=i).observation["info"]["replica"] for i, c in enumerate(clients)]
    assert set(placed) == {"r1", "r2"}
    http_open = []
    with httpx.Client(base_url=cluster.url, timeout=60) as client:
        for i in range(6):
            http_open.append(client.post("/reset", json={"task_id": "easy", "seed": 200 + i}).json()["observation"]["episode_id"])
    assert {e.split(".")[0] for e in http_open} == {"r1", "r2"}
    cluster.kill("r1")
    for client, replica in zip(clients, placed, strict=True):
        action = oracle_actions(CATALOG.get("medium"))[-1]
        if replica == "r1":  # OpenEnv's client reconnects by itself, through the balancer, to r2: a session with no episode
            lost = _step_reconnecting(client, action)
            assert lost.done and lost.observation["error"] == NO_EPISODE_ON_CONNECTION
        else:
            assert client.step(action).done  # the survivor's sessions finish
    for client in clients:
        try:
            client.__exit__(None, None, None)
        except Exception:  # noqa: BLE001 (closing a connection that died with its replica)
            pass
    gone = 0
    with httpx.Client(base_url=cluster.url, timeout=60) as client:
        for episode in http_open:
            body = client.post("/step", json={"action": oracle_actions(CATALOG.get("easy"))[-1], "episode_id": episode})
            assert body.status_code == 200
            obs = body.json()["observation"]
            if episode.startswith("r1."):
                gone += 1
                assert obs["error"] == (f"episode {episode!r} was started on replica 'r1', which is gone (stopped or killed): its episodes are "
                                        "lost; this is replica 'r2'; call POST /reset to start a new episode")  # fmt: skip
            else:
                assert obs["error"] is None and body.json()["done"] and obs["episode_id"] == episode
        after = [client.post("/reset", json={"task_id": "easy", "seed": 300 + i}).json()["observation"]["episode_id"] for i in range(4)]
    assert gone >= 1 and all(e.startswith("r2.") for e in after)  # new sessions land on the survivor
    assert _ws_episode(cluster.url, 1)[0] == "r2"
    text = cluster.metrics("r2")
    assert _metric(text, "adbg_refusals_total", reason="unknown_episode") == gone
    assert _metric(text, "adbg_active_sessions", transport="http") == 4  # the four just started


# -- with an episode store (issue 50, item 3): nobody is lost at all ----------------------------------------------------

NOT_A_TOOL = {"action_type": "no_such_tool"}  # a step of every family (a mistake, counted): state the rebuild must replay


def _actions(task_id: str) -> list[dict]:
    return [NOT_A_TOOL, *oracle_actions(CATALOG.get(task_id))]


def _start_http(url: str, index: int) -> tuple[str, str, int]:
    task, seed = MIXED[index % len(MIXED)], 400 + index
    with httpx.Client(base_url=url, timeout=120) as client:
        episode = client.post("/reset", json={"task_id": task, "seed": seed}).json()["observation"]["episode_id"]
        body = client.post("/step", json={"action": NOT_A_TOOL, "episode_id": episode}).json()
        assert body["observation"]["episode_id"] == episode and body["observation"]["step_number"] == 1
    return episode, task, seed


def _finish_http(url: str, episode: str, task: str) -> float:
    with httpx.Client(base_url=url, timeout=120) as client:
        body: dict = {}
        for action in _actions(task)[1:]:
            body = client.post("/step", json={"action": action, "episode_id": episode}).json()
            assert body["observation"]["episode_id"] == episode and body["observation"]["task_id"] == task, body  # never crossed
        assert body["done"]
        return body["observation"]["grader_score"]


def _ws_until_killed(url: str, index: int, killed: threading.Event, arrived: threading.Event) -> tuple[str, str, float]:
    """One WebSocket episode: a step, then (after the kill) the rest; a client whose replica died reconnects by itself
    to the survivor, is told its connection has no episode, and resumes it by name."""
    task, seed = MIXED[index % len(MIXED)], 500 + index
    with GenericEnvClient(base_url=url) as client:
        episode = client.reset(task_id=task, seed=seed).observation["episode_id"]
        assert client.step(NOT_A_TOOL).observation["step_number"] == 1
        arrived.set()
        killed.wait(timeout=900)
        final = None
        for action in _actions(task)[1:]:
            final = _step_reconnecting(client, action)
            if final.observation.get("error") == NO_EPISODE_ON_CONNECTION:
                resumed = client.reset(episode_id=episode, resume=True).observation
                assert (resumed["episode_id"], resumed["step_number"], resumed["info"]["resumed"]) == (episode, 1, True)
                final = client.step(action)
            assert final.observation["episode_id"] == episode and final.observation["task_id"] == task  # never crossed
        assert final is not None and final.done
        return episode, task, final.observation["grader_score"]


def _grade_alone(url: str, task: str, seed: int) -> float:
    with httpx.Client(base_url=url, timeout=120) as client:
        episode = client.post("/reset", json={"task_id": task, "seed": seed}).json()["observation"]["episode_id"]
        body: dict = {}
        for action in _actions(task):
            body = client.post("/step", json={"action": action, "episode_id": episode}).json()
        return body["observation"]["grader_score"]


def test_with_a_store_a_killed_replica_loses_no_episode(isolation, redis_url):
    try:
        cluster = Cluster(store=redis_url)
    except RuntimeError as exc:
        pytest.fail(f"the loopback cluster did not start (make test installs haproxy and redis-server): {exc}")
    try:
        killed, arrived = threading.Event(), [threading.Event() for _ in range(16)]
        with ThreadPoolExecutor(20) as pool:
            try:
                ws = [pool.submit(_ws_until_killed, cluster.url, i, killed, arrived[i]) for i in range(16)]
                http = list(pool.map(lambda i: _start_http(cluster.url, i), range(16)))
                _all_arrived(arrived, ws)  # every episode has taken a step on its replica
                assert {e.split(".")[0] for e, _, _ in http} == {"r1", "r2"}
                cluster.kill("r1")
            finally:
                killed.set()  # on a failure too: the pool's threads must not wait out their timeout
            http_grades = list(pool.map(lambda item: _finish_http(cluster.url, item[0], item[1]), http))
            ws_results = [f.result(timeout=300) for f in ws]
        assert {e.split(".")[0] for e, _, _ in ws_results} == {"r1", "r2"}
        # the grade each would have had without the kill: the same task, seed and actions, played on the survivor alone
        for (episode, task, seed), grade in zip(http, http_grades, strict=True):
            assert grade == _grade_alone(cluster.url, task, seed), episode
        for i, (episode, task, grade) in enumerate(ws_results):
            assert grade == _grade_alone(cluster.url, task, 500 + i), episode
        assert len({e for e, _, _ in http} | {e for e, _, _ in ws_results}) == 32
        text = cluster.metrics("r2")
        assert _metric(text, "adbg_refusals_total", reason="unknown_episode") == 0  # every r1 episode was taken over
    finally:
        cluster.close()


def test_ors_sessions_through_the_balancer_reach_their_own_replica(cluster: Cluster):
    """An ORS session's id carries its replica's name, and the balancer routes X-Session-ID on it as on an episode id."""
    from ors.client import ORS

    from env.server.environment import ENV_NAME

    def play(i: int) -> tuple[str, float, bool]:
        with ORS(base_url=cluster.url) as client, client.environment(ENV_NAME).session(split="test", index=i % 2) as session:
            assert session.get_prompt()[0].text.startswith("Task: ")
            for _ in range(3):  # several requests, each routed to the replica that holds the session
                session.list_tools()
            out = session.call_tool("give_up", {"final_diagnosis": "none"})
            return str(session.sid).split(".")[0], out.reward, out.finished

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(play, range(16)))
    assert {r[0] for r in results} == {"r1", "r2"} and all(r[1:] == (0.0, True) for r in results)


def test_with_a_store_ors_sessions_outlive_their_replica(isolation, redis_url):
    """ORS sessions open on both replicas; r1 is killed between two calls; each session's next call, sent through the
    balancer to r2, finds its episode there (taken over by its session id) and finishes with the grade it would have had."""
    from ors.client import ORS

    from env.server.environment import ENV_NAME

    try:
        cluster = Cluster(store=redis_url)
    except RuntimeError as exc:
        pytest.fail(f"the loopback cluster did not start (make test installs haproxy and redis-server): {exc}")
    killed, arrived = threading.Event(), [threading.Event() for _ in range(8)]

    def play(i: int) -> tuple[str, float, int]:
        task = ("easy", "medium")[i % 2]
        fix = oracle_actions(CATALOG.get(task))[-1]
        with ORS(base_url=cluster.url) as client, client.environment(ENV_NAME).session(task=_ors_task(task, i)) as session:
            try:
                session.call_tool("no_such_tool", {})
            except Exception:  # noqa: BLE001 (ok: false, a counted mistake: state the takeover must replay)
                pass
            arrived[i].set()
            killed.wait(timeout=900)
            out = session.call_tool(fix["action_type"], {k: v for k, v in fix.items() if k != "action_type"})
            return str(session.sid).split(".")[0], out.metadata["grade"], out.metadata["step_number"]

    try:
        with ThreadPoolExecutor(8) as pool:
            futures = [pool.submit(play, i) for i in range(8)]
            try:
                _all_arrived(arrived, futures)
                cluster.kill("r1")
            finally:
                killed.set()  # on a failure too: the pool's threads must not wait out their timeout
            results = [f.result(timeout=300) for f in futures]
        assert {r[0] for r in results} == {"r1", "r2"}
        for i, (_, grade, steps) in enumerate(results):
            task = ("easy", "medium")[i % 2]
            assert (grade, steps) == (_grade_alone(cluster.url, task, 600 + i), 2), (i, task)
    finally:
        cluster.close()


def _all_arrived(arrived: list[threading.Event], futures: list[Future[T]]) -> None:
    """Wait until every episode has taken its first step. One that failed before then never will: its own error is
    raised at once (a barrier's timeout hid it behind BrokenBarrierError), and a slow machine only makes the wait longer."""
    deadline = time.monotonic() + 600
    while not all(e.is_set() for e in arrived):
        done, _ = wait(futures, timeout=0.2, return_when=FIRST_EXCEPTION)  # an episode that failed ends this wait at once
        for f in done:
            f.result()  # raises the episode's own error
        assert time.monotonic() < deadline, f"{sum(e.is_set() for e in arrived)} of {len(arrived)} episodes took a step in 600 s"


def _ors_task(task_id: str, i: int):  # noqa: ANN202
    from ors.client import Task

    from env.server.environment import ENV_NAME

    return Task(ENV_NAME, {"id": task_id, "seed": 600 + i})
