"""OpenEnv's tool protocol (MCP, RFC 003): every tool of an episode's profile as an MCP tool, through ``step``
(``list_tools`` / ``call_tool``) over HTTP and /ws and through JSON-RPC on POST /mcp, one code path with the
action wire (issue 36, item 1)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
from fastapi.testclient import TestClient
from openenv.core.env_server.mcp_types import RESERVED_TOOL_NAMES, CallToolAction, CallToolObservation, ListToolsObservation
from openenv.core.mcp_client import MCPToolClient

from env.agents.llm import LLMAgent
from env.config import Settings
from env.eval import run
from env.eval.drivers import HttpDriver, WsDriver
from env.families.classic.tools import CLASSIC_TOOLS
from env.families.registry import FAMILIES
from env.models import DebugAction
from env.server.app import build_app
from env.server.environment import NO_EPISODE_ON_CONNECTION, DebugEnvironment
from env.server.episodes import NO_EPISODE_NAMED
from env.server.in_process import InProcessDriver
from tests.test_fuzz_openapi import NASTY, RAW

ROOT = Path(__file__).resolve().parents[1]
REPO = "repo-pagination-off-by-one"
QUERY = {"query_type": "test_details", "query_target": "test_finds_middle_element"}
# What every family serves, one task each: (task, profiles).
SERVED = {
    "easy": ("default", "bash", "pdb", "pdb_shell"),
    REPO: ("default", "bash", "pdb", "pdb_shell", "minimal"),
    "proc-easy-test-0": ("default",),
}


def reset(client: TestClient, **body: Any) -> dict[str, Any]:
    obs = client.post("/reset", json=body).json()["observation"]
    assert obs["error"] is None, obs["error"]
    return obs


def step(client: TestClient, episode: str, action: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/step", json={"action": action, "episode_id": episode})
    assert response.status_code == 200
    return response.json()


def rpc(http: httpx.Client, method: str, params: dict[str, Any] | None = None, id: int = 1) -> dict[str, Any]:
    response = http.post("/mcp", json={"jsonrpc": "2.0", "method": method, "params": params or {}, "id": id})
    assert response.status_code == 200
    return response.json()


def test_every_family_and_profile_lists_its_tools_from_the_registry(client):
    listing = {t["id"]: t for t in client.get("/tasks").json()}
    for task, profiles in SERVED.items():
        for profile in profiles:
            obs = reset(client, task_id=task, seed=1, profile=profile)
            listed = step(client, obs["episode_id"], {"type": "list_tools"})
            published = listing[task]["profiles"][profile]["tools"]  # /tasks: the one registry's definitions
            assert listed["observation"]["tools"] == [
                {"name": t["function"]["name"], "description": t["function"]["description"], "input_schema": t["function"]["parameters"]}
                for t in published
            ], (task, profile)
            names = [t["name"] for t in listed["observation"]["tools"]]
            assert names == obs["available_actions"] and not set(names) & RESERVED_TOOL_NAMES
            assert (listed["reward"], listed["done"]) == (0.0, False)
            # listing is not a step of the episode
            assert client.get("/state", params={"episode_id": obs["episode_id"]}).json()["step_count"] == 0


def test_no_registered_tool_or_profile_name_is_one_openenv_reserves():
    for family in FAMILIES.values():
        for profile, served in family.profiles().items():
            names = {t["function"]["name"] for t in served["tools"]} | set(served["actions"])
            assert not names & RESERVED_TOOL_NAMES, (family.name, profile)


def test_classic_tools_keep_their_published_schemas(client):
    obs = reset(client, task_id="easy", seed=1)
    tools = step(client, obs["episode_id"], {"type": "list_tools"})["observation"]["tools"]
    assert [t["input_schema"] for t in tools] == [t["function"]["parameters"] for t in CLASSIC_TOOLS]


def test_a_tool_call_is_the_same_step_as_the_action_wire(client):
    wire = reset(client, task_id="easy", seed=3)
    mcp = reset(client, task_id="easy", seed=3)
    for action in ({"action_type": "query_context", **QUERY}, {"action_type": "give_up", "final_diagnosis": "off by one"}):
        old = step(client, wire["episode_id"], action)
        name, arguments = action["action_type"], {k: v for k, v in action.items() if k != "action_type"}
        new = step(client, mcp["episode_id"], {"type": "call_tool", "tool_name": name, "arguments": arguments})
        assert (new["reward"], new["done"]) == (old["reward"], old["done"])
        result = new["observation"]
        assert (result["tool_name"], result["error"], result["result"]["is_error"]) == (name, None, False)
        data = result["result"]["data"]
        assert data["episode_id"] == mcp["episode_id"]
        assert {**data, "episode_id": ""} == {**old["observation"], "episode_id": ""}
    assert (old["reward"], old["done"], data["grader_score"]) == (0.0, True, 0.0)
    assert data["step_number"] == 2 and data["query_result"] is None


def test_the_query_answer_is_the_tool_s_text(client):
    obs = reset(client, task_id="easy", seed=3)
    out = step(client, obs["episode_id"], {"type": "call_tool", "tool_name": "query_context", "arguments": QUERY})
    result = out["observation"]["result"]
    assert result["content"] == [{"type": "text", "text": result["data"]["query_result"]}]
    assert result["data"]["query_result"].startswith("def test_finds_middle_element")
    assert (out["reward"], out["done"], result["data"]["step_number"]) == (0.0, False, 1)


def test_tool_errors_come_back_in_band_with_openenv_error_types(client):
    obs = reset(client, task_id="easy", seed=3)
    episode = obs["episode_id"]

    def call(name: str, arguments: Any) -> dict[str, Any]:
        return step(client, episode, {"type": "call_tool", "tool_name": name, "arguments": arguments})

    unknown = call("run_tests", {})
    assert unknown["observation"]["error"] == {
        "error_type": "tool_not_found",
        "message": "unknown action_type 'run_tests'; expected one of: submit_fix, query_context, give_up",
    }
    assert unknown["observation"]["result"]["is_error"] is True and unknown["done"] is False
    # a typed field of the wrong type never becomes an action: no step is taken (the action wire answers it with a 422)
    typed = call("query_context", {"query_type": 5})
    assert typed["observation"]["error"] == {
        "error_type": "invalid_args",
        "message": "query_context: field 'query_type': Input should be a valid string",
    }
    extra = call("query_context", {"query_type": "test_details", "colour": "red"})
    assert extra["observation"]["error"] == {
        "error_type": "invalid_args",
        "message": "unknown field(s) 'colour' for query_context; its fields are: query_type, query_target",
    }
    clash = call("give_up", {"action_type": "submit_fix"})
    assert clash["observation"]["error"] == {"error_type": "invalid_args", "message": "give_up: unknown field 'action_type'"}
    reserved = call("step", {})
    assert reserved["observation"]["error"] == {
        "error_type": "tool_not_found",
        "message": "'step' is a name OpenEnv reserves (close, reset, state, step), not a tool; expected one of: "
        "submit_fix, query_context, give_up",
    }
    assert client.get("/state", params={"episode_id": episode}).json()["step_count"] == 2  # the unknown tool and the extra field


def test_a_repository_tool_runs_and_its_failures_are_execution_errors(client):
    obs = reset(client, task_id=REPO, seed=1, profile="minimal")
    out = step(client, obs["episode_id"], {"type": "call_tool", "tool_name": "cat", "arguments": {"path": "catalog/api.py", "end_line": 1}})
    assert out["observation"]["result"]["content"][0]["text"].startswith("1 | ") and out["observation"]["error"] is None
    missing = step(client, obs["episode_id"], {"type": "call_tool", "tool_name": "cat", "arguments": {"path": "nowhere.py"}})
    assert missing["observation"]["error"]["error_type"] == "execution_error"
    assert missing["observation"]["error"]["message"] == missing["observation"]["result"]["data"]["error"]
    bad = step(
        client, obs["episode_id"], {"type": "call_tool", "tool_name": "cat", "arguments": {"path": "catalog/api.py", "end_line": "x"}}
    )
    assert bad["observation"]["error"]["error_type"] == "invalid_args"


def test_a_malformed_call_tool_is_answered_in_band(client):
    obs = reset(client, task_id="easy", seed=3)
    for action, message in (
        ({"type": "call_tool", "arguments": {}}, "call_tool: missing field 'tool_name'"),
        (
            {"type": "call_tool", "tool_name": "give_up", "arguments": [1]},
            "call_tool: field 'arguments': Input should be a valid dictionary",
        ),
    ):
        out = step(client, obs["episode_id"], action)
        assert out["observation"]["error"] == {"error_type": "invalid_args", "message": message}
        assert out["done"] is False
    assert client.get("/state", params={"episode_id": obs["episode_id"]}).json()["step_count"] == 0


def test_http_tool_calls_need_an_episode_named_like_any_step(client):
    out = client.post("/step", json={"action": {"type": "list_tools"}}).json()
    assert out["observation"]["error"] == NO_EPISODE_NAMED
    assert "openenv/session/create" in NO_EPISODE_NAMED


def test_mcp_tool_client_over_ws(live_server):
    async def play() -> None:
        env = MCPToolClient(base_url=live_server.url)
        env.use_production_mode = False  # the step-based wire: list_tools and call_tool as /ws steps
        async with env:
            await env.reset(task_id="easy", seed=3)
            tools = await env.list_tools()
            assert [t.name for t in tools] == ["submit_fix", "query_context", "give_up"]
            data = await env.call_tool("query_context", **QUERY)
            assert data["query_result"].startswith("def test_finds_middle_element") and data["step_number"] == 1
            result = await env.step(CallToolAction(tool_name="give_up", arguments={}))
            assert (result.reward, result.done, result.observation.result["data"]["grader_score"]) == (0.0, True, 0.0)

    asyncio.run(play())


def test_json_rpc_sessions_hold_their_own_episodes(live_server):
    with httpx.Client(base_url=live_server.url) as http:
        made = rpc(http, "openenv/session/create", {"task_id": "easy", "seed": 3, "profile": "pdb"})
        session = made["result"]["session_id"]
        first = made["result"]["observation"]
        assert (first["task_id"], first["info"]["interface"]["profile"], made["result"]["reward"], made["result"]["done"]) == (
            "easy",
            "pdb",
            0.0,
            False,
        )
        other = rpc(http, "openenv/session/create", {"task_id": REPO, "seed": 1})["result"]["session_id"]
        listed = rpc(http, "tools/list", {"session_id": session})["result"]["tools"]
        assert [t["name"] for t in listed] == first["available_actions"]
        assert set(listed[0]) == {"name", "description", "inputSchema"}
        assert [t["name"] for t in rpc(http, "tools/list", {"session_id": other})["result"]["tools"]][:2] == ["list_dir", "view_file"]
        called = rpc(http, "tools/call", {"session_id": session, "name": "query_context", "arguments": QUERY})["result"]
        assert (called["tool_name"], called["reward"], called["done"], called["error"]) == ("query_context", 0.0, False, None)
        assert called["result"]["data"]["episode_id"] == first["episode_id"] and called["result"]["data"]["step_number"] == 1
        # the other session's episode did not move
        untouched = rpc(http, "tools/call", {"session_id": other, "name": "list_dir", "arguments": {}})["result"]
        assert untouched["result"]["data"]["step_number"] == 1 and untouched["result"]["data"]["task_id"] == REPO
        guessed = str(uuid.uuid4())
        assert rpc(http, "tools/call", {"session_id": guessed, "name": "give_up", "arguments": {}})["error"] == {
            "code": -32602,
            "message": f"Unknown session_id: {guessed}",
            "data": None,
        }
        anonymous = rpc(http, "tools/call", {"name": "give_up", "arguments": {}})["error"]
        assert anonymous["message"] == NO_EPISODE_NAMED
        assert rpc(http, "openenv/session/close", {"session_id": session})["result"] == {"session_id": session, "closed": True}
        assert rpc(http, "tools/list", {"session_id": session})["error"]["message"] == f"Unknown session_id: {session}"
        assert rpc(http, "openenv/session/close", {"session_id": other})["result"]["closed"] is True


def test_a_session_whose_reset_fails_is_not_kept(live_server):
    with httpx.Client(base_url=live_server.url) as http:
        refused = rpc(http, "openenv/session/create", {"task_id": "nope"})
        assert refused["error"]["code"] == -32602
        assert refused["error"]["message"].startswith("unknown task_id 'nope'; available: easy")
        bad = rpc(http, "openenv/session/create", {"seed": "x"})
        assert bad["error"]["message"] == "reset: 'seed' must be an integer, not str"


def test_mcp_tool_client_in_production_mode(live_server):
    async def play() -> None:
        async with MCPToolClient(base_url=live_server.url) as env:  # openenv/session/create, then /ws?session_id=
            await env.reset(task_id=REPO, seed=1, profile="minimal")
            assert [t.name for t in await env.list_tools()] == ["cat", "search", "edit", "test", "finish"]
            called = await env.call_tool("cat", path="catalog/api.py", end_line=1)
            assert called["tool_name"] == "cat" and called["reward"] == 0.0 and called["done"] is False
            assert called["result"]["data"]["tool_output"].startswith("1 | ")
            assert called["result"]["data"]["step_number"] == 1

    asyncio.run(play())


class _Model:
    """An OpenAI-compatible client whose model gives up at once; it records the tools it was offered."""

    def __init__(self) -> None:
        self.offered: list[Any] = []
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))

    def create(self, **kwargs: Any) -> Any:
        self.offered.append(kwargs.get("tools"))
        call = SimpleNamespace(id="c1", function=SimpleNamespace(name="give_up", arguments="{}"))
        return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content="", tool_calls=[call]))], usage=None)


def test_every_driver_lists_the_episode_s_tools_and_the_llm_agent_is_offered_them(runtime, live_server, tmp_path, monkeypatch):
    # the first listing of a fresh server builds every task's entry (1,000+ with the catalog): seconds on a busy machine
    published = {t["id"]: t for t in httpx.get(f"{live_server.url}/tasks", timeout=120).json()}[REPO]["profiles"]["pdb"]["tools"]
    for driver in (InProcessDriver(runtime), WsDriver(live_server.url), HttpDriver(live_server.url)):
        with driver as env:
            env.reset(REPO, 1, profile="pdb")
            assert env.tools() == published, type(driver).__name__
    model = _Model()
    monkeypatch.setattr(run, "AGENTS", {"llm": lambda: LLMAgent(client=model)})
    summary = {**published_task(runtime, "easy"), "tools": [{"type": "function", "function": {"name": "stale"}}]}
    with InProcessDriver(runtime) as env:
        result = run.play(env, "llm", summary, 0, tmp_path / "steps.jsonl", profile="pdb")
    assert result["task_id"] == "easy" and result["steps"] == 1
    offered = model.offered[0]
    with InProcessDriver(runtime) as env:
        env.reset("easy", run.seed_for("easy", 0), profile="pdb")
        assert offered == env.tools() and [t["function"]["name"] for t in offered][:3] == ["submit_fix", "query_context", "give_up"]


def published_task(runtime: Any, task_id: str) -> dict[str, Any]:
    from env.listing import listing_entry

    return listing_entry(runtime.catalog.get(task_id).summary())


def test_hostile_json_rpc_is_answered_in_band(client):
    made = client.post("/mcp", json={"jsonrpc": "2.0", "method": "openenv/session/create", "params": {"task_id": "easy", "seed": 3}, "id": 7}).json()
    session = made["result"]["session_id"]
    for params, error in (
        ({"session_id": ["x"]}, {"code": -32602, "message": "'session_id' must be a string (the one openenv/session/create answered), not list"}),
        ({"session_id": {"a": 1}, "name": "give_up"}, {"code": -32602, "message": "'session_id' must be a string (the one openenv/session/create answered), not dict"}),
    ):
        for method in ("tools/list", "tools/call", "openenv/session/close"):
            response = client.post("/mcp", json={"jsonrpc": "2.0", "method": method, "params": params, "id": 1})
            assert (response.status_code, response.json()) == (200, {"jsonrpc": "2.0", "id": 1, "error": {**error, "data": None}})
    odd = client.post("/mcp", json={"jsonrpc": "2.0", "method": "tools/call", "params": {"session_id": session, "name": 5, "arguments": "x"}, "id": 2})
    assert odd.status_code == 200
    assert odd.json()["result"]["error"] == {
        "error_type": "invalid_args",
        "message": "tools/call: field 'tool_name': Input should be a valid string; field 'arguments': Input should be a valid dictionary",
    }
    assert odd.json()["result"]["tool_name"] == "5" and odd.json()["result"]["done"] is False
    assert client.post("/mcp", content=b"[1]", headers={"content-type": "application/json"}).json()["error"]["code"] == -32700
    closed = client.post("/mcp", json={"jsonrpc": "2.0", "method": "openenv/session/close", "params": {"session_id": session}, "id": 3}).json()
    assert closed["result"] == {"session_id": session, "closed": True}


def test_the_bench_times_both_wires_as_the_readme_says(live_server):
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_mcp.py"), "--runs", "2", "--url", live_server.url], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    names = [line.split(" p50 ")[0].strip() for line in done.stdout.splitlines()[:5]]
    assert names == ["http action", "http call_tool", "ws action", "ws call_tool", "mcp tools/call"]
    assert done.stdout.splitlines()[5].startswith("http: a tool call adds ")


def test_json_rpc_messages_on_a_ws_connection_reach_its_own_episode(client):
    list_tools = json.dumps({"type": "mcp", "data": {"jsonrpc": "2.0", "method": "tools/list", "id": 1}})
    with client.websocket_connect("/ws") as ws:
        ws.send_text(list_tools)
        before = json.loads(ws.receive_text())["data"]["error"]
        assert (before["code"], before["message"]) == (-32603, NO_EPISODE_ON_CONNECTION)  # the library's code for what we raise
        ws.send_text(json.dumps({"type": "reset", "data": {"task_id": "easy", "seed": 3}}))
        episode = json.loads(ws.receive_text())["data"]["observation"]["episode_id"]
        ws.send_text(list_tools)
        assert [t["name"] for t in json.loads(ws.receive_text())["data"]["result"]["tools"]] == ["submit_fix", "query_context", "give_up"]
        ws.send_text(json.dumps({"type": "mcp", "data": {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "give_up", "arguments": {}}, "id": 2}}))
        called = json.loads(ws.receive_text())["data"]["result"]
        assert (called["tool_name"], called["reward"], called["done"], called["result"]["data"]["episode_id"]) == ("give_up", 0.0, True, episode)


def test_in_process_steps_take_the_tool_protocol_too(runtime):
    env = DebugEnvironment(runtime)
    env.reset(task_id="easy", seed=3)
    listed = env.step(DebugAction(type="list_tools"))
    assert isinstance(listed, ListToolsObservation) and [t.name for t in listed.tools] == ["submit_fix", "query_context", "give_up"]
    called = env.step(DebugAction(type="call_tool", tool_name="give_up", arguments={}))
    assert isinstance(called, CallToolObservation)
    assert (called.reward, called.done, called.error, called.result["data"]["grader_score"]) == (0.0, True, None, 0.0)
    env.close()


RPC_PARAMS = {
    "openenv/session/create": ["task_id", "seed", "profile", "edit_gate", "aliases", "episode_id", "index", "split", "session_id", "unknown_field"],
    "tools/list": ["session_id", "unknown_field"],
    "tools/call": ["session_id", "name", "arguments", "unknown_field"],
    "openenv/session/close": ["session_id", "unknown_field"],
}


def test_every_param_of_every_json_rpc_method_with_every_nasty_value(app):
    """No JSON-RPC request on POST /mcp gets a server error: each param of each method set to each nasty value gets a
    JSON-RPC result or error (or, for a value the body rules refuse, a 4xx), never a 5xx."""
    counts = {"requests": 0, "4xx": 0, "errors": 0, "results": 0}
    with TestClient(app) as client:

        def post(body: dict[str, Any] | bytes) -> Any:
            if isinstance(body, bytes):
                return client.post("/mcp", content=body, headers={"content-type": "application/json"})
            return client.post("/mcp", content=json.dumps(body).encode("utf-8", "surrogatepass"), headers={"content-type": "application/json"})

        session = post({"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create", "params": {"task_id": "easy", "seed": 3}}).json()["result"]["session_id"]
        base = {
            "openenv/session/create": {"task_id": "easy", "seed": 3},
            "tools/list": {"session_id": session},
            "tools/call": {"session_id": session, "name": "query_context", "arguments": QUERY},
            "openenv/session/close": {"session_id": str(uuid.uuid4())},
        }
        for method, fields in RPC_PARAMS.items():
            for field in fields:
                for value in NASTY:
                    response = post({"jsonrpc": "2.0", "id": 1, "method": method, "params": {**base[method], field: value}})
                    counts["requests"] += 1
                    assert response.status_code < 500, (method, field, str(value)[:40], response.status_code, response.text[:300])
                    if response.status_code >= 400:  # NaN, Infinity: the body rules answer before JSON-RPC does
                        counts["4xx"] += 1
                        continue
                    reply = response.json()
                    assert ("error" in reply) != ("result" in reply), reply
                    counts["errors" if "error" in reply else "results"] += 1
                    made = (reply.get("result") or {}).get("session_id") if method == "openenv/session/create" else None
                    if made:  # a create that succeeded holds a slot: give it back
                        post({"jsonrpc": "2.0", "id": 2, "method": "openenv/session/close", "params": {"session_id": made}})
                template = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": {**base[method], field: "__NASTY__"}}).encode()
                for raw in RAW:
                    response = post(template.replace(b'"__NASTY__"', raw))
                    counts["requests"] += 1
                    counts["4xx"] += 1
                    assert 400 <= response.status_code < 500, (method, field, raw[:20], response.status_code, response.text[:300])
    print(f"json-rpc fuzz: {counts}")
    assert counts["requests"] == sum(len(f) for f in RPC_PARAMS.values()) * (len(NASTY) + len(RAW))


def test_a_ws_mcp_connection_resets_its_session_with_session_create(client):
    with client.websocket_connect("/mcp") as ws:

        def ask(method: str, params: dict[str, Any], id: int = 1) -> dict[str, Any]:
            ws.send_text(json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            return json.loads(ws.receive_text())

        before = ask("tools/list", {})
        assert before["error"] == {"code": -32600, "message": NO_EPISODE_ON_CONNECTION, "data": None}
        assert ask("openenv/session/create", {"task_id": "nope"})["error"]["message"].startswith("unknown task_id 'nope'")
        made = ask("openenv/session/create", {"task_id": REPO, "seed": 1, "profile": "minimal"})["result"]
        assert made["observation"]["available_actions"] == ["cat", "search", "edit", "test", "finish"] and made["reward"] == 0.0
        assert [t["name"] for t in ask("tools/list", {})["result"]["tools"]] == ["cat", "search", "edit", "test", "finish"]
        called = ask("tools/call", {"name": "cat", "arguments": {"path": "catalog/api.py", "end_line": 1}}, id=9)
        assert called["id"] == 9 and called["result"]["result"]["data"]["tool_output"].startswith("1 | ")
        assert (called["result"]["reward"], called["result"]["done"], called["result"]["error"]) == (0.0, False, None)
        assert ask("openenv/session/close", {"session_id": made["session_id"]})["error"]["message"] == (
            "this connection's session closes with the connection: close the WebSocket"
        )
        assert ask("resources/list", {})["error"] == {"code": -32601, "message": "Method not found: resources/list", "data": None}


def test_a_search_that_runs_out_of_time_is_a_timeout(client):
    obs = reset(client, task_id=REPO, seed=1)

    def call(name: str, **arguments: Any) -> dict[str, Any]:
        return step(client, obs["episode_id"], {"type": "call_tool", "tool_name": name, "arguments": arguments})["observation"]

    assert call("create_file", path="slow.txt", content="a" * 42 + "!")["error"] is None
    slow = call("search", pattern="(a|aa)+$", path="slow.txt", regex=True)  # backtracking: fib(42) ways to fail
    assert slow["error"] == {"error_type": "timeout", "message": "the pattern took too long to match; use a simpler pattern"}


def test_a_busy_ws_mcp_session_is_not_reaped_as_idle(runtime):
    """OpenEnv's reaper closes sessions idle past 2 x ENV_SESSION_TIMEOUT_S by their last recorded activity: every
    message on WS /mcp records it, so a session in use outlives the limit."""
    app = build_app(runtime=runtime, settings=Settings(session_timeout_s=2))  # reaped after 4 s idle, checked every 5 s
    with TestClient(app) as client, client.websocket_connect("/mcp") as ws:
        ws.send_text(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "openenv/session/create", "params": {"task_id": "easy", "seed": 3}}))
        assert "result" in json.loads(ws.receive_text())
        for i in range(12):  # 13 s: past two of the reaper's rounds
            time.sleep(1.1)
            ws.send_text(json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/list"}))
            reply = json.loads(ws.receive_text())
            assert [t["name"] for t in reply["result"]["tools"]] == ["submit_fix", "query_context", "give_up"], (i, reply)


def test_an_idle_json_rpc_session_is_closed_after_the_idle_limit_and_says_so(runtime):
    """Issue 47: OpenEnv's reaper closed it after twice ENV_SESSION_TIMEOUT_S, looking every quarter of it, and a
    later request got 'Unknown session_id'. Now it closes after the limit, on time, and a request naming it is told why."""
    app = build_app(runtime=runtime, settings=Settings(session_timeout_s=0.5))
    with TestClient(app) as client:
        made = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create", "params": {"task_id": "easy", "seed": 3}})
        session = made.json()["result"]["session_id"]
        time.sleep(1.0)
        assert app.state.slots.held("testclient") == 0  # closed by the timer, with no request to trigger it
        gone = client.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"session_id": session}}).json()
        assert gone["error"] == {
            "code": -32602, "data": None,
            "message": f"MCP session '{session}' was closed after 0.5 s without a request (ENV_SESSION_TIMEOUT_S); openenv/session/create starts a new one",
        }
