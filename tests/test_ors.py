"""The Open Reward Standard beside OpenEnv (issue 50, item 1): ors-sdk's own clients, unchanged, play the tasks the
Task API lists on the same server and port as OpenEnv's clients; bad input gets clear answers."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterable
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from openenv.core.generic_client import GenericEnvClient
from openenv.core.mcp_client import MCPToolClient
from ors.client import ORS, AsyncORS, Task, ToolCallError

from env.config import Settings
from env.server import ors
from env.server.app import build_app
from env.server.environment import ENV_NAME
from env.server.ors import CHUNK, chunks
from tests.conftest import LiveServer
from tests.helpers import GOLD, GOOD_HYPOTHESIS

QUERY = {"query_type": "test_details", "query_target": "test_finds_middle_element"}


def fix(task: str) -> dict[str, Any]:
    return {"fixed_code": GOLD[task], "hypothesis": GOOD_HYPOTHESIS[task]}


def test_the_sync_client_plays_a_listed_task_to_its_grade(live_server):
    with ORS(base_url=live_server.url) as client:
        env = client.environment(ENV_NAME)
        assert env.list_splits() == ["train", "validation", "test"]
        listed = env.list_tasks("test")
        assert len(listed) == env.num_tasks("test") and env.get_task("test", 0).task_spec == listed[0].task_spec
        easy = next(t for t in listed if t.task_spec["id"] == "easy")
        with env.session(task=easy) as session:
            prompt = session.get_prompt()
            assert prompt[0].text.startswith("Task: binary_search(arr, target) should return the index of target")
            assert [t.name for t in session.list_tools()] == ["submit_fix", "query_context", "give_up"]
            asked = session.call_tool("query_context", QUERY)
            assert (asked.reward, asked.finished) == (0.0, False)
            assert asked.blocks[0].text.startswith("def test_finds_middle_element(sol):")
            assert asked.metadata["step_number"] == 1 and "grade" not in asked.metadata
            with pytest.raises(ToolCallError, match="^unknown action_type 'nope'; expected one of: submit_fix, query_context, give_up$"):
                session.call_tool("nope", {})
            solved = session.call_tool("submit_fix", fix("easy"))
            # the numbers an in-process episode of easy, seed 0, gives for the same three calls (docs/training.md)
            assert (solved.reward, solved.finished, solved.metadata["grade"], solved.metadata["grader_score"]) == (0.55, True, 0.96, 0.96)
            assert solved.metadata["cumulative_reward"] == 0.55
            with pytest.raises(ToolCallError, match=r"^the episode is finished \(grade 0.96\); create a new session"):
                session.call_tool("give_up", {})


def test_the_async_client_plays_sessions_by_split_and_index_at_once(live_server):
    async def play(client: AsyncORS, index: int) -> tuple[str, float, bool]:
        async with client.environment(ENV_NAME).session(split="test", index=index) as session:
            prompt = await session.get_prompt()
            out = await session.call_tool("give_up", {"final_diagnosis": "none"})
            return prompt[0].text.splitlines()[0], out.reward, out.finished

    async def run() -> list[tuple[str, float, bool]]:
        client = AsyncORS(base_url=live_server.url)  # one client, its connections shared by the sessions
        return await asyncio.gather(*(play(client, i % 2) for i in range(6)))

    results = asyncio.run(run())
    assert all(r[1:] == (0.0, True) for r in results)
    assert results[0][0] == results[2][0] == results[4][0] != results[1][0] == results[3][0]


def test_a_grpo_group_sees_one_task_over_ors_and_openenv(live_server):
    """The same task and seed in several ORS sessions at once: one prompt, one answer to one call; and the same first
    observation an OpenEnv reset of that task and seed shows (ORS plays seed 0 when the spec names none)."""
    spec = {"id": "proc-medium-train-7", "seed": 3}

    async def first(seed_spec: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        client = AsyncORS(base_url=live_server.url)
        async with client.environment(ENV_NAME).session(task=Task(ENV_NAME, seed_spec)) as session:
            prompt = (await session.get_prompt())[0].text
            out = await session.call_tool("list_dir", {})
            data = dict(out.metadata)
            data.pop("episode_id")
            return prompt, data

    async def group() -> list[tuple[str, dict[str, Any]]]:
        return await asyncio.gather(*(first(spec) for _ in range(4)))

    views = asyncio.run(group())
    assert all(view == views[0] for view in views[1:])
    with httpx.Client(base_url=live_server.url) as http:
        reset = http.post("/reset", json={"task_id": spec["id"], "seed": 3}).json()["observation"]
        unseeded = http.post("/reset", json={"task_id": spec["id"], "seed": 0}).json()["observation"]
    assert views[0][0].startswith(f"Task: {reset['task_description']}\n")
    assert asyncio.run(first({"id": spec["id"]}))[0].startswith(f"Task: {unseeded['task_description']}\n")


def test_ors_and_openenv_clients_play_the_same_task_on_one_port(live_server):
    async def openenv() -> float:
        env = MCPToolClient(base_url=live_server.url)
        env.use_production_mode = False
        async with env:
            await env.reset(task_id="medium", seed=0)
            return (await env.call_tool("submit_fix", **fix("medium")))["grader_score"]

    with ORS(base_url=live_server.url) as client:
        env = client.environment(ENV_NAME)
        index = [t.task_spec["id"] for t in env.list_tasks("test")].index("medium")
        with env.session(split="test", index=index) as session:  # seed 0, as the OpenEnv reset below
            ors_grade = session.call_tool("submit_fix", fix("medium")).metadata["grade"]
    with GenericEnvClient(base_url=live_server.url) as generic:  # OpenEnv's plain client over /ws
        generic.reset(task_id="medium", seed=0)
        generic_grade = generic.step({"action_type": "submit_fix", **fix("medium")}).observation["grader_score"]
    assert ors_grade == asyncio.run(openenv()) == generic_grade == 0.971429


def sse(response: httpx.Response) -> list[tuple[str, str]]:
    return sse_lines(response.iter_lines())


def sse_lines(lines: Iterable[str]) -> list[tuple[str, str]]:
    """Events as the clients parse them (the data's leading whitespace stripped)."""
    events, event, data = [], None, []
    for line in lines:
        if not line:
            if event:
                events.append((event, "\n".join(data)))
            event, data = None, []
        elif line.startswith(":"):
            continue
        else:
            name, _, value = line.partition(":")
            if name == "event":
                event = value.strip()
            elif name == "data":
                data.append(value.lstrip())
    return events


def new_session(http: httpx.Client, **create: Any) -> str:
    with http.stream("POST", "/create_session") as made:
        sid = dict(sse(made))["task_id"]
    assert http.post("/create", json=create, headers={"X-Session-ID": sid}).status_code == 200
    return sid


def test_a_dropped_call_is_resumed_by_its_task_id_and_taken_once(live_server):
    with httpx.Client(base_url=live_server.url, timeout=60) as http:
        sid = new_session(http, task_spec={"id": "easy"})
        headers = {"X-Session-ID": sid}
        with http.stream("POST", f"/{ENV_NAME}/call", json={"name": "submit_fix", "input": fix("easy")}, headers=headers) as stream:
            lines = stream.iter_lines()
            first, call_id = next(lines), next(lines).removeprefix("data: ")
        assert first == "event: task_id"  # the stream dropped there, before the result
        with http.stream("POST", f"/{ENV_NAME}/call", json={"name": "submit_fix", "input": {}, "task_id": call_id}, headers=headers) as again:
            events = sse(again)
        assert events[0] == ("task_id", call_id) and events[-1][0] == "end"
        assert [e for e, _ in events[1:-1]] == ["chunk"] * (len(events) - 2)  # the result is longer than one chunk
        result = json.loads("".join(data for _, data in events[1:]))
        assert (result["ok"], result["output"]["finished"], result["output"]["metadata"]["step_number"]) == (True, True, 1)
        with http.stream("POST", f"/{ENV_NAME}/call", json={"name": "give_up", "task_id": "0" * 32}, headers=headers) as unknown:
            assert sse(unknown) == [("error", "unknown task_id '00000000000000000000000000000000' in this session: the call's result was not kept; call the tool again")]
        other = new_session(http, task_spec={"id": "easy"})  # another session cannot fetch this one's call
        with http.stream("POST", f"/{ENV_NAME}/call", json={"name": "give_up", "task_id": call_id}, headers={"X-Session-ID": other}) as crossed:
            assert sse(crossed)[0][0] == "error"


def test_a_long_call_streams_keep_alive_comments(live_server, monkeypatch):
    monkeypatch.setattr(ors, "KEEPALIVE_S", 0.01)
    with httpx.Client(base_url=live_server.url, timeout=60) as http:
        sid = new_session(http, task_spec={"id": "hard"})
        with http.stream("POST", "/call", json={"name": "submit_fix", "input": fix("hard")}, headers={"X-Session-ID": sid}) as stream:
            lines = list(stream.iter_lines())
    assert lines[:2] == ["event: task_id", lines[1]] and ": keep-alive" in lines
    events = sse_lines(lines)
    assert events[-1][0] == "end" and json.loads("".join(d for _, d in events[1:]))["output"]["finished"] is True


def test_chunks_never_start_with_whitespace_and_rejoin():
    value = {"text": ("a" * (CHUNK - 12)) + "  b" + " " * 9000 + "c", "n": 1}
    pieces = chunks(json.dumps(value, separators=(",", ":")))
    assert json.loads("".join(pieces)) == value and all(len(p) <= CHUNK for p in pieces) and len(pieces) > 3
    assert pieces[1][0] == "b" and not any(p[0].isspace() for p in pieces)  # cut before the run of spaces, then escaped ones
    # what the clients do with each piece: strip the leading whitespace of the data line
    assert json.loads("".join(p.lstrip() for p in pieces)) == value
    assert chunks("") == [""]


def test_bad_input_gets_clear_answers(app):
    with TestClient(app) as client:
        sid = "s-" + "1" * 30
        h = {"X-Session-ID": sid}
        held = app.state.slots.held("testclient")  # the app is shared: count only this test's sessions

        def create(body: dict[str, Any], headers: dict[str, str] = h) -> tuple[int, str]:
            r = client.post("/create", json=body, headers=headers)
            return r.status_code, r.json()["detail"] if r.status_code != 200 else ""

        assert create({"task_spec": {"id": "easy"}}, {}) == (400, "the X-Session-ID header is required: POST /create_session answers one")
        assert create({"task_spec": {"name": "easy"}}) == (400, f"task_spec names no task: send {{\"id\": ...}} as POST /{ENV_NAME}/tasks lists it")
        assert create({"task_spec": {"id": "easy", "seed": "x"}}) == (400, "task_spec: field 'seed': Input should be a valid integer, unable to parse string as an integer")
        code, detail = create({"task_spec": {"id": "nope"}})
        assert code == 400 and detail.startswith("unknown task_id 'nope'; available: easy, medium, hard")
        assert create({"split": "test", "index": 10**6})[0] == 400
        assert create({"split": "nope", "index": 0}) == (400, "reset: 'split' must be one of train, validation, test, not 'nope'")
        assert client.post("/create", json={"task_spec": {"id": "easy"}, "split": "test", "index": 0}, headers=h).status_code == 422
        assert client.post("/create", json={"split": "test"}, headers=h).status_code == 422
        assert create({"env_name": "other", "task_spec": {"id": "easy"}}) == (404, f"unknown environment 'other'; this server serves {ENV_NAME!r}")
        assert app.state.slots.held("testclient") == held  # no refused create kept a session
        assert create({"task_spec": {"id": "easy"}}) == (200, "")
        assert create({"task_spec": {"id": "easy"}}) == (400, f"session {sid!r} has a task already; /delete it or create another session")
        unknown = {"X-Session-ID": "nobody"}
        for method, path in (("POST", "/ping"), ("GET", f"/{ENV_NAME}/prompt"), ("GET", f"/{ENV_NAME}/task_tools")):
            r = client.request(method, path, headers=unknown)
            assert (r.status_code, r.json()["detail"]) == (404, "unknown session 'nobody': POST /create_session, then /create, starts one")
        assert client.post(f"/{ENV_NAME}/call", json={"name": "give_up"}, headers=unknown).status_code == 404
        assert client.post(f"/{ENV_NAME}/call", json={"name": "give_up", "input": [1]}, headers=h).status_code == 422
        assert client.get("/other/prompt", headers=h).status_code == 404
        assert client.post("/delete", headers=h).json() == {"sid": sid}
        assert client.post("/delete", headers=h).json() == {"sid": sid}  # twice: the clients send /delete and /delete_session
        assert client.post("/ping", headers=h).status_code == 404


def test_an_idle_ors_session_is_closed_and_says_so(runtime):
    app = build_app(runtime=runtime, settings=Settings(session_timeout_s=0.5))
    with TestClient(app) as client:
        h = {"X-Session-ID": "idle-one"}
        assert client.post("/create", json={"task_spec": {"id": "easy"}}, headers=h).status_code == 200
        assert app.state.slots.held("testclient") == 1
        time.sleep(1.0)
        assert app.state.slots.held("testclient") == 0  # closed by the timer
        r = client.post("/ping", headers=h)
        assert (r.status_code, r.json()["detail"]) == (404, "session 'idle-one' was closed after 0.5 s without a request (ENV_SESSION_TIMEOUT_S); create a new session")


def test_ors_sessions_take_the_client_s_share_of_slots(runtime):
    with LiveServer(build_app(runtime=runtime, settings=Settings(max_sessions=8, sessions_per_client=2))) as server, httpx.Client(base_url=server.url) as http:
        for n in range(2):
            assert http.post("/create", json={"task_spec": {"id": "easy"}}, headers={"X-Session-ID": f"s{n}"}).status_code == 200
        refused = http.post("/create", json={"task_spec": {"id": "easy"}}, headers={"X-Session-ID": "s2"})
        assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
        assert refused.json()["detail"].startswith("this client (127.0.0.1) holds 2 sessions, the most one client may hold at once")
        http.post("/delete", headers={"X-Session-ID": "s0"})
        assert http.post("/create", json={"task_spec": {"id": "easy"}}, headers={"X-Session-ID": "s2"}).status_code == 200


def test_the_openreward_sdk_plays_a_task_by_its_root_paths(live_server, monkeypatch):
    """The openreward SDK names the environment in a header (X-Deployment) and sends every request to the root."""
    monkeypatch.setenv("OPENREWARD_SESSION_URL", live_server.url)  # else it reaches for sessions.<host>
    monkeypatch.setenv("OPENREWARD_DISABLE_UPDATE_CHECK", "1")
    from openreward import OpenReward
    from openreward.api.errors import ToolCallError as OpenRewardToolError

    with OpenReward(api_key="unused") as client:
        env = client.environments.get(ENV_NAME)
        assert env.list_splits() == ["train", "validation", "test"]
        assert env.num_tasks("test") == len(env.list_tasks("test")) and env.get_task("test", 0).task_spec["id"] == "easy"
        with env.session(split="test", index=0) as session:
            assert session.get_prompt()[0].text.startswith("Task: binary_search(arr, target)")
            assert [t.name for t in session.list_tools()] == ["submit_fix", "query_context", "give_up"]
            asked = session.call_tool("query_context", QUERY)
            assert (asked.reward, asked.finished, asked.metadata["step_number"]) == (0.0, False, 1)
            with pytest.raises(OpenRewardToolError, match="unknown action_type 'nope'"):
                session.call_tool("nope", {})
            solved = session.call_tool("submit_fix", fix("easy"))
            assert (solved.reward, solved.finished, solved.metadata["grade"]) == (0.55, True, 0.96)
