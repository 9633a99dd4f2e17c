"""Faults mid-episode: a killed sandbox child, a killed fork server, a vanished client.

None of them loses another episode, and a vanished client's session slot is freed.
"""

import asyncio
import json
import os
import threading
import time
from pathlib import Path

import httpx
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from env.config import Settings
from env.server.app import build_app
from tests.conftest import LiveServer
from tests.helpers import GOLD, GOOD_HYPOTHESIS, submit
from tests.test_redteam import sandbox_children

# About two seconds of work in the first call only (the easy task's policy allows no `time` import);
# every later call is fast, so the whole run stays well inside the time limit.
SLOW = "_slowed = []\n\n" + GOLD["easy"].replace(
    "    left, right = 0, len(arr) - 1",
    "    if not _slowed:\n        _slowed.append(1)\n        spin = 0\n        for i in range(2 * 10**7):\n            spin += i\n    left, right = 0, len(arr) - 1",
)


def start_slow_submission(url: str) -> tuple[str, threading.Thread, dict]:
    episode = httpx.post(f"{url}/reset", json={"task_id": "easy", "seed": 1}).json()["observation"]["episode_id"]
    out: dict = {}

    def run() -> None:
        out["body"] = httpx.post(f"{url}/step", json={"action": submit(SLOW, "h"), "episode_id": episode}, timeout=60).json()

    thread = threading.Thread(target=run)
    thread.start()
    return episode, thread, out


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return -1


def wait_for_children(count: int, runtime) -> list[int]:
    """This server's running sandbox children (forked by its own fork server: other processes on the host may run code too)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        zygote = runtime.sandbox.zygote.pid
        children = [pid for pid in sandbox_children() if _parent(pid) == zygote]
        if len(children) >= count:
            return children
        time.sleep(0.02)
    raise AssertionError("the sandbox child did not start")


def _cpu_ticks(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime
    except (OSError, ValueError, IndexError):
        return 0


def busy_child(runtime) -> int:
    """The child running the slow submission: the one computing. Idle children of the same fork server (made ready
    ahead, or left by another test of this session's runtime) never are."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        zygote = runtime.sandbox.zygote.pid
        busy = [pid for pid in sandbox_children() if _parent(pid) == zygote and _cpu_ticks(pid) >= 10]
        if busy:
            return busy[0]
        time.sleep(0.02)
    raise AssertionError("no sandbox child started computing")


def solve(url: str, task_id: str) -> dict:
    episode = httpx.post(f"{url}/reset", json={"task_id": task_id, "seed": 2}).json()["observation"]["episode_id"]
    return httpx.post(f"{url}/step", json={"action": submit(GOLD[task_id], GOOD_HYPOTHESIS[task_id]), "episode_id": episode}, timeout=60).json()


def test_killing_a_sandbox_child_ends_only_that_run(runtime):
    with LiveServer(build_app(runtime=runtime, settings=Settings())) as server:
        episode, thread, out = start_slow_submission(server.url)
        os.kill(busy_child(runtime), 9)
        other = solve(server.url, "medium")  # another episode, meanwhile
        thread.join()
        obs = out["body"]["observation"]
        assert "killed by SIGKILL" in obs["current_error_output"] and obs["tests_passed"] == 0
        assert other["done"] and other["observation"]["grader_score"] > 0.9
        # The damaged episode goes on.
        again = httpx.post(f"{server.url}/step", json={"action": submit(GOLD["easy"], GOOD_HYPOTHESIS["easy"]), "episode_id": episode}).json()
        assert again["done"] and again["observation"]["tests_passed"] == 8


def test_killing_the_fork_server_loses_no_episode(runtime):
    with LiveServer(build_app(runtime=runtime, settings=Settings())) as server:
        episode, thread, out = start_slow_submission(server.url)
        wait_for_children(1, runtime)
        zygote = runtime.sandbox.zygote.pid
        os.kill(zygote, 9)
        thread.join()
        # A run in a pooled child dies with its fork server (issue 33: nothing outlives the process that started it):
        # the machine's failure, not the agent's (issue 50), so the step is flagged and not counted; one already past
        # it (or on a fresh interpreter) finishes. Either way the step is answered and the episode goes on, served by
        # the next fork server, as is every other episode.
        obs = out["body"]["observation"]
        if obs["infra_failed"]:
            assert (obs["infra_cause"], obs["step_number"], obs["attempts_remaining"], out["body"]["done"]) == ("fork_server_died", 0, 5, False)
            assert obs["error"].startswith("the sandbox's fork server died during the run (infrastructure: fork_server_died")
            again = httpx.post(f"{server.url}/step", json={"action": submit(GOLD["easy"], GOOD_HYPOTHESIS["easy"]), "episode_id": episode}).json()
            assert again["done"] and again["observation"]["tests_passed"] == 8
        else:
            assert obs["error"] is None and obs["tests_passed"] == 8
        for task_id in ("easy", "medium", "hard"):
            assert solve(server.url, task_id)["observation"]["grader_score"] > 0.9
        assert runtime.sandbox.zygote.pid != zygote


def test_a_vanished_websocket_client_frees_its_slot_and_disturbs_no_one(runtime):
    async def scenario(url: str) -> tuple:
        ws_url = url.replace("http", "ws") + "/ws"
        survivor = await connect(ws_url, max_size=None)
        await survivor.send(json.dumps({"type": "reset", "data": {"task_id": "easy", "seed": 4}}))
        await survivor.recv()
        doomed = await connect(ws_url, max_size=None)
        await doomed.send(json.dumps({"type": "reset", "data": {"task_id": "easy"}}))
        await doomed.recv()
        await doomed.send(json.dumps({"type": "step", "data": submit(SLOW, "h")}))
        await asyncio.sleep(0.3)
        doomed.transport.abort()  # the client vanishes mid-step, without a close frame
        await asyncio.sleep(0.3)
        await survivor.send(json.dumps({"type": "step", "data": submit(GOLD["easy"], GOOD_HYPOTHESIS["easy"])}))
        survived = json.loads(await survivor.recv())["data"]
        deadline = time.monotonic() + 15
        while True:  # the freed slot admits a new session
            newcomer = await connect(ws_url, max_size=None)
            try:
                await newcomer.send(json.dumps({"type": "reset", "data": {"task_id": "medium"}}))
            except ConnectionClosed:
                pass  # over capacity the server answers at once and closes
            reply = json.loads(await newcomer.recv())
            await newcomer.close()
            if reply["type"] == "observation" or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.2)
        await survivor.close()
        return survived["done"], survived["observation"]["grader_score"], reply["type"]

    with LiveServer(build_app(runtime=runtime, settings=Settings(max_sessions=2))) as server:
        assert asyncio.run(scenario(server.url)) == (True, 0.96, "observation")
