"""A repository episode end to end: exact rewards, exact grades, and nothing gained by cheating."""

from __future__ import annotations

import pytest

from env.families.repo.family import REPO
from env.models import DebugAction
from env.project import load_repo_task
from tests import repo_fixture

FIX = {"action_type": "replace_text", "path": "shop/cart.py", "old_text": "items=[]", "new_text": "items=None"}
FIX2 = {"action_type": "replace_text", "path": "shop/cart.py", "old_text": "self.items = items", "new_text": "self.items = [] if items is None else items"}
BREAK_P2P = {"action_type": "replace_text", "path": "shop/prices.py", "old_text": '"0.50"', "new_text": '"0.55"'}


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    return load_repo_task(repo_fixture.write_task(tmp_path_factory.mktemp("episode")))


@pytest.fixture()
def episode(runtime, task):
    ep = REPO.episode(runtime, task, seed=3, episode_id="ep")
    yield ep
    ep.close()


def act(episode, **fields):
    return episode.step(DebugAction(**fields))


def test_the_first_observation(episode):
    obs = episode.observe(0.0, {})
    assert (obs.family, obs.task_id, obs.tests_total, obs.max_steps, obs.done) == ("repo", "shop-cart", 4, 12, False)
    assert obs.task_description == "A new cart already contains items someone else added."
    assert obs.available_actions == ["list_dir", "view_file", "search", "edit", "replace_text", "create_file", "run_tests", "diff", "submit", "give_up"]


def test_a_solving_episode_earns_exact_rewards_and_grade(episode):
    obs = act(episode, action_type="run_tests")
    assert (obs.reward, obs.breakdown) == (0.0, {})
    assert obs.test_results["tests/test_cart.py::test_new_carts_start_empty"] == "FAILED"
    act(episode, **FIX)
    act(episode, **FIX2)
    obs = act(episode, action_type="run_tests")
    assert obs.reward == 0.3 and obs.breakdown == {"f2p_progress": 0.3}
    assert obs.score_estimate == 1.0
    obs = act(episode, action_type="run_tests")
    assert obs.reward == 0.0  # a test's first pass pays once
    obs = act(episode, action_type="submit")
    assert obs.done and obs.info["resolved"] is True
    assert obs.reward == 0.5 and obs.breakdown["resolved_bonus"] == 0.5
    # 0.7 x 1 (FULL) + 0.2 x 1 (the gold patch's file, function and lines) + 0.1 x (1 - 6/12)
    assert obs.grader_score == 0.95
    assert obs.breakdown["grader.localisation"] == 1.0 and obs.breakdown["grader.efficiency"] == 0.5
    assert obs.cumulative_reward == 0.8
    assert obs.info["model_patch"].startswith("diff --git a/shop/cart.py b/shop/cart.py\n")
    assert act(episode, action_type="diff").error == "the episode is over; call reset to start a new one"


def test_a_broken_pass_to_pass_test_costs_its_share(episode):
    act(episode, action_type="run_tests")
    act(episode, **BREAK_P2P)
    obs = act(episode, action_type="run_tests")
    assert obs.breakdown == {"p2p_regression": -0.066667}  # -0.2 x 1 of 3 P2P tests
    obs = act(episode, action_type="run_tests")
    assert obs.breakdown == {}  # still broken, not broken again


def test_submitting_nothing_scores_exactly_zero(episode):
    obs = act(episode, action_type="submit")
    assert obs.done and obs.grader_score == 0.0 and obs.reward == 0.0
    assert obs.info == {"trust": "split", "model_patch": "", "resolved": False}


def test_give_up_scores_exactly_zero_even_after_a_fix(episode):
    act(episode, **FIX)
    act(episode, **FIX2)
    obs = act(episode, action_type="give_up")
    assert obs.done and obs.grader_score == 0.0 and obs.tool_output == "You gave up; the episode is over."


def test_rewriting_the_tests_gains_nothing(episode):
    act(episode, action_type="edit", path="tests/test_cart.py", start_line=1, end_line=43, new_text="def test_new_carts_start_empty():\n    assert True\n")
    act(episode, action_type="create_file", path="conftest.py", content="import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    out = yield\n    out.get_result().outcome = 'passed'\n")
    obs = act(episode, action_type="run_tests")
    assert obs.test_results["tests/test_cart.py::test_new_carts_start_empty"] == "FAILED" and obs.reward == 0.0
    obs = act(episode, action_type="submit")
    assert obs.grader_score == 0.0 and obs.info["resolved"] is False  # only test files changed: no source change


def test_a_partial_fix_with_the_right_location(episode):
    act(episode, **FIX)  # the default is None now, and Cart.__init__ stores None: len() raises
    obs = act(episode, action_type="submit")
    assert obs.info["resolved"] is False
    assert obs.breakdown["grader.resolution"] == 0.0
    # The right place, but no trusted outcome improved: localisation pays nothing (it paid 0.2 once).
    assert obs.breakdown["grader.localisation"] == 0.0
    assert obs.grader_score == 0.0


def test_truncation_grades_the_current_state(runtime, task):
    episode = REPO.episode(runtime, task.model_copy(update={"max_steps": 3}), seed=1, episode_id="short")
    act(episode, **FIX)
    act(episode, **FIX2)
    obs = act(episode, action_type="list_dir")
    assert obs.done and obs.breakdown["truncation"] == -0.2 and obs.reward == -0.2
    assert obs.info["resolved"] is True and "resolved_bonus" not in obs.breakdown  # not submitted: no bonus
    assert obs.grader_score == 0.9  # 0.7 + 0.2 + 0.1 x (1 - 3/3)
    assert episode.state().truncated


def test_agent_mistakes_cost_a_step_and_nothing_else(episode):
    obs = act(episode, action_type="submit_fix", fixed_code="x", hypothesis="y")
    assert obs.error == (
        "unknown action_type 'submit_fix' for the 'default' profile; expected one of: list_dir, view_file, search, edit, replace_text, "
        "create_file, run_tests, diff, submit, give_up"
    )
    assert obs.reward == 0.0 and obs.step_number == 1 and not obs.done
    obs = act(episode, action_type="")
    assert obs.error.startswith("missing field 'action_type'; expected one of: list_dir")
    obs = act(episode, action_type="list_dir", hypothesis="x")
    assert obs.error == "list_dir: unknown field 'hypothesis'"


def test_workspaces_are_private_and_removed(runtime, task):
    a = REPO.episode(runtime, task, seed=1, episode_id="a")
    b = REPO.episode(runtime, task, seed=1, episode_id="b")
    act(a, **FIX)
    assert "items=None" in (a.workspace.root / "shop/cart.py").read_text()
    assert "items=[]" in (b.workspace.root / "shop/cart.py").read_text()
    root = a.workspace.root
    act(a, action_type="give_up")
    assert not root.exists()
    b.close()
    assert not b.workspace.root.exists()


def test_git_history_is_sanitised(runtime, task):
    import subprocess

    episode = REPO.episode(runtime, task, seed=1, episode_id="git")
    root = str(episode.workspace.root)

    def git(*args):
        return subprocess.run(["git", "-C", root, *args], capture_output=True, text=True, check=True).stdout.split()

    assert len(git("rev-list", "--all")) == 1
    assert git("remote") == []
    assert git("for-each-ref", "--format=%(refname)") == ["refs/heads/main"]
    assert not (episode.workspace.root / ".git" / "logs").exists()
    assert git("status", "--porcelain") == []
    episode.close()


def test_passed_counts_only_the_tests_total_counts(runtime, tmp_path):
    # A test outside FAIL_TO_PASS and PASS_TO_PASS (dropped as failing or unstable) still runs and passes: it is shown
    # in the results but not counted, so "passed" never exceeds "total" (a catalog task showed 344 of 310).
    dropped = "tests/test_cart.py::test_stock_can_be_patched"
    p2p = [t for t in repo_fixture.P2P if t != dropped]
    task = load_repo_task(repo_fixture.write_task(tmp_path / "t", PASS_TO_PASS=p2p))
    ep = REPO.episode(runtime, task, seed=3, episode_id="ep-dropped")
    try:
        obs = act(ep, action_type="run_tests")
        assert obs.test_results[dropped] == "PASSED"
        assert (obs.tests_passed, obs.tests_total) == (len(p2p), len(repo_fixture.F2P) + len(p2p))
    finally:
        ep.close()
