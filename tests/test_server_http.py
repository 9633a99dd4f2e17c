"""The HTTP API: a whole episode with plain requests, isolation between episodes, and bad input."""

import json
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from fastapi.testclient import TestClient

from env.config import Settings
from env.families.race.family import RACE
from env.server.app import build_app
from tests.helpers import CATALOG, GOLD, GOOD_HYPOTHESIS, UNKNOWN_TASK_TAIL, submit


def test_overview_lists_endpoints_tasks_and_actions(client):
    body = client.get("/").json()
    assert body["name"] == "agentdebugger-env"
    assert {"GET /health", "POST /reset", "POST /step", "GET /state", "WS /ws", "GET /tasks"} <= set(body["endpoints"])
    assert list(body["action_types"]) == ["submit_fix", "query_context", "give_up"]
    assert [t["id"] for t in body["tasks"]] == CATALOG.ids()
    assert list(body["repository_tools"])[:3] == ["list_dir", "view_file", "search"]


def test_tasks_endpoint(client):
    tasks = client.get("/tasks").json()
    assert [(t["id"], t["difficulty"], t["max_attempts"], t["max_steps"], t["tests_total"]) for t in tasks[:3]] == [
        ("easy", "easy", 5, 8, 8),
        ("medium", "medium", 7, 15, 10),
        ("hard", "hard", 10, 25, 8),
    ]
    assert [t["id"] for t in tasks] == CATALOG.ids()
    assert all(t["name"] and t["description"] for t in tasks)
    assert tasks[0]["action_types"] == ["submit_fix", "query_context", "give_up"]
    assert [t["function"]["name"] for t in tasks[0]["tools"]] == ["submit_fix", "query_context", "give_up"]


def test_health_reports_the_isolation_layers(client):
    body = client.get("/health").json()
    assert body["status"] == "healthy"
    assert body["isolation"]["tier"].startswith("namespaces+landlock+seccomp")
    assert body["isolation"]["layers"]["seccomp"]["active"] is True
    assert body["isolation"]["layers"]["landlock"]["active"] is True
    assert body["isolation"]["layers"]["network_namespace"]["active"] is True


def test_schema_and_metadata(client):
    schema = client.get("/schema").json()
    assert {"action", "observation", "state"} <= set(schema)
    assert "hypothesis" in schema["action"]["properties"]
    assert "grader_score" in schema["observation"]["properties"]
    assert "attempts_used" in schema["state"]["properties"]
    meta = client.get("/metadata").json()
    assert meta["name"] == "agentdebugger-env" and meta["description"]


def test_mcp_answers_json_rpc(client):
    body = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).json()
    assert body["jsonrpc"] == "2.0" and body["id"] == 1


def test_a_whole_episode_over_plain_http(client):
    start = client.post("/reset", json={"task_id": "medium", "seed": 1})
    assert start.status_code == 200
    obs = start.json()["observation"]
    episode = obs["episode_id"]
    assert (obs["tests_passed"], obs["tests_total"]) == (6, 10)
    step = client.post("/step", json={"action": {"action_type": "query_context", "query_type": "function_signature", "query_target": "hash_password"}, "episode_id": episode})
    assert step.status_code == 200 and step.json()["reward"] == 0.0
    assert step.json()["observation"]["query_result"].startswith("def hash_password(password):")
    done = client.post("/step", json={"action": submit(GOLD["medium"], GOOD_HYPOTHESIS["medium"]), "episode_id": episode}).json()
    assert done["done"] is True and done["reward"] == 0.571429
    assert done["observation"]["grader_score"] == round(0.6 + 0.2 * 6 / 7 + 0.15 + 0.05, 6)
    state = client.get("/state", params={"episode_id": episode}).json()
    assert (state["episode_id"], state["step_count"], state["solved"], state["attempts_used"]) == (episode, 2, True, 1)


NO_EPISODE_NAMED = (
    "this request names no episode; an episode is reached only by its own client, in one of three ways: the episode_id "
    'from /reset\'s observation (in the /step body: {"action": {...}, "episode_id": "..."}; on /state: ?episode_id=...), '
    "the adbg_episode cookie /reset set (keep cookies: curl -b/-c, requests.Session, httpx.Client), or a session: a "
    "WebSocket /ws connection, or an OpenEnv MCP session (POST /mcp openenv/session/create with the reset's arguments as "
    "params, then its session_id in the params of tools/list and tools/call)"
)


def test_a_request_naming_no_episode_reaches_none_not_another_client_s(app):
    """Issue 33: an anonymous /state read a victim's code and hypotheses, and its give_up ended the victim's episode."""
    with TestClient(app) as victim, TestClient(app) as attacker:
        episode = victim.post("/reset", json={"task_id": "hard", "seed": 2}).json()["observation"]["episode_id"]
        r = attacker.get("/state")
        assert (r.status_code, r.json()) == (400, {"detail": NO_EPISODE_NAMED})
        r = attacker.post("/step", json={"action": {"action_type": "give_up"}})
        assert r.status_code == 200 and r.json()["done"] is True
        assert r.json()["observation"]["error"] == NO_EPISODE_NAMED and r.json()["observation"]["episode_id"] != episode
        query = {"action_type": "query_context", "query_type": "test_details", "query_target": "test_starts_at_zero"}
        obs = victim.post("/step", json={"action": query}).json()["observation"]
        assert (obs["episode_id"], obs["step_number"], obs["error"]) == (episode, 1, None)
        assert victim.get("/state").json()["step_count"] == 1
    assert 'adbg_refusals_total{reason="no_episode_named"}' in TestClient(app).get("/metrics").text


def test_single_user_mode_is_opt_in_and_reported(runtime):
    with TestClient(build_app(runtime=runtime, settings=Settings(single_user=True))) as client:
        assert client.get("/health").json()["single_user"] is True
        client.post("/reset", json={"task_id": "easy", "seed": 2})
        latest = client.post("/reset", json={"task_id": "hard", "seed": 2}).json()["observation"]["episode_id"]
        client.cookies.clear()  # as curl without a cookie jar
        obs = client.post("/step", json={"action": {"action_type": "give_up"}}).json()["observation"]
        assert (obs["episode_id"], obs["task_id"]) == (latest, "hard")
        assert client.get("/state").json()["episode_id"] == latest
    assert Settings().single_user is False


def test_clients_that_keep_cookies_need_no_episode_id(live_server):
    """16 clients at once, each a cookie-keeping httpx.Client sending no episode_id: every reset, step and state
    of each names its own episode (with the server-wide "latest" fallback, 8 such clients landed on 2 episodes)."""

    def play(i: int) -> tuple[set[str], int, bool, int]:
        with httpx.Client(base_url=live_server.url, timeout=60) as http:
            reset = http.post("/reset", json={"task_id": ("easy", "medium", "hard")[i % 3], "seed": i})
            episode = reset.json()["observation"]["episode_id"]
            assert reset.cookies["adbg_episode"] == episode
            named = {episode}
            query = {"action_type": "query_context", "query_type": "test_details", "query_target": "x"}
            for _ in range(3):
                named.add(http.post("/step", json={"action": query}).json()["observation"]["episode_id"])
                named.add(http.get("/state").json()["episode_id"])
            done = http.post("/step", json={"action": {"action_type": "give_up"}}).json()
            named.add(done["observation"]["episode_id"])
            state = http.get("/state").json()
            named.add(state["episode_id"])
            return named, state["step_count"], done["done"], len(named)

    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(play, range(16)))
    assert [(steps, done, count) for _, steps, done, count in results] == [(4, True, 1)] * 16
    assert len(set().union(*(named for named, *_ in results))) == 16


def test_the_body_s_episode_id_comes_before_the_cookie_and_a_stale_cookie_is_an_error(client):
    mine = client.post("/reset", json={"task_id": "easy", "seed": 5}).json()["observation"]["episode_id"]
    other = client.post("/reset", json={"task_id": "medium", "seed": 5}).json()["observation"]["episode_id"]
    assert client.cookies["adbg_episode"] == other
    obs = client.post("/step", json={"action": {"action_type": "give_up"}, "episode_id": mine}).json()["observation"]
    assert (obs["episode_id"], obs["task_id"]) == (mine, "easy")
    assert client.get("/state", params={"episode_id": mine}).json()["done"] is True
    assert client.get("/state").json()["episode_id"] == other  # the cookie
    client.cookies.clear()
    client.cookies.set("adbg_episode", "gone-episode")
    expected = "the episode your adbg_episode cookie names ('gone-episode') is unknown or expired; call POST /reset to start an episode"
    r = client.post("/step", json={"action": {"action_type": "give_up"}})
    assert r.status_code == 200 and r.json()["observation"]["error"] == expected
    r = client.get("/state")
    assert (r.status_code, r.json()) == (404, {"detail": expected})
    r = client.get("/state", params={"episode_id": "no-such-episode"})
    assert (r.status_code, r.json()) == (404, {"detail": "unknown or expired episode_id 'no-such-episode'; call POST /reset to start an episode"})


def test_an_episode_id_in_use_is_not_taken_over(client):
    client.post("/reset", json={"task_id": "easy", "episode_id": "taken-episode"})
    r = client.post("/reset", json={"task_id": "hard", "episode_id": "taken-episode"})
    assert r.status_code == 200
    assert r.json()["observation"]["error"] == "episode_id 'taken-episode' is already in use by an open episode; choose another or omit it"
    assert client.get("/state", params={"episode_id": "taken-episode"}).json()["task_id"] == "easy"


def test_an_episode_id_a_cookie_cannot_hold_is_quoted(client):
    obs = client.post("/reset", json={"task_id": "easy", "episode_id": "a b;c=d,é"}).json()["observation"]
    assert obs["episode_id"] == "a b;c=d,é"
    assert client.post("/step", json={"action": {"action_type": "give_up"}}).json()["observation"]["episode_id"] == "a b;c=d,é"


def test_reset_honours_a_given_episode_id(client):
    obs = client.post("/reset", json={"task_id": "easy", "episode_id": "my-episode-1"}).json()["observation"]
    assert obs["episode_id"] == "my-episode-1"
    step = client.post("/step", json={"action": {"action_type": "give_up"}, "episode_id": "my-episode-1"}).json()
    assert step["observation"]["step_number"] == 1


def test_unknown_episode_and_unknown_task_are_clear_200_errors(client):
    r = client.post("/step", json={"action": {"action_type": "give_up"}, "episode_id": "no-such-episode"})
    assert r.status_code == 200
    assert r.json()["observation"]["error"] == "unknown or expired episode_id 'no-such-episode'; call POST /reset to start an episode"
    r = client.post("/reset", json={"task_id": "impossible"})
    assert r.status_code == 200
    assert r.json()["observation"]["error"] == "unknown task_id 'impossible'; available: " + UNKNOWN_TASK_TAIL
    # A procedural id past its split's range is unknown too (it was a 500).
    r = client.post("/reset", json={"task_id": "proc-easy-train-123456"})
    assert r.status_code == 200 and r.json()["observation"]["error"].startswith("unknown task_id 'proc-easy-train-123456'; available: ")
    assert client.get("/tasks/proc-easy-train-123456").status_code == 404


def test_agent_mistakes_are_200_with_the_error_and_count_a_step(client):
    episode = client.post("/reset", json={"task_id": "easy"}).json()["observation"]["episode_id"]
    r = client.post("/step", json={"action": {"action_type": "fix_it_please"}, "episode_id": episode})
    assert r.status_code == 200
    obs = r.json()["observation"]
    assert obs["error"] == "unknown action_type 'fix_it_please'; expected one of: submit_fix, query_context, give_up"
    assert obs["info"] == {"error": obs["error"]} and obs["step_number"] == 1
    r = client.post("/step", json={"action": {"action_type": "submit_fix", "patch": "x"}, "episode_id": episode})
    assert r.json()["observation"]["error"] == "unknown field(s) 'patch' for submit_fix; its fields are: fixed_code, hypothesis, suspect, mechanism"


def test_many_http_episodes_at_once_never_touch_each_other(client):
    def play(i: int) -> tuple:
        task_id = ("easy", "medium", "hard")[i % 3]
        episode = client.post("/reset", json={"task_id": task_id, "seed": i}).json()["observation"]["episode_id"]
        action = submit(GOLD[task_id], GOOD_HYPOTHESIS[task_id]) if i % 2 else {"action_type": "give_up"}
        body = client.post("/step", json={"action": action, "episode_id": episode}).json()
        obs = body["observation"]
        state = client.get("/state", params={"episode_id": episode}).json()
        good_score = obs["grader_score"] >= 0.96 if i % 2 else obs["grader_score"] == 0.0
        return obs["episode_id"] == episode, obs["task_id"] == task_id, obs["step_number"], state["step_count"], body["done"], good_score

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(play, range(24)))
    assert results == [(True, True, 1, 1, True, True)] * 24


@pytest.mark.parametrize(
    "body, status, detail",
    [
        (b'{"action": {"action_type": "give_up", "final_diagnosis": "\\ud800"}}', 400, "the JSON body contains a lone surrogate (\\ud800-\\udfff), which is not valid text"),
        (b'{"action": {"action_type": "give_up", "final_diagnosis": "\xff\xfe"}}', 400, "the request body is not valid UTF-8"),
        (b"[" * 100000 + b"]" * 100000, 400, "the JSON body is nested deeper than 64 levels"),
        (b'{"action": ' + b'{"a": ' * 70 + b"1" + b"}" * 70 + b"}", 400, "the JSON body is nested deeper than 64 levels"),
        (b'{"action": {"action_type": ', 400, "the request body is not valid JSON: Expecting value: line 1 column 28 (char 27)"),
    ],
)
def test_malformed_bodies_get_a_clear_4xx(client, body, status, detail):
    r = client.post("/step", content=body, headers={"content-type": "application/json"})
    assert r.status_code == status
    assert r.json() == {"detail": detail}
    assert client.get("/health").status_code == 200


@pytest.mark.parametrize(
    "path, body, detail",
    [
        # numbers JSON does not have: Python's parser took them, and the 422 answer could not be encoded (a 500)
        ("/reset", b'{"task_id": "easy", "seed": NaN}', "the JSON body holds NaN, which is not a JSON number"),
        ("/reset", b'{"task_id": "easy", "seed": Infinity}', "the JSON body holds Infinity, which is not a JSON number"),
        ("/reset", b'{"task_id": "easy", "seed": -Infinity}', "the JSON body holds -Infinity, which is not a JSON number"),
        ("/reset", b'{"task_id": "easy", "seed": 1e400}', "the JSON body holds the number 1e400, too large for a float"),
        ("/step", b'{"action": {"action_type": "give_up"}, "timeout_s": NaN}', "the JSON body holds NaN, which is not a JSON number"),
    ],
)
def test_numbers_json_does_not_have_get_a_clear_400(client, path, body, detail):
    r = client.post(path, content=body, headers={"content-type": "application/json"})
    assert (r.status_code, r.json()) == (400, {"detail": detail})


@pytest.mark.parametrize("profile", [["pdb"], {"a": 1}, 5])
def test_a_profile_that_is_not_a_string_is_an_agent_mistake(client, profile):
    r = client.post("/reset", json={"task_id": "easy", "profile": profile})
    assert r.status_code == 200
    error = r.json()["observation"]["error"]
    assert error.startswith(f"reset: 'profile' must be a string naming a profile, not {type(profile).__name__}; available: default, ")


@pytest.mark.parametrize("headers, shown", [({}, "missing"), ({"content-type": "text/plain"}, "'text/plain'")])
def test_a_body_without_a_json_content_type_is_told_so(client, headers, shown):
    r = client.post("/reset", content=b'{"task_id": "easy"}', headers=headers)
    assert r.status_code == 415
    assert r.json() == {"detail": f"the request body must be JSON sent with content-type: application/json (this request's content-type: {shown})"}


def test_a_huge_body_is_refused_before_it_is_read(client):
    body = json.dumps({"action": {"action_type": "submit_fix", "fixed_code": "x" * (2 * 1024 * 1024), "hypothesis": "h"}})
    r = client.post("/step", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert r.json() == {"detail": f"request body of {len(body)} bytes exceeds the limit of 1048576 bytes"}


def test_wrong_json_types_are_422(client):
    r = client.post("/step", json={"action": {"action_type": "submit_fix", "fixed_code": 12, "hypothesis": "h"}})
    assert r.status_code == 422


def test_oversized_code_is_an_agent_mistake_not_an_http_error(client):
    episode = client.post("/reset", json={"task_id": "easy"}).json()["observation"]["episode_id"]
    big = "x = 1\n" * 12000  # 72 KB: under the body cap, over the code cap
    obs = client.post("/step", json={"action": submit(big, "h"), "episode_id": episode}).json()["observation"]
    assert obs["current_error_output"].startswith("Not run: the code is 72000 bytes; the limit is 65536 bytes")


def test_openenv_task_discovery_routes(client):
    tested, trained, validated = CATALOG.ids("test"), CATALOG.ids("train"), CATALOG.ids("validation")
    race = {split: [t for t, served in RACE.listed() if served == split] for split in ("train", "validation", "test")}
    assert trained == ["proc-easy-train-0", "proc-medium-train-0", "proc-hard-train-0", "proc-extreme-train-0", *race["train"]]
    assert validated == race["validation"] and len(validated) == 30
    assert tested == [t for t in CATALOG.ids() if t not in trained + validated] and tested[:3] == ["easy", "medium", "hard"]
    assert len(tested) == 26 + 78
    assert client.get("/agentdebugger-env/splits").json() == [
        {"name": "train", "type": "train", "num_tasks": 124},
        {"name": "validation", "type": "validation", "num_tasks": 30},
        {"name": "test", "type": "test", "num_tasks": 104},
    ]
    listed = client.post("/agentdebugger-env/tasks", json={"split": "test"}).json()
    assert [t["id"] for t in listed["tasks"]] == tested and listed["env_name"] == "agentdebugger-env"
    assert {t["split"] for t in listed["tasks"]} == {"test"} and "tools" not in listed["tasks"][0]  # summaries: /tasks adds the tools
    assert [t["id"] for t in client.post("/agentdebugger-env/tasks", json={"split": "train"}).json()["tasks"]] == trained
    assert client.post("/agentdebugger-env/num_tasks", json={"split": "test"}).json() == {"num_tasks": 104}
    assert client.post("/agentdebugger-env/task", json={"split": "test", "index": 2}).json()["task"]["id"] == "hard"
    assert client.post("/agentdebugger-env/task", json={"split": "train", "index": 3}).json()["task"]["id"] == "proc-extreme-train-0"
    past = client.post("/agentdebugger-env/task", json={"split": "test", "index": 104})
    assert (past.status_code, past.json()) == (400, {"detail": "task index 104 is out of range: the 'test' split has 104 tasks (0-103)"})
    assert client.post("/agentdebugger-env/task", json={"split": "test", "index": -1}).status_code == 400
    assert client.post("/agentdebugger-env/task", json={"split": "validation", "index": 0}).json()["task"]["id"] == race["validation"][0]
    assert [t["id"] for t in client.post("/agentdebugger-env/task_range", json={"split": "test", "start": 1, "stop": 3}).json()["tasks"]] == ["medium", "hard"]
    # a split the server does not know has no task (the library's convention; /tasks refuses it: test_tasks_filters)
    assert client.post("/agentdebugger-env/num_tasks", json={"split": "dev"}).json() == {"num_tasks": 0}
    assert client.post("/agentdebugger-env/tasks", json={"split": "dev"}).json()["tasks"] == []
    assert client.post("/agentdebugger-env/tasks", json={"split": "test", "library": "attrs"}).status_code == 422  # the library's request model
    assert client.get("/some-other-env/splits").status_code == 404
    assert client.post("/some-other-env/num_tasks", json={"split": "test"}).status_code == 404


def test_reset_by_task_index(client):
    def reset(**body: object) -> dict:
        return client.post("/reset", json=body).json()["observation"]

    assert reset(index=1, seed=1)["task_id"] == "medium"  # no split: the test split's, as when it was the only one
    assert reset(split="test", index=1, seed=1)["task_id"] == "medium"
    assert reset(split="train", index=1, seed=1)["task_id"] == "proc-medium-train-0"
    assert reset(split="train", task_id="proc-easy-train-7", seed=1)["task_id"] == "proc-easy-train-7"  # a generated id: its split by its id
    assert reset(index=999)["error"] == "task index 999 is out of range: the 'test' split has 104 tasks (0-103)"
    assert reset(split="validation", index=0, seed=1)["task_id"] == "race-lost-update-accounts-8"  # the race family's validation seeds
    assert reset(split="train", index=True)["error"] == "task index True is out of range: the 'train' split has 124 tasks (0-123)"
    assert reset(split="dev", index=0)["error"] == "reset: 'split' must be one of train, validation, test, not 'dev'"
    assert reset(split=["test"], index=0)["error"] == "reset: 'split' must be one of train, validation, test, not ['test']"
    assert reset(split="train", task_id="easy")["error"] == "reset: task 'easy' is in the test split, not train"
    assert reset(split="test", task_id="proc-easy-ood-3")["task_id"] == "proc-easy-ood-3"  # ood is held out with test
    assert reset(split="train")["error"] == "reset: 'split' chooses a task with 'index' (the split's index-th task, as POST /agentdebugger-env/task answers)"
