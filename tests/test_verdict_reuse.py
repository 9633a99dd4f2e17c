"""An episode keeps its decided runs of the visible tests (env/verdict/reuse.py): a run_tests of the very same files and
selection answers with the kept run, and a submit takes the kept run of all the visible tests on the same files as the
visible half of its graded run: fewer split runs, the same rewards, grade and reports. Files changed since, another
selection, another episode, or a run that decided nothing make it run again; the held-out half always runs."""

from __future__ import annotations

import pytest

from env.authoring.degenerate import degenerate_policies
from env.authoring.oracle import oracle_actions
from env.tools import testing
from env.verdict import repo_judge
from env.verdict.outcome import RepoVerdict
from env.verdict.reuse import KEPT, EpisodeRuns, decided
from tests.golden.pins import play, played
from tests.helpers import CATALOG

TASK = "repo-slice-window"  # held-out tests: a submit is two split runs


@pytest.fixture()
def split_runs(monkeypatch) -> list[tuple[str, ...]]:
    """Every split run from now on, by what it selected (() for all of its tree's tests) and whether it was graded."""
    runs: list[tuple[str, ...]] = []
    real = repo_judge._run_split

    def counted(*args, **kwargs):
        select, graded = args[7], args[9]
        runs.append(("graded" if graded else "visible", *(select or ())))
        return real(*args, **kwargs)

    monkeypatch.setattr(repo_judge, "_run_split", counted)
    return runs


@pytest.mark.parametrize("task_id", [TASK, "proc-easy-test-0"])
def test_a_submit_after_running_every_test_on_the_same_files_runs_only_the_held_out_tests(runtime, split_runs, monkeypatch, task_id):
    task = CATALOG.get(task_id)
    *edits, submit = oracle_actions(task)
    run_all = {"action_type": "run_tests" if task.family == "repo" else "run_tests_short"}
    actions = [*edits, run_all, submit]
    _, reused = play(runtime, task_id, actions)
    held = tuple(task.held_out)
    # (a procedural episode's oracle runs all the tests before its edits, and its first episode its failing tests for
    # its logs, once per task)
    assert split_runs[-2:] == [("visible",), ("graded", *held)]  # the run_tests, then the held-out half alone
    split_runs.clear()
    monkeypatch.setattr(EpisodeRuns, "of", lambda self, files, select=None: None)  # the same episode without the reuse
    _, fresh = play(runtime, task_id, actions)
    assert split_runs[-3:] == [("visible",), ("visible",), ("graded", *held)]
    assert reused[-1].info["resolved"] is True and played(reused) == played(fresh)  # every reward, the grade, the breakdown
    assert reused[-1].tool_output == fresh[-1].tool_output  # the report too


def test_a_selected_run_is_not_taken_for_all_the_tests(runtime, split_runs):
    task = CATALOG.get(TASK)
    *edits, submit = oracle_actions(task)
    play(runtime, TASK, [*edits, {"action_type": "run_tests", "test_ids": [task.visible_fail_to_pass[0]]}, submit])
    assert split_runs == [("visible", task.visible_fail_to_pass[0]), ("visible",), ("graded", *task.held_out)]


def test_files_changed_after_the_run_are_run_again_and_graded_as_they_are(runtime, split_runs):
    """Red team: run the tests on the gold fix, then break it and submit at once: the broken files are what is graded."""
    task = CATALOG.get(TASK)
    *edits, submit = oracle_actions(task)
    path = task.gold_lines[0].file
    breaking = {"action_type": "edit", "path": path, "start_line": 1, "end_line": 0, "new_text": "raise RuntimeError('broken')\n"}
    _, observations = play(runtime, TASK, [*edits, {"action_type": "run_tests"}, breaking, submit])
    assert split_runs == [("visible",), ("visible",), ("graded", *task.held_out)]
    assert observations[-1].info["resolved"] is False and observations[-1].grader_score == 0.0


def test_only_a_run_that_decided_every_outcome_is_kept_and_only_for_the_same_files_and_selection():
    files = {"lib/__init__.py": "X = 1\n", "tests/test_x.py": "def test_x():\n    pass\n"}
    clean = RepoVerdict(outcomes={"tests/test_x.py::test_x": "PASSED"}, finished=True)
    for spoiled in ({"error": "no"}, {"aborted": "stopped"}, {"busy": "busy"}, {"timed_out": True}, {"void": "canaries"}, {"held_out": {}}):
        assert not decided(clean.model_copy(update=spoiled))
        runs = EpisodeRuns()
        runs.answer(files, None, lambda spoiled=spoiled: clean.model_copy(update=spoiled))
        assert runs.of(files) is None, spoiled
    runs = EpisodeRuns()
    assert runs.answer(files, None, lambda: clean) is clean
    kept = runs.of(dict(files))
    assert kept == clean and kept is not clean  # a copy: a submit's grading writes into it
    kept.held_out = {"t": "PASSED"}
    assert runs.of(files).held_out is None
    assert runs.of({**files, "lib/__init__.py": "X = 2\n"}) is None and runs.of({**files, "extra.py": ""}) is None
    assert runs.of(files, ["tests/test_x.py::test_x"]) is None  # a selected run is another request


def test_an_episode_keeps_its_most_recently_used_runs():
    runs, clean = EpisodeRuns(), RepoVerdict(outcomes={"t": "PASSED"}, finished=True)
    states = [{"lib.py": f"X = {i}\n"} for i in range(KEPT + 1)]
    for files in states[:KEPT]:
        runs.answer(files, None, lambda: clean)
    assert runs.of(states[0]) == clean  # used again: now the most recent
    runs.answer(states[KEPT], None, lambda: clean)  # one more than KEPT: the least recently used goes
    assert runs.of(states[1]) is None and all(runs.of(files) == clean for files in [states[0], *states[2:]])


def test_answer_runs_only_what_is_not_kept_and_keeps_only_what_decided():
    files, clean = {"lib.py": "X = 1\n"}, RepoVerdict(outcomes={"t": "PASSED"}, finished=True)
    runs, made = EpisodeRuns(), []

    def run(verdict: RepoVerdict):
        return lambda: made.append(verdict) or verdict

    busy = clean.model_copy(update={"busy": "busy"})
    assert runs.answer(files, None, run(busy)) is busy and runs.answer(files, None, run(clean)) is clean  # busy: run again
    assert runs.answer(files, None, run(busy)) == clean and made == [busy, clean]  # kept: not run
    assert runs.answer(files, ["t"], run(clean)) is clean and len(made) == 3  # another selection runs


@pytest.mark.parametrize("task_id", [TASK, "proc-easy-test-0"])
def test_a_run_asked_again_on_the_same_files_is_answered_from_the_episode(runtime, split_runs, monkeypatch, task_id):
    """Red team: spamming run_tests, and alternating a breaking edit with its undoing, run each state once, and every
    step's reward, the grade and every report are those of the same episode run afresh each time."""
    task = CATALOG.get(task_id)
    policies = degenerate_policies(task)
    actions = policies["run_tests_spam"]
    spam = sum(1 for a in actions if a["action_type"].startswith("run_tests"))
    _, kept = play(runtime, task_id, actions)
    assert spam >= 2 and split_runs.count(("visible",)) == 1  # the first run of the edited files; the others answered from it
    split_runs.clear()
    _, alternating = play(runtime, task_id, policies["alternating"])
    assert split_runs.count(("visible",)) == 2  # broken, unbroken, then both again from the episode (and the submit's half)
    split_runs.clear()
    monkeypatch.setattr(EpisodeRuns, "of", lambda self, files, select=None: None)  # the same episodes, every run made
    monkeypatch.setattr(EpisodeRuns, "answer", lambda self, files, select, run: run())
    _, fresh = play(runtime, task_id, actions)
    assert split_runs.count(("visible",)) == spam + 1  # + the submit's visible half
    _, fresh_alternating = play(runtime, task_id, policies["alternating"])
    assert played(kept) == played(fresh) and [o.tool_output for o in kept] == [o.tool_output for o in fresh]
    assert played(alternating) == played(fresh_alternating)
    assert [o.tool_output for o in alternating] == [o.tool_output for o in fresh_alternating]


def test_no_episode_reads_another_s_runs(runtime, split_runs):
    """Red team: two episodes of one task run the same files each for itself (kept runs are the episode's own)."""
    run = [{"action_type": "run_tests"}]
    play(runtime, TASK, run)
    play(runtime, TASK, run)
    assert split_runs == [("visible",), ("visible",)]


def test_a_run_that_decided_nothing_is_made_again_at_the_next_request(runtime, split_runs, monkeypatch):
    """Infrastructure is never the agent's: a run the machine starved is not kept, so asking again runs again."""
    real, calls = repo_judge.run_tests, []

    def starved_once(*args, **kwargs):
        verdict = real(*args, **kwargs)
        calls.append(verdict)
        return verdict.model_copy(update={"busy": "the machine was too busy"}) if len(calls) == 1 else verdict

    monkeypatch.setattr(testing, "run_tests", starved_once)
    play(runtime, TASK, [{"action_type": "run_tests"}] * 3)
    assert len(calls) == 2 and split_runs == [("visible",), ("visible",)]
