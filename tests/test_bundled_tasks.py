"""Every bundled repository task: proven valid (10 runs), listed, documented, and solvable over /ws."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from openenv.core.generic_client import GenericEnvClient

from env.authoring.oracle import oracle_actions
from env.authoring.validate import validate_task
from env.contract import TaskFilter
from env.project import RepoTask, source_only
from tests.helpers import CATALOG

README = Path(__file__).resolve().parents[1] / "docs" / "repository-tasks.md"  # the table, moved from README.md
REPO_TASKS = [t for t in CATALOG.select(TaskFilter(family="repo")) if isinstance(t, RepoTask)]  # the bundled ones, not generated
CATEGORIES = {"cross-module", "multi-file", "state-leak", "off-by-one", "error-handling", "datetime", "encoding", "initialisation", "ordering", "float-precision"}


def test_at_least_fifteen_tasks_span_every_category():
    assert len(REPO_TASKS) >= 15
    assert CATEGORIES <= {tag for t in REPO_TASKS for tag in t.tags}
    for task in REPO_TASKS:
        sources = [p for p in source_only(task.files) if p.endswith(".py")]
        assert 3 <= len(sources) <= 15, (task.id, len(sources))
        assert task.visible_tests, task.id
        assert task.problem_statement.strip() and task.name


@pytest.mark.parametrize("task_id", [t.id for t in REPO_TASKS])
def test_task_is_valid_over_ten_runs(runtime, task_id):
    report = validate_task(runtime, CATALOG.get(task_id), runs=10)
    assert {c.name: c.detail for c in report.checks if not c.ok} == {}
    assert report.notes == []  # the lists name every collected test


def documented_tasks() -> dict[str, tuple[str, int, int, int, int]]:
    """docs/repository-tasks.md's repository table: | `repo-...` | difficulty | category | F2P | P2P | held out (n F2P) | files |"""
    rows = {}
    for line in README.read_text().splitlines():
        m = re.match(r"\|\s*`(repo-[\w-]+)`\s*\|\s*(\w+)\s*\|[^|]*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+) \((\d+) F2P\)\s*\|", line)
        if m:
            rows[m.group(1)] = (m.group(2), *(int(m.group(i)) for i in range(3, 7)))
    return rows


def test_readme_documents_every_task_as_it_is():
    assert documented_tasks() == {
        t.id: (t.difficulty, len(t.visible_fail_to_pass), len(t.visible_pass_to_pass), len(t.held_out), len(set(t.held_out) & set(t.fail_to_pass)))
        for t in REPO_TASKS
    }


def test_tasks_endpoint_lists_family_difficulty_and_tools(client):
    listed = {t["id"]: t for t in client.get("/tasks").json()}
    for task in REPO_TASKS:
        entry = listed[task.id]
        assert (entry["family"], entry["difficulty"], entry["tests_total"]) == ("repo", task.difficulty, task.tests_total)
        assert entry["tags"] == task.tags and entry["tools"][0]["type"] == "function"


def test_a_bundled_task_is_solved_over_ws_with_the_gold_edits(live_server):
    task = CATALOG.get("repo-mutable-default")
    with GenericEnvClient(base_url=live_server.url) as client:
        first = client.reset(task_id=task.id, seed=1)
        assert first.observation["family"] == "repo" and first.observation["task_description"] == task.problem_statement
        tests = client.step({"action_type": "run_tests"})
        assert tests.reward == 0.0 and all(tests.observation["test_results"][t] in ("FAILED", "ERROR") for t in task.visible_fail_to_pass)
        assert not set(task.held_out) & set(tests.observation["test_results"])  # the held-out tests never show
        actions = oracle_actions(task)
        for action in actions[:-1]:
            assert client.step(action).observation["error"] is None
        final = client.step(actions[-1])
        assert final.done and final.observation["info"]["resolved"] is True
        assert final.reward == 0.8  # +0.3 for every F2P test passing at last, +0.5 resolved
        assert final.observation["grader_score"] >= 0.9
