"""The three classic tasks, measured: buggy pass counts, gold fixes, and the race detector (more in test_race_detector.py)."""

import random
import re
from pathlib import Path

import pytest

from env.families.classic.judge import baseline, stress_check
from tests.conftest import run
from tests.helpers import CATALOG

README = Path(__file__).resolve().parents[1] / "docs" / "tasks.md"  # the task table, moved from README.md


def documented_buggy_counts() -> dict[str, tuple[int, int]]:
    """docs/tasks.md's task table: | `easy` | ... | 6 / 8 | ..."""
    counts = {}
    for line in README.read_text().splitlines():
        m = re.match(r"\|\s*`(\w+)`\s*\|.*\|\s*(\d+) / (\d+)\s*\|", line)
        if m:
            counts[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return counts


@pytest.mark.parametrize("task_id, passed, total", [("easy", 6, 8), ("medium", 6, 10), ("hard", 8, 8)])
def test_buggy_code_pass_count_is_measured_and_documented(runtime, task_id, passed, total):
    task = CATALOG.get(task_id)
    verdict = baseline(runtime, task)
    assert (verdict.tests_passed, verdict.tests_total) == (passed, total)
    assert documented_buggy_counts()[task_id] == (passed, total)


def test_medium_failures_all_surface_in_authenticate_user(runtime):
    verdict = baseline(runtime, CATALOG.get("medium"))
    failing = [t for t in verdict.tests if t.outcome != "passed"]
    assert len(failing) == 4
    assert all(t.id.startswith("test_authenticate_") and "authenticate_user(" in t.message for t in failing)


def test_easy_failure_names_expected_and_actual_values(runtime):
    verdict = baseline(runtime, CATALOG.get("easy"))
    last = next(t for t in verdict.tests if t.id == "test_finds_last_element")
    assert last.outcome == "failed"
    assert last.message == "assert sol.binary_search([1, 3, 5, 7, 9], 9) == 4\nbinary_search([1, 3, 5, 7, 9], 9) returned -1"


@pytest.mark.parametrize("task_id", ["easy", "medium", "hard"])
def test_gold_fix_solves_the_task(runtime, task_id):
    task = CATALOG.get(task_id)
    verdict = run(task, task.gold_source, runtime.sandbox)
    assert verdict.tests_passed == verdict.tests_total
    assert verdict.solved


def test_hard_buggy_code_passes_sequential_tests_and_fails_the_concurrency_check(runtime):
    task = CATALOG.get("hard")
    verdict = run(task, task.buggy_source, runtime.sandbox)
    assert verdict.tests_passed == 8
    assert verdict.stress is not None and not verdict.stress.passed
    assert not verdict.solved


def hundred_runs(runtime, source: str) -> list[bool]:
    """100 concurrency checks as a submission and its grade face them (a fresh process and plan each)."""
    task = CATALOG.get("hard")
    return [stress_check(task, source, runtime.sandbox, random.Random(1000 + n)).passed for n in range(100)]


def test_the_concurrency_check_catches_the_race_in_100_of_100_runs(runtime):
    assert hundred_runs(runtime, CATALOG.get("hard").buggy_source) == [False] * 100


def test_the_concurrency_check_passes_the_correct_fix_100_of_100_runs(runtime):
    results = hundred_runs(runtime, CATALOG.get("hard").gold_source)
    assert results == [True] * 100
