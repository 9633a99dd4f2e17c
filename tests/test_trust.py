"""Two trust models: a result from the split verdict cannot be forged by the project's code; one from a sandboxed
run (the project shares pytest's process) can be, in principle. Every result says which it is, a task is trusted
when all its FAIL_TO_PASS tests run split, and an untrusted task's rewards are paid only when the server allows it."""

from __future__ import annotations

from env.authoring.validate import table, validate_task
from env.eval.report import trust_note
from env.families.repo.family import REPO
from env.models import DebugAction
from env.project import load_repo_task
from tests import repo_fixture

BUGGY = "class Color:\n    RED = 1\n"
GOLD = "import enum\n\n\nclass Color(enum.Enum):\n    RED = 1\n"
TESTS = "import enum\nfrom lib import Color\n\n\ndef test_is_an_enum():\n    assert issubclass(Color, enum.Enum)\n\n\ndef test_red():\n    assert Color.RED\n"
BOXED, SPLIT = "tests/test_color.py::test_is_an_enum", "tests/test_color.py::test_red"


def untrusted_task(tmp_path):
    """issubclass(ProjectClass, enum.Enum) needs the real class, so the task runs that FAIL_TO_PASS test sandboxed."""
    files, gold = {"lib/__init__.py": BUGGY, "tests/test_color.py": TESTS}, {"lib/__init__.py": GOLD, "tests/test_color.py": TESTS}
    return load_repo_task(repo_fixture.write_task(tmp_path / "color", files, gold, FAIL_TO_PASS=[BOXED], PASS_TO_PASS=[SPLIT], sandboxed=[BOXED]))


def test_an_untrusted_task_says_so_and_pays_no_reward(runtime, tmp_path, monkeypatch):
    task = untrusted_task(tmp_path)
    assert not task.trusted and task.summary()["trusted"] is False
    episode = REPO.episode(runtime, task, seed=1, episode_id="untrusted")
    first = episode.observe(0.0, {})
    assert first.info["trust"] == "sandboxed" and first.info["rewards_paid"] is False
    assert first.info["rewards_note"] == (
        "this task's FAIL_TO_PASS tests run sandboxed, where the project's code could forge them: its rewards are not "
        "paid unless the server runs with ENV_ALLOW_SANDBOXED_REWARD=1"
    )
    episode.step(DebugAction(action_type="edit", path="lib/__init__.py", start_line=1, end_line=2, new_text=GOLD))
    obs = episode.step(DebugAction(action_type="run_tests"))
    assert obs.test_results == {BOXED: "PASSED", SPLIT: "PASSED"} and obs.info["sandboxed_tests"] == [BOXED]
    assert obs.reward == 0.0 and obs.breakdown == {"unpaid.f2p_progress": 0.3}
    episode.close()


def test_the_server_may_allow_sandboxed_rewards_and_they_stay_flagged(runtime, tmp_path, monkeypatch):
    task = untrusted_task(tmp_path)
    monkeypatch.setattr(runtime, "allow_sandboxed_reward", True)
    episode = REPO.episode(runtime, task, seed=1, episode_id="allowed")
    episode.step(DebugAction(action_type="edit", path="lib/__init__.py", start_line=1, end_line=2, new_text=GOLD))
    obs = episode.step(DebugAction(action_type="run_tests"))
    assert obs.reward == 0.3 and obs.breakdown == {"f2p_progress": 0.3}
    assert obs.info["trust"] == "sandboxed" and "rewards_paid" not in obs.info and obs.info["sandboxed_tests"] == [BOXED]
    episode.close()


def test_a_trusted_task_says_so(runtime, tmp_path):
    task = load_repo_task(repo_fixture.write_task(tmp_path / "shop"))
    episode = REPO.episode(runtime, task, seed=1, episode_id="trusted")
    obs = episode.step(DebugAction(action_type="run_tests"))
    assert obs.info["trust"] == "split" and "sandboxed_tests" not in obs.info and "rewards_paid" not in obs.info
    episode.close()


def test_validate_and_the_report_show_trust(runtime, tmp_path):
    report = validate_task(runtime, untrusted_task(tmp_path), runs=2)
    assert report.ok and not report.trusted, report.checks
    assert report.notes == [f"1 test(s) run sandboxed (forgeable in principle): {BOXED}"]
    assert table([report]).splitlines()[:2] == [
        "task       family  valid  trusted  runs  seconds  problems",
        f"shop-cart  repo    yes    no       2     {report.seconds:<7.1f}  -",
    ]
    rows = [{"task_id": "color", "trust": "sandboxed"}, {"task_id": "easy", "trust": "split"}]
    assert trust_note(rows) == (
        "1 of 2 episodes are on tasks whose FAIL_TO_PASS tests run sandboxed, where the project's code shares pytest's "
        "process (forgeable in principle; tamper canaries void what they catch): `color`"
    )
    assert trust_note(rows[1:]) == "Every result comes from the split verdict: no code of an agent's could forge it."
