"""A submit takes the episode's last run of all the visible tests on the very same files as the visible half of its
graded run (env/verdict/reuse.py): one split run fewer, the same grade. Files changed since, a selected run, or a run
that decided nothing make it run again; the held-out half always runs."""

from __future__ import annotations

import pytest

from env.authoring.oracle import oracle_actions
from env.verdict import repo_judge
from env.verdict.outcome import RepoVerdict
from env.verdict.reuse import LastRun, decided
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
    monkeypatch.setattr(LastRun, "of", lambda self, files: None)  # the same episode without the reuse
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


def test_only_a_run_that_decided_every_outcome_is_kept_and_only_for_the_same_files():
    files = {"lib/__init__.py": "X = 1\n", "tests/test_x.py": "def test_x():\n    pass\n"}
    clean = RepoVerdict(outcomes={"tests/test_x.py::test_x": "PASSED"}, finished=True)
    last = LastRun()
    last.keep(files, clean)
    kept = last.of(dict(files))
    assert kept == clean and kept is not clean  # a copy: a submit's grading writes into it
    kept.held_out = {"t": "PASSED"}
    assert last.of(files).held_out is None
    assert last.of({**files, "lib/__init__.py": "X = 2\n"}) is None and last.of({**files, "extra.py": ""}) is None
    for spoiled in ({"error": "no"}, {"aborted": "stopped"}, {"busy": "busy"}, {"timed_out": True}, {"void": "canaries"}, {"held_out": {}}):
        assert not decided(clean.model_copy(update=spoiled))
        last.keep(files, clean.model_copy(update=spoiled))
        assert last.of(files) is None, spoiled  # and the run before it is forgotten too
