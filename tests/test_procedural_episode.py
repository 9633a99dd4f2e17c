"""Procedural episodes end to end: partial observability (no unopened file's content anywhere), logs
from the real failing run, the oracle's solve and its exact grade, determinism, and the wire."""

from __future__ import annotations

import json

import pytest

from env.authoring.oracle import oracle_actions
from env.families.procedural.episode import failing_path
from env.families.procedural.family import PROCEDURAL
from env.families.procedural.grader import Act, ProcFacts, grade_procedural
from env.models import DebugAction
from env.project import is_test_path

TASK = "proc-medium-test-0"


@pytest.fixture(scope="module")
def task(catalog):
    return catalog.get(TASK)


@pytest.fixture()
def episode(runtime, task):
    ep = PROCEDURAL.episode(runtime, task, seed=4, episode_id="p")
    yield ep
    ep.close()


def act(ep, kind, **fields):
    return ep.step(DebugAction(action_type=kind, **fields))


def leaks(obs, task, opened=()):
    """Lines of files the agent has not opened that appear anywhere in the observation."""
    text = json.dumps(obs.model_dump())
    found = []
    for path, content in task.files.items():
        if path in opened:
            continue
        for line in content.splitlines():
            line = line.strip()
            if len(line) > 25 and not line.startswith(("#", '"""', "from ", "import ")) and json.dumps(line)[1:-1] in text:
                found.append((path, line))
    return found


def test_the_first_observation_shows_nothing_of_the_code(episode, task):
    obs = episode.observe(0.0, {})
    assert obs.family == "procedural" and obs.task_description == task.problem_statement
    assert (obs.visible_files, obs.logs, obs.time_remaining) == ({}, [], task.max_steps)
    assert obs.buggy_code == obs.test_suite == ""
    assert obs.available_actions[:4] == ["open_file", "edit_file", "run_tests", "analyze_logs"]
    assert leaks(obs, task) == []


def test_no_tool_shows_an_unopened_file(episode, task):
    for kind, fields in (("run_tests", {}), ("analyze_logs", {}), ("search", {"pattern": "return"}), ("list_dir", {"path": "."}), ("diff", {})):
        obs = act(episode, kind, **fields)
        assert obs.error is None, obs.error
        assert leaks(obs, task) == [], kind
    obs = act(episode, "search", pattern="def ")
    assert "also matching, in files you have not opened: " in obs.tool_output
    source = sorted(p for p in task.files if not is_test_path(p) and p.endswith(".py"))[0]
    obs = act(episode, "open_file", path=source)
    assert obs.visible_files == {source: task.files[source]}
    assert leaks(obs, task, opened={source}) == []


def test_edits_need_an_opened_file(episode, task):
    path = task.fault_file
    obs = act(episode, "edit_file", path=path, start_line=1, end_line=0, new_text="# note\n")
    assert obs.error == f"edit_file: open {path} first (open_file); you can only edit what you have seen"
    obs = act(episode, "replace_text", path=path, old_text="def ", new_text="def  ")
    assert obs.error == f"replace_text: open {path} first (open_file); you can only edit what you have seen"
    act(episode, "view_file", path=path)  # view_file opens too
    assert act(episode, "edit_file", path=path, start_line=1, end_line=0, new_text="# note\n").error is None


def test_logs_come_from_the_real_failing_run(episode, task):
    obs = act(episode, "analyze_logs")
    errors = [line for line in obs.logs if " ERROR " in line]
    assert errors, obs.logs
    places = {line.split("[", 1)[1].split("]", 1)[0] for line in obs.logs}
    known = {f"{f.file}::{f.name}" for f in task.functions}
    assert places <= known  # every line names a real function of this program
    assert failing_path(task)[-1] == task.fault


def test_the_oracle_solves_with_the_exact_grade(episode, task):
    actions = oracle_actions(task)
    for action in actions:
        obs = episode.step(DebugAction(**action))
    assert obs.done and obs.info["resolved"] is True
    acts = [Act(kind={"open_file": "open", "edit": "edit", "submit": "test", "run_tests": "test"}[a["action_type"]], target=a.get("path", "")) for a in actions]
    expected = grade_procedural(ProcFacts(resolved=True, improved=True, changed=True, steps_used=len(actions), max_steps=task.max_steps,
                                          fault_file=task.fault_file, relevant_files=task.relevant_files(), actions=acts))
    assert obs.grader_score == expected.score
    assert obs.breakdown["grader.correctness"] == 1.0 and obs.breakdown["grader.robustness"] == 1.0
    assert obs.breakdown["grader.reasoning.exploration"] == 1.0 and obs.breakdown["grader.reasoning.test_usage"] == 1.0
    assert obs.grader_score >= 0.9


def test_steps_that_only_look_earn_nothing(episode, task):
    for kind, fields in (("analyze_logs", {}), ("open_file", {"path": task.fault_file}), ("list_dir", {})):
        assert act(episode, kind, **fields).reward == 0.0  # no reward says where the bug is


def test_the_same_seed_gives_the_same_logs(runtime, task):
    def play(seed):
        ep = PROCEDURAL.episode(runtime, task, seed=seed, episode_id="d")
        seen = [act(ep, "analyze_logs").logs for _ in range(6)]
        ep.close()
        return seen

    assert play(11) == play(11)


def test_a_procedural_episode_over_http(client):
    obs = client.post("/reset", json={"task_id": "proc-easy-ood-3", "seed": 2}).json()["observation"]
    assert obs["family"] == "procedural" and obs["visible_files"] == {}
    step = client.post("/step", json={"action": {"action_type": "analyze_logs"}, "episode_id": obs["episode_id"]}).json()
    assert step["observation"]["logs"] and step["observation"]["time_remaining"] == obs["time_remaining"] - 1
    refused = client.post("/reset", json={"task_id": "proc-easy-ood-3", "profile": "bash"}).json()["observation"]
    assert refused["error"] == "reset: procedural tasks have two interfaces (default, trace); 'bash' would show files the agent has not opened"
    tasks = {t["id"]: t for t in client.get("/tasks").json()}
    listed = [(t, tasks[t]["split"]) for t in tasks if t.startswith("proc-")]
    assert listed == [(f"proc-{level}-{split}-0", served) for split, served in (("test", "test"), ("train", "train"), ("ood", "test"))
                      for level in ("easy", "medium", "hard", "extreme")]  # fmt: skip
    assert list(tasks["proc-hard-test-0"]["profiles"]) == ["default", "trace"]
