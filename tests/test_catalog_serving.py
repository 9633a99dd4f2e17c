"""Splits and a built catalog (issue 48, item 5): every listed task in one of train, validation and test; GET /tasks's
filters; ENV_CATALOG served beside the built-in tasks and refused whole when any part of it is wrong; and a catalog's
tasks played over HTTP, /ws and MCP with the repository tools, a trace report and the debugger."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from env.authoring.oracle import oracle_actions
from env.config import Settings
from env.families.base import TASKS_DIR
from env.families.catalog import TaskCatalog
from env.families.catalog_dir import CatalogError, load_catalog_dir
from env.families.race.family import RACE
from env.runtime import Runtime
from env.server.app import build_app
from env.server.environment import DebugEnvironment
from tests.helpers import CATALOG

REPO = TASKS_DIR / "repo"
# The catalog the served tests build: (id, bundled folder copied, library, source, split).
BUILT = [
    ("acme-mined-1", "repo-slice-window", "acme", "mined", "test"),
    ("acme-synth-1", "repo-mutable-default", "acme", "synthesized", "test"),
    ("zeta-synth-1", "repo-pagination-off-by-one", "zeta", "synthesized", "train"),
]


def entry(task_id: str, library: str = "acme", source: str = "mined", split: str = "test", difficulty: str = "easy") -> dict[str, str]:
    return {"id": task_id, "library": library, "source": source, "split": split, "difficulty": difficulty}


def build(directory: Path, tasks: list[tuple[str, str, str, str, str]], index: Any = None) -> Path:
    """A catalog in ``directory``: each bundled folder copied under its new id (its task.json's id rewritten), and the
    index (``index`` instead, as given, when not None)."""
    directory.mkdir(parents=True, exist_ok=True)
    entries = []
    for task_id, source_folder, library, source, split in tasks:
        folder = directory / task_id
        shutil.copytree(REPO / source_folder, folder)
        data = json.loads((folder / "task.json").read_text())
        (folder / "task.json").write_text(json.dumps({**data, "id": task_id}))
        entries.append(entry(task_id, library, source, split, data["difficulty"]))
    written = {"tasks": entries} if index is None else index
    (directory / "catalog.json").write_text(written if isinstance(written, str) else json.dumps(written))
    return directory


# -- the built-in tasks in their splits, and GET /tasks's filters ----------------------------------------------------


def race(split: str) -> list[str]:
    """The race family's listed ids served in ``split`` (tests/test_race_family.py checks the family's own splits)."""
    return [task_id for task_id, served in RACE.listed() if served == split]


def test_every_built_in_task_is_in_one_split():
    assert CATALOG.ids("validation") == race("validation") and len(race("validation")) == 30
    assert CATALOG.ids("train") == ["proc-easy-train-0", "proc-medium-train-0", "proc-hard-train-0", "proc-extreme-train-0", *race("train")]
    tested = CATALOG.ids("test")
    assert tested[:3] == ["easy", "medium", "hard"] and sorted(CATALOG.ids()) == sorted(CATALOG.ids("train") + CATALOG.ids("validation") + tested)
    assert tested[-4 - len(race("test")) :] == ["proc-easy-ood-0", "proc-medium-ood-0", "proc-hard-ood-0", "proc-extreme-ood-0", *race("test")]
    assert [t for t in tested if t.startswith("repo-")] == sorted(p.name for p in REPO.iterdir())
    # a generated id serves in the split its id names
    made = CATALOG.get("proc-easy-ood-5")
    assert (CATALOG.summary(made)["split"], made.summary()["split"]) == ("test", "ood")
    assert CATALOG.summary(CATALOG.get("proc-easy-train-5"))["split"] == "train"
    assert CATALOG.summary(CATALOG.get("easy")) == {**CATALOG.get("easy").summary(), "split": "test"}  # no library, no source


def test_tasks_filters(client):
    def ids(**query: str) -> list[str]:
        answer = client.get("/tasks", params=query)
        assert answer.status_code == 200, answer.text
        return [t["id"] for t in answer.json()]

    every = client.get("/tasks").json()
    assert [t["id"] for t in every] == CATALOG.ids() and {t["split"] for t in every} == {"train", "validation", "test"}
    assert not {"library", "source"} & {key for t in every for key in t}  # only a built catalog's tasks have them
    assert ids(split="train") == CATALOG.ids("train") and ids(split="test") == CATALOG.ids("test") and ids(split="validation") == race("validation")
    assert ids(family="classic") == ["easy", "medium", "hard"]
    assert ids(family="procedural", difficulty="hard") == [
        "proc-hard-test-0", "proc-extreme-test-0", "proc-hard-train-0", "proc-extreme-train-0", "proc-hard-ood-0", "proc-extreme-ood-0",
    ]  # fmt: skip
    assert ids(family="procedural", split="train", difficulty="easy") == ["proc-easy-train-0"]
    assert ids(difficulty="easy", family="repo") == [
        t.id for t in CATALOG.all("test") if t.family == "repo" and t.summary()["difficulty"] == "easy"
    ]
    assert ids(source="mined") == [] and ids(source="synthesized", split="train") == []  # known values no built-in task has
    refused = {
        "split=trian": "unknown split 'trian'; one of: train, validation, test",
        "source=scraped": "unknown source 'scraped'; one of: mined, synthesized",
        "difficulty=extreme": "unknown difficulty 'extreme'; one of: easy, medium, hard",
        "family=calc": "unknown family 'calc'; families: classic, repo, procedural, race",
        "library=attrs": "no library 'attrs' is served here: this server serves no built catalog (ENV_CATALOG is unset)",
        "libary=attrs": "/tasks filters by family, library, source, difficulty, split; 'libary' is none of them",
        "split=test&split=train": "the filter 'split' is given twice; give each filter once",
        "split=": "unknown split ''; one of: train, validation, test",
        "split=%ED%A0%80": "unknown split '\ufffd\ufffd\ufffd'; one of: train, validation, test",  # not UTF-8: never a 500
    }
    for query, detail in refused.items():
        answer = client.get(f"/tasks?{query}")
        assert (answer.status_code, answer.json()) == (400, {"detail": detail}), query


def test_an_unknown_task_s_error_names_a_bounded_list(runtime):
    catalog = TaskCatalog([CATALOG.get("easy")], on_request=[(f"proc-easy-train-{i}", "procedural", "train") for i in range(70)])
    error = DebugEnvironment(Runtime(catalog, runtime.sandbox, workers=1)).reset(task_id="nope").error
    assert error is not None and error.startswith("unknown task_id 'nope'; available: easy, proc-easy-train-0, ")
    assert ", proc-easy-train-58 and 11 more (GET /tasks lists them), or any proc-<" in error


# -- ENV_CATALOG: refused whole, naming the file and the fault --------------------------------------------------------


def refusal(directory: Path) -> str:
    with pytest.raises(CatalogError) as refused:
        load_catalog_dir(directory)
    return str(refused.value)


def test_a_catalog_without_its_index_or_with_a_malformed_one_is_refused(tmp_path):
    index = tmp_path / "cat" / "catalog.json"
    assert refusal(tmp_path / "none") == (
        f"ENV_CATALOG={tmp_path / 'none'}: no such directory (a built catalog's directory: its task folders and catalog.json)"
    )
    (tmp_path / "cat").mkdir()
    assert (
        refusal(tmp_path / "cat")
        == f"{index}: missing; a built catalog's directory holds its index (python -m env.authoring catalog build writes it)"
    )
    cases = {
        "{": "malformed: the file: Invalid JSON: EOF while parsing an object at line 1 column 1",
        "[]": "malformed: the file: Input should be an object (given: '[]')",
        '{"tasks": []}': "lists no task; a catalog that serves nothing is a build that went wrong",
        json.dumps(
            {"tasks": [entry("a-1", split="dev")]}
        ): "malformed: tasks.0.split: Input should be 'train', 'validation' or 'test' (given: 'dev')",
        json.dumps(
            {"tasks": [entry("a-1", source="scraped")]}
        ): "malformed: tasks.0.source: Input should be 'mined' or 'synthesized' (given: 'scraped')",
        json.dumps({"tasks": [{**entry("a-1"), "sha": "x"}]}): "malformed: tasks.0.sha: Extra inputs are not permitted (given: 'x')",
        json.dumps(
            {"tasks": [{"id": "a-1"}]}
        ): "malformed: tasks.0.library: Field required; tasks.0.source: Field required; tasks.0.split: Field required; and 1 more",
        json.dumps({"tasks": [entry("../repo-slice-window")]}): (
            "malformed: tasks.0.id: String should match pattern '^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$' (given: '../repo-slice-window')"
        ),
        json.dumps({"tasks": [entry("a-1"), entry("b-1"), entry("a-1")]}): "task ids listed twice: a-1",
        json.dumps(
            {"tasks": [entry("a-1", "acme", split="test"), entry("b-1", "zeta", split="train"), entry("c-1", "acme", split="train")]}
        ): (
            "the library 'acme' is in two splits ('a-1' in test, 'c-1' in train); a library's tasks are all in one split, or its code would be "
            "trained on and tested"
        ),
        json.dumps({"tasks": [entry("a-1")]}): f"lists task 'a-1', but {tmp_path / 'cat' / 'a-1' / 'task.json'} does not exist",
    }
    for text, fault in cases.items():
        index.write_text(text)
        assert refusal(tmp_path / "cat") == f"{index}: {fault}", text


def test_a_folder_that_disagrees_with_the_index_or_cannot_load_is_refused(tmp_path):
    directory = build(tmp_path / "cat", [BUILT[0]])
    index, task_json = directory / "catalog.json", directory / "acme-mined-1" / "task.json"
    data = json.loads(task_json.read_text())
    assert [task.id for task, _ in load_catalog_dir(directory)] == ["acme-mined-1"]

    index.write_text(json.dumps({"tasks": [entry("acme-mined-1", difficulty="hard")]}))
    assert refusal(directory) == f"{index}: task 'acme-mined-1' is hard in the index but easy in {task_json}"
    index.write_text(json.dumps({"tasks": [entry("acme-mined-1")]}))
    faults = {
        "id": ("repo-slice-window", f"{task_json} gives the id 'repo-slice-window', not the folder's and the index's 'acme-mined-1'"),
        "split": ("train", f"{task_json} gives the split 'train', the index 'test'"),
        "library": ("zeta", f"{task_json} gives the library 'zeta', the index 'acme'"),
        "source": ("synthesized", f"{task_json} gives the source 'synthesized', the index 'mined'"),
    }
    for key, (value, fault) in faults.items():
        task_json.write_text(json.dumps({**data, key: value}))
        assert refusal(directory) == f"{index}: task 'acme-mined-1' cannot be served: {fault}", key
    task_json.write_text(json.dumps({**data, "split": "test", "library": "acme", "source": "mined"}))  # stated and agreeing: served
    assert [task.id for task, _ in load_catalog_dir(directory)] == ["acme-mined-1"]

    (directory / "acme-mined-1" / "gold.patch").write_text("--- a/nowhere.py\n+++ b/nowhere.py\n@@ -1 +1 @@\n-x\n+y\n")
    assert refusal(directory).startswith(f"{index}: task 'acme-mined-1' cannot be served: {directory / 'acme-mined-1'}: gold.patch: ")

    shutil.copytree(TASKS_DIR / "classic" / "easy", directory / "easy-copy")
    classic = json.loads((directory / "easy-copy" / "task.json").read_text())
    (directory / "easy-copy" / "task.json").write_text(json.dumps({**classic, "id": "easy-copy"}))
    index.write_text(json.dumps({"tasks": [entry("easy-copy")]}))
    assert refusal(directory) == f"{index}: task 'easy-copy' is a classic task; a built catalog serves repository tasks"


def test_the_server_refuses_to_start_on_a_wrong_catalog(tmp_path, monkeypatch):
    directory = build(tmp_path / "cat", [BUILT[0]])
    monkeypatch.setenv("ENV_CATALOG", str(directory))
    on_request = 4 + len(race("test"))  # the procedural ood ids and the race family's, listed after the built ones
    assert TaskCatalog.from_env().ids("test")[-on_request - 1 :] == ["acme-mined-1", *CATALOG.ids("test")[-on_request:]]
    (directory / "catalog.json").write_text(json.dumps({"tasks": [entry("acme-mined-1"), entry("repo-slice-window")]}))
    shutil.copytree(REPO / "repo-slice-window", directory / "repo-slice-window")
    with pytest.raises(CatalogError) as refused:
        build_app(settings=Settings())  # what `python -m env.server` builds at start
    assert str(refused.value) == (
        f"{directory / 'catalog.json'}: task 'repo-slice-window' is served already (a built-in task or one of ENV_TASK_DIRS); every task id is served once"
    )


# -- a built catalog served, and played over every wire --------------------------------------------------------------


@pytest.fixture(scope="module")
def served(runtime: Runtime, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    directory = build(tmp_path_factory.mktemp("catalog") / "built", BUILT)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ENV_CATALOG", str(directory))
        catalog = TaskCatalog.from_env()
    own = Runtime(catalog, runtime.sandbox, workers=8, secret=runtime.secret)
    with TestClient(build_app(runtime=own, settings=Settings(sessions_per_client=64))) as client:
        yield client


def test_a_built_catalog_is_listed_in_its_libraries_splits(served):
    splits = served.get("/agentdebugger-env/splits").json()
    assert splits == [
        {"name": "train", "type": "train", "num_tasks": 5 + len(race("train"))},
        {"name": "validation", "type": "validation", "num_tasks": len(race("validation"))},
        {"name": "test", "type": "test", "num_tasks": 28 + len(race("test"))},
    ]
    train = served.post("/agentdebugger-env/tasks", json={"split": "train"}).json()["tasks"]
    assert [t["id"] for t in train] == ["zeta-synth-1", *CATALOG.ids("train")]  # built at start, before the ids listed on request
    assert {k: train[0][k] for k in ("split", "library", "source", "difficulty", "family")} == {
        "split": "train", "library": "zeta", "source": "synthesized", "difficulty": "easy", "family": "repo",
    }  # fmt: skip

    def ids(**query: str) -> list[str]:
        return [t["id"] for t in served.get("/tasks", params=query).json()]

    assert ids(library="acme") == ["acme-mined-1", "acme-synth-1"]
    assert ids(source="mined") == ["acme-mined-1"] and ids(source="synthesized") == ["acme-synth-1", "zeta-synth-1"]
    assert ids(library="acme", split="train") == [] and ids(library="zeta", split="train", difficulty="easy", family="repo") == [
        "zeta-synth-1"
    ]
    entry = served.get("/tasks", params={"library": "acme", "source": "mined"}).json()[0]
    assert entry["tools"] and "debug_start" in [t["function"]["name"] for t in entry["profiles"]["pdb"]["tools"]]
    assert served.get("/tasks/acme-synth-1").json()["source"] == "synthesized"
    refused = served.get("/tasks", params={"library": "acm"})
    assert (refused.status_code, refused.json()) == (400, {"detail": "no library 'acm' is served here; served: acme, zeta"})


def test_a_catalog_task_plays_over_http(served):
    task = served.app.state.runtime.catalog.get("acme-mined-1")
    first = served.post("/reset", json={"split": "test", "index": 22, "seed": 1}).json()["observation"]  # after the 22 built-in ones
    assert (first["task_id"], first["error"]) == ("acme-mined-1", None)
    episode = first["episode_id"]
    ran = served.post("/step", json={"action": {"action_type": "run_tests"}, "episode_id": episode}).json()["observation"]
    assert ran["error"] is None and ran["tests_passed"] < ran["tests_total"]
    for action in oracle_actions(task):
        last = served.post("/step", json={"action": action, "episode_id": episode}).json()
        assert last["observation"]["error"] is None, (action["action_type"], last["observation"]["error"])
    assert last["done"] is True and last["observation"]["grader_score"] >= 0.9


def test_a_catalog_task_plays_over_ws_with_the_debugger(served):
    task = served.app.state.runtime.catalog.get("zeta-synth-1")
    test = task.visible_fail_to_pass[0]
    with served.websocket_connect("/ws") as ws:

        def send(kind: str, data: dict[str, Any]) -> dict[str, Any]:
            ws.send_json({"type": kind, "data": data})
            answer = ws.receive_json()["data"]
            assert answer["observation"]["error"] is None, answer["observation"]["error"]
            return answer

        first = send("reset", {"split": "train", "index": 0, "seed": 2, "profile": "pdb"})["observation"]
        assert first["task_id"] == "zeta-synth-1" and "debug_start" in first["available_actions"]
        started = send("step", {"action_type": "debug_start", "test": test})["observation"]
        assert started["tool_result"]["frame"]["file"] == test.split("::")[0]
        where = send("step", {"action_type": "debug_where"})["observation"]
        assert where["tool_result"]["stack"][-1]["function"] == test.split("::")[-1]
        for action in oracle_actions(task):
            last = send("step", action)
    assert last["done"] is True and last["observation"]["grader_score"] >= 0.9


def test_a_catalog_task_plays_over_mcp_with_a_trace_report(served):
    task = served.app.state.runtime.catalog.get("acme-synth-1")

    def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
        answer = served.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).json()
        assert "error" not in answer or answer["error"] is None, answer
        return answer["result"]

    made = rpc("openenv/session/create", {"task_id": "acme-synth-1", "seed": 3, "profile": "trace"})
    session = made["session_id"]
    assert made["observation"]["task_id"] == "acme-synth-1" and "trace_report" in [
        t["name"] for t in rpc("tools/list", {"session_id": session})["tools"]
    ]
    traced = rpc("tools/call", {"session_id": session, "name": "trace_report", "arguments": {"test": task.visible_fail_to_pass[0]}})
    report = traced["result"]["data"]["tool_result"]["report"]
    assert traced["error"] is None and report["test"] == task.visible_fail_to_pass[0] and report["exit_code"] == 1 and report["calls"]
    for action in oracle_actions(task):
        name, arguments = action["action_type"], {k: v for k, v in action.items() if k != "action_type"}
        called = rpc("tools/call", {"session_id": session, "name": name, "arguments": arguments})
        assert called["error"] is None, (name, called["error"])
    assert called["done"] is True and called["result"]["data"]["grader_score"] >= 0.9
    assert rpc("openenv/session/close", {"session_id": session})["closed"] is True


def test_tasks_of_one_release_share_their_files_texts(tmp_path):
    # A catalog's tasks of one library hold the same files but the one the bug is in: each text is held once, however
    # many tasks hold it (630 tasks of 42 libraries: 280 MiB of file texts apart, 52 MiB shared).
    build(tmp_path, [("acme-a", "repo-slice-window", "acme", "mined", "test"), ("acme-b", "repo-slice-window", "acme", "mined", "test")])
    loaded = {task.id: task for task, _ in load_catalog_dir(tmp_path)}
    first, second = loaded["acme-a"].files, loaded["acme-b"].files
    assert first == second and first
    assert all(first[path] is second[path] for path in first)
