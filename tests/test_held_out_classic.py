"""Held-out cases of the classic tasks (issue 32): drawn from the secret and the seed, never shown, and what a
table of the visible tests' answers cannot fit."""

from __future__ import annotations

import json
import random

import pytest

from env.authoring.degenerate import lookup_table
from env.families.classic.episode import ClassicEpisode
from env.families.classic.family import CLASSIC
from env.secret import ServerSecret
from tests.golden.pins import play
from tests.helpers import BUGGY, CATALOG, GOLD, GOOD_HYPOTHESIS, submit

WITH_CASES = ["easy", "medium"]


class _Local:
    """Runs a module's functions in this test process and records every call's arguments."""

    def __init__(self, source: str):
        self.namespace: dict = {}
        exec(compile(source, "<module>", "exec"), self.namespace)
        self.calls: list[tuple] = []

    def __getattr__(self, name: str):
        def call(*args):
            self.calls.append((name, json.dumps(args, sort_keys=True)))
            return self.namespace[name](*json.loads(json.dumps(args)))

        return call


def _outcomes(source: str, cases) -> list[bool]:
    local = _Local(source)
    results = []
    for _, case in cases:
        try:
            case(local)
            results.append(True)
        except AssertionError:
            results.append(False)
    return results


def _inputs(task_id: str, cases) -> list[tuple]:
    local = _Local(GOLD[task_id])
    for _, case in cases:
        case(local)
    return local.calls


@pytest.mark.parametrize("task_id", WITH_CASES)
def test_every_draw_passes_the_gold_and_fails_the_bug_and_the_table(task_id):
    task = CATALOG.get(task_id)
    table = lookup_table(task)
    assert table is not None
    for seed in range(300):
        cases = task.held_out_cases(random.Random(seed))
        assert len(cases) >= 10
        assert all(_outcomes(GOLD[task_id], cases)), seed
        bug = _outcomes(BUGGY[task_id], cases)
        assert not all(bug), seed
        assert _outcomes(table, cases) == bug, seed  # the table fits none of them: exactly the bug's outcomes


@pytest.mark.parametrize("task_id", WITH_CASES)
def test_the_cases_are_fixed_by_the_secret_and_the_seed(task_id):
    task = CATALOG.get(task_id)
    one, other = ServerSecret("a" * 64), ServerSecret("b" * 64)

    def drawn(secret: ServerSecret, seed: int) -> list[tuple]:
        return _inputs(task_id, task.held_out_cases(secret.rng("classic", task.id, seed, "held-out")))

    assert drawn(one, 1) == drawn(one, 1)
    assert drawn(one, 1) != drawn(one, 2)
    assert drawn(one, 1) != drawn(other, 1)  # the seed alone, public, does not decide them


def test_the_concurrency_task_keeps_its_secret_check_as_its_held_out_test():
    assert CATALOG.get("hard").held_out_cases(random.Random(1)) == []
    assert lookup_table(CATALOG.get("hard")) is None


@pytest.mark.parametrize(("task_id", "failed"), [("easy", 7), ("medium", 6)])
def test_a_table_of_the_visible_answers_scores_zero(runtime, task_id, failed):
    # Before issue 32 it scored 0.96 (easy) and 0.971 (medium), like the gold fix.
    task = CATALOG.get(task_id)
    _, observations = play(runtime, task_id, [submit(lookup_table(task), GOOD_HYPOTHESIS[task_id]), {"action_type": "give_up"}])
    first = observations[1]
    assert first.tests_passed == task.tests_total and not first.done
    assert first.current_error_output.endswith(f"{failed} held-out tests failed")
    last = observations[-1]
    assert last.grader_score == 0.0 and last.info["resolved"] is False
    assert last.breakdown["grader.test_credit"] == 0.0 and last.breakdown["grader.hypothesis"] == 0.0
    assert last.breakdown["failure_mode.test_suite_overconfidence"] == 1.0


SPY = {
    "easy": "def binary_search(arr, target):\n    print('ARGS', arr, target)\n"
    "    left, right = 0, len(arr) - 1\n    while left <= right:\n        mid = (left + right) // 2\n        if arr[mid] == target:\n"
    "            return mid\n        if arr[mid] < target:\n            left = mid + 1\n        else:\n            right = mid - 1\n    return -1\n",
}


def test_held_out_inputs_and_ids_reach_no_observation_state_or_query(runtime):
    episode = CLASSIC.episode(runtime, CATALOG.get("easy"), 5, "spy")
    assert isinstance(episode, ClassicEpisode)
    held = [json.loads(args) for _, args in _inputs("easy", episode.held_out)]
    assert held
    from env.models import DebugAction

    # a wrong answer everywhere but the printed arguments: the run's output is shown, so it must not hold theirs
    spy = SPY["easy"].replace("return -1\n", "return -2\n")
    texts = [episode.step(DebugAction(**submit(spy, GOOD_HYPOTHESIS["easy"]))).model_dump_json()]
    for query in ("error_explanation", "test_details"):
        texts.append(episode.step(DebugAction(action_type="query_context", query_type=query)).model_dump_json())
    texts.append(episode.step(DebugAction(**submit(SPY["easy"], GOOD_HYPOTHESIS["easy"]))).model_dump_json())
    texts.append(json.dumps(episode.state_fields()))
    everything = "\n".join(texts)
    assert "ARGS [1, 3, 5, 7, 9] 9" in everything  # the visible tests' calls are shown, so printing works
    assert "held-out::" not in everything and "held_out.py" not in everything
    for arr, target in held:
        assert f"ARGS {arr} {target}" not in everything, (arr, target)
    assert episode.solved and "0 held-out tests failed" in everything


def test_the_listings_and_schemas_name_no_held_out_test_of_any_family(client, catalog):
    held = {test.rpartition("::")[2] for task in catalog.all() for test in getattr(task, "held_out", [])}
    assert len(held) > 50  # every bundled repository task and every listed procedural one holds tests out
    paths = ["/tasks", "/schema", "/metadata", "/openapi.json"] + [f"/tasks/{task.id}" for task in catalog.all()]
    for path in paths:
        response = client.get(path)
        assert response.status_code == 200, path
        assert "held-out::" not in response.text, path
        assert not [name for name in held if name in response.text], path
