"""Grades of a correct fix do not depend on how its paths are spelled, and an agent's own test files are never
wrong-file edits (issue 47, finding 4): the grader records every path as the tools normalise it, and a test file
(``env.project.is_test_path``) is no part of the project any run sees.

Before: the procedural oracle of ``proc-medium-test-0`` graded 0.929697 with its paths as given, 0.729697 with them
spelled ``./furnest/tax.py`` (robustness 0.5, exploration 0), and 0.823636 with a regression test of its own added
before the submit (robustness 0.5). The repository grade reads the workspace's files (normalised on disk, test files
left out), so it held already: it is played here too, with the same spellings, as a guard.
"""

from __future__ import annotations

import pytest

from env.families.procedural.grader import Act, ProcFacts, exploration, grade_procedural, redundancy, usage_of_tests
from env.families.registry import FAMILIES
from tests.helpers import CATALOG

FAULT = "svc/pricing.py"
RELEVANT = ["svc/orders.py", "svc/pricing.py"]
REGRESSION = {"action_type": "create_file", "path": "tests/test_my_regression.py", "content": "def test_mine():\n    assert True\n"}


def facts(actions: list[tuple[str, str]], steps: int = 10) -> ProcFacts:
    return ProcFacts(resolved=True, improved=True, changed=True, steps_used=steps, max_steps=40, fault_file=FAULT,
                     relevant_files=RELEVANT, actions=[Act(kind=k, target=t) for k, t in actions])  # fmt: skip


def methodical(spell) -> list[tuple[str, str]]:
    return [("test", ""), ("open", spell("svc/orders.py")), ("open", spell(FAULT)), ("edit", spell(FAULT)), ("test", "")]


SPELLINGS = {
    "dot": lambda p: "./" + p,
    "double slash": lambda p: p.replace("/", "//", 1),
    "up and back": lambda p: f"{p.split('/')[0]}/../{p}",
    "dot inside": lambda p: p.replace("/", "/./", 1),
    "backslash": lambda p: p.replace("/", "\\"),
}


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_a_path_spelled_another_way_is_the_same_file(spelling):
    plain = grade_procedural(facts(methodical(lambda p: p)))
    spelled = grade_procedural(facts(methodical(SPELLINGS[spelling])))
    assert spelled == plain
    assert plain.score == round(0.4 + 0.2 * (1 - 10 / 40) + 0.2 + 0.2 * (0.5 + 0.3), 6)
    assert (plain.components["robustness"], plain.components["reasoning.exploration"]) == (1.0, 1.0)


def test_the_facts_are_normalised_whoever_builds_them():
    built = ProcFacts.model_validate(
        {**facts([]).model_dump(), "fault_file": "./svc//pricing.py", "relevant_files": ["svc/x/../orders.py", "svc\\pricing.py"]}
    )
    assert (built.fault_file, built.relevant_files) == (FAULT, RELEVANT)
    assert Act(kind="open", target="/etc/passwd").target == "/etc/passwd"  # no tool opens it: kept as given, matching nothing


@pytest.mark.parametrize("test_file", ["tests/test_mine.py", "svc/test_pricing.py", "svc/pricing_test.py", "conftest.py",
                                       "svc/tests/helpers.py", "testing/fixtures.py", "./tests//test_mine.py"])  # fmt: skip
def test_writing_or_changing_a_test_file_is_no_wrong_file_edit(test_file):
    # A regression test written before the fix (test first), and one added after it: no wrong-file edit, and neither is
    # the first or the last edit the reasoning terms look at.
    first = facts([("edit", test_file), *methodical(lambda p: p)], steps=11)
    last = facts([*methodical(lambda p: p), ("edit", test_file)], steps=11)
    for f in (first, last):
        assert (exploration(f), usage_of_tests(f), redundancy(f)) == (1.0, 1.0, 0.0)
        grade = grade_procedural(f)
        assert grade.components["robustness"] == 1.0
        assert grade.score == round(0.4 + 0.2 * (1 - 11 / 40) + 0.2 + 0.2 * 0.8, 6)


def test_a_source_file_the_fix_does_not_touch_stays_a_wrong_file_edit_however_it_is_spelled():
    # Normalised before it is classified: a path through a `tests` directory that lands on a source file is that file.
    for wrong in ("svc/orders.py", "./svc/orders.py", "svc/tests/../orders.py", "tests/../svc/orders.py", "svc/testdata.py"):
        grade = grade_procedural(facts([*methodical(lambda p: p), ("edit", wrong)], steps=11))
        assert grade.components["robustness"] == 0.5, wrong
    # A test file changed and opened again is no repeat (its text is new); a test run after it is one (no run reads it).
    f = facts(
        [
            ("open", "tests/test_a.py"),
            ("edit", "tests/test_a.py"),
            ("open", "tests/test_a.py"),
            ("test", ""),
            ("edit", "./tests/test_a.py"),
            ("test", ""),
        ]
    )
    assert redundancy(f) == 1 / 6


# -- end to end, over HTTP, with exact grades -------------------------------------------------------------------------


def play(client, task_id: str, actions: list[dict]) -> dict:
    obs = client.post("/reset", json={"task_id": task_id, "seed": 1}).json()["observation"]
    for action in actions:
        answer = client.post("/step", json={"action": action, "episode_id": obs["episode_id"]}).json()
        obs = answer["observation"]
        assert obs["error"] is None, (action, obs["error"])
    assert answer["done"]
    return obs


def spelled(actions: list[dict], spell) -> list[dict]:
    return [{**a, "path": spell(a["path"])} if "path" in a else a for a in actions]


def test_the_procedural_oracle_grades_the_same_however_its_paths_are_spelled(client):
    task = CATALOG.get("proc-medium-test-0")
    oracle = FAMILIES["procedural"].oracle_actions(task)
    expected = round(0.4 + 0.2 * (1 - len(oracle) / task.max_steps) + 0.2 + 0.2 * 0.8, 6)  # 0.929697 (33 steps, 5 used)
    assert play(client, task.id, oracle)["grader_score"] == expected
    for name in ("dot", "up and back", "backslash"):
        obs = play(client, task.id, spelled(oracle, SPELLINGS[name]))
        assert obs["grader_score"] == expected, name  # 0.729697 before
        assert (obs["breakdown"]["grader.robustness"], obs["breakdown"]["grader.reasoning.exploration"]) == (1.0, 1.0)
    # The red-team side: a wrong source file spelled through a test directory is still that source file.
    other = next(p for p in sorted(task.source_files) if p.endswith(".py") and p not in task.relevant_files())
    wrong = [
        {"action_type": "open_file", "path": other},
        {"action_type": "edit", "path": f"tests/../{other}", "start_line": 1, "end_line": 0, "new_text": "# x\n"},
    ]
    obs = play(client, task.id, [*oracle[:-1], *wrong, oracle[-1]])
    assert obs["breakdown"]["grader.robustness"] == 0.5
    assert obs["grader_score"] == round(0.4 + 0.2 * (1 - (len(oracle) + 2) / task.max_steps) + 0.2 * 0.5 + 0.2 * 0.8, 6)


def test_the_procedural_oracle_with_a_regression_test_of_its_own_loses_only_the_step(client):
    task = CATALOG.get("proc-medium-test-0")
    oracle = FAMILIES["procedural"].oracle_actions(task)
    steps = len(oracle) + 1
    expected = round(0.4 + 0.2 * (1 - steps / task.max_steps) + 0.2 + 0.2 * 0.8, 6)  # 0.923636 (0.823636 before)
    after = play(client, task.id, [*oracle[:-1], REGRESSION, oracle[-1]])
    before = play(client, task.id, [REGRESSION, *oracle])  # test first
    for obs in (after, before):
        assert obs["grader_score"] == expected and obs["info"]["resolved"] is True
        assert obs["breakdown"]["grader.robustness"] == 1.0 and obs["breakdown"]["grader.reasoning"] == 0.8
    # The task's own test file, opened and changed: no wrong-file edit either (two steps).
    own = sorted(p for p in task.visible_tests)[0]
    touch = [
        {"action_type": "open_file", "path": own},
        {"action_type": "edit", "path": own, "start_line": 1, "end_line": 0, "new_text": "# mine\n"},
    ]
    obs = play(client, task.id, [*oracle[:-1], *touch, oracle[-1]])
    assert obs["grader_score"] == round(0.4 + 0.2 * (1 - (len(oracle) + 2) / task.max_steps) + 0.2 + 0.2 * 0.8, 6)


def test_the_repository_grade_reads_the_files_so_spelling_and_test_files_never_moved_it(client):
    task = CATALOG.get("repo-two-file-fix")
    oracle = FAMILIES["repo"].oracle_actions(task)
    expected = round(0.7 + 0.2 + 0.1 * (1 - len(oracle) / task.max_steps), 6)  # 0.99
    for name in ("dot", "up and back", "backslash"):
        assert play(client, task.id, spelled(oracle, SPELLINGS[name]))["grader_score"] == expected, name
    obs = play(client, task.id, [*oracle[:-1], REGRESSION, oracle[-1]])
    assert obs["grader_score"] == round(0.7 + 0.2 + 0.1 * (1 - (len(oracle) + 1) / task.max_steps), 6)
    assert obs["breakdown"]["grader.localisation.files"] == 1.0
