"""Profiles over the wire: listed in /tasks with their tool schemas, chosen at reset over HTTP and /ws."""

from __future__ import annotations

from openenv.core.generic_client import GenericEnvClient

from env.interface import DEBUG_TOOLS


def test_tasks_list_every_profile_with_tool_schemas(client):
    tasks = {t["id"]: t for t in client.get("/tasks").json()}
    repo = tasks["repo-pagination-off-by-one"]
    assert list(repo["profiles"]) == ["default", "bash", "pdb", "pdb_shell", "minimal", "trace"]
    pdb = repo["profiles"]["pdb"]
    assert pdb["edit_gate"] is True
    assert [t["function"]["name"] for t in pdb["tools"]] == pdb["actions"]
    assert set(DEBUG_TOOLS) <= set(pdb["actions"]) and "run_bash" not in pdb["actions"]
    start = next(t for t in pdb["tools"] if t["function"]["name"] == "debug_start")
    assert set(start["function"]["parameters"]["properties"]) == {"test", "script", "stop_at_entry"}
    assert [t["function"]["name"] for t in repo["profiles"]["minimal"]["tools"]] == ["cat", "search", "edit", "test", "finish"]
    easy = tasks["easy"]
    assert list(easy["profiles"]) == ["default", "bash", "pdb", "pdb_shell", "trace"]  # minimal needs a repository
    assert [t["function"]["name"] for t in easy["profiles"]["default"]["tools"]] == ["submit_fix", "query_context", "give_up"]
    assert "debug_start" in easy["profiles"]["pdb"]["actions"]
    overview = client.get("/").json()
    assert set(overview["profiles"]) == {"default", "bash", "pdb", "pdb_shell", "minimal", "trace"}
    assert overview["tool_aliases"]["str_replace"] == ["replace_text"]


def test_http_reset_chooses_a_profile(client):
    obs = client.post("/reset", json={"task_id": "repo-pagination-off-by-one", "seed": 1, "profile": "minimal"}).json()["observation"]
    assert obs["available_actions"] == ["cat", "search", "edit", "test", "finish"]
    assert obs["info"]["interface"] == {"profile": "minimal", "edit_gate": False, "unlocked": True, "relay": 1}
    step = client.post("/step", json={"action": {"action_type": "cat", "path": "catalog/api.py", "end_line": 1}, "episode_id": obs["episode_id"]})
    assert step.status_code == 200
    assert step.json()["observation"]["tool_output"].startswith("1 | ")
    refused = client.post("/step", json={"action": {"action_type": "view_file", "path": "catalog/api.py"}, "episode_id": obs["episode_id"]}).json()
    assert refused["observation"]["error"] == "unknown action_type 'view_file' for the 'minimal' profile; expected one of: cat, search, edit, test, finish"


def test_http_reset_with_a_bad_profile_is_a_clear_error(client):
    for body, message in (
        ({"task_id": "easy", "profile": "gdb"}, "reset: unknown profile 'gdb'; available: default, bash, pdb, pdb_shell, minimal, trace"),
        ({"task_id": "easy", "profile": "minimal"}, "reset: profile 'minimal' works on repository tasks; classic tasks accept: default, bash, pdb, pdb_shell, trace"),
        ({"task_id": "easy", "profile": "pdb", "edit_gate": "yes"}, "reset: 'edit_gate' must be true or false"),
        ({"task_id": "easy", "aliases": ["x"]}, "reset: aliases must be an object mapping a name to a tool name or {'tools': [...], 'args': {...}}"),
    ):
        response = client.post("/reset", json=body)
        assert response.status_code == 200
        assert response.json()["observation"]["error"] == message


def test_a_debugging_session_over_ws(live_server):
    with GenericEnvClient(base_url=live_server.url) as env:
        first = env.reset(task_id="repo-pagination-off-by-one", seed=1, profile="pdb").observation
        assert "debug_start" in first["available_actions"]
        obs = env.step({"action_type": "debug_start", "test": "tests/test_api.py::test_second_page_links_to_the_last"}).observation
        assert obs["tool_result"]["frame"] == {"file": "tests/test_api.py", "line": 38, "function": "test_second_page_links_to_the_last"}
        obs = env.step({"action_type": "debug_step"}).observation
        assert obs["tool_result"]["frame"] == {"file": "catalog/api.py", "line": 28, "function": "list_products"}
        assert obs["tool_result"]["locals"]["values"]["params"] == {"type": "dict", "repr": "{'page': '2', 'per_page': '10'}"}
        obs = env.step({"action_type": "str_replace", "path": "catalog/api.py", "old_str": "no such text", "new_str": "y"}).observation
        assert obs["info"]["call"] == {"tool": "replace_text", "aliased_from": "str_replace"}
        assert obs["error"] == "old_text was not found in catalog/api.py; view the file and copy the exact text (whitespace matters)"
