"""Episode semantics through the in-process environment: rewards, limits, ends and grades."""

import pytest

from env.models import DebugAction
from env.server.environment import DebugEnvironment
from tests.helpers import BUGGY, GOLD, GOOD_HYPOTHESIS, UNKNOWN_TASK_TAIL, submit


@pytest.fixture()
def env(runtime):
    return DebugEnvironment(runtime)


def act(env, **fields):
    return env.step(DebugAction(**fields))


def test_reset_shows_the_buggy_code_and_its_measured_output(env):
    obs = env.reset(task_id="easy", seed=3)
    assert (obs.tests_passed, obs.tests_total, obs.step_number, obs.attempts_remaining) == (6, 8, 0, 5)
    assert obs.current_code == obs.buggy_code == BUGGY["easy"]
    assert obs.initial_error_output == obs.current_error_output
    assert "6 passed, 2 failed, 0 errors (of 8 tests)" in obs.initial_error_output
    assert obs.reward == 0.0 and obs.done is False and obs.episode_id


def test_hard_initial_output_shows_all_sequential_tests_passing(env):
    obs = env.reset(task_id="hard", seed=3)
    assert obs.tests_passed == 8
    assert "stress" not in obs.initial_error_output.split("(of 8 tests)")[0].split("\n")[-1]


def test_solving_easy_on_the_first_attempt(env):
    env.reset(task_id="easy", seed=1)
    obs = act(env, **submit(GOLD["easy"], GOOD_HYPOTHESIS["easy"]))
    assert obs.done and obs.tests_passed == 8
    # Progress counts the 13 held-out cases too: the bug passes 6 of 8 tests and (seed 1) 6 of 13 cases, the gold all 21.
    assert "0 held-out tests failed" in obs.current_error_output
    assert obs.reward == obs.step_reward == round(0.15 * 9 / 21 + 0.5, 6) == 0.564286
    assert obs.grader_score == 0.96
    assert obs.breakdown["progress"] == 0.064286 and obs.breakdown["solve_bonus"] == 0.5
    assert obs.breakdown["grader.efficiency"] == 0.8
    assert env.state.solved and env.state.attempts_used == 1


def test_solving_medium_and_hard(env):
    env.reset(task_id="medium", seed=1)
    obs = act(env, **submit(GOLD["medium"], GOOD_HYPOTHESIS["medium"]))
    # 10 tests and 11 held-out cases; the bug passes 6 and (seed 1) 5 of them
    assert obs.done and obs.reward == round(0.15 * 10 / 21 + 0.5, 6)
    assert obs.grader_score == round(0.6 + 0.2 * 6 / 7 + 0.15 + 0.05, 6)
    env.reset(task_id="hard", seed=1)
    obs = act(env, **submit(GOLD["hard"], GOOD_HYPOTHESIS["hard"]))
    assert obs.done and obs.reward == 0.5
    assert obs.grader_score == 1.0


def test_giving_up_at_once_scores_zero(env):
    for task_id in ("easy", "medium", "hard"):
        env.reset(task_id=task_id, seed=1)
        obs = act(env, action_type="give_up", final_diagnosis=GOOD_HYPOTHESIS[task_id])
        assert obs.done and obs.grader_score == 0.0 and obs.reward == 0.0


def test_resubmitting_the_buggy_code_scores_zero_whatever_the_hypothesis(env):
    for task_id in ("easy", "medium", "hard"):
        env.reset(task_id=task_id, seed=1)
        code = "# just a comment\n\n" + BUGGY[task_id] + "\n\n# the end\n"
        act(env, **submit(code, GOOD_HYPOTHESIS[task_id]))
        obs = act(env, action_type="give_up")
        assert obs.grader_score == 0.0, task_id


def test_no_change_is_stagnation_and_regression_is_scaled(env):
    env.reset(task_id="medium", seed=1)
    renamed = BUGGY["medium"].replace("record", "entry")
    obs = act(env, **submit(renamed, "maybe"))
    assert obs.reward == -0.05 and obs.breakdown["stagnation"] == -0.05
    broken = BUGGY["medium"].replace("return validate_password(password, record[\"password_hash\"])", "return None")
    obs = act(env, **submit(broken, "maybe"))
    assert obs.tests_passed == 4
    assert "9 held-out tests failed" in obs.current_error_output  # of 11; 3 more than the bug
    assert obs.reward == round(-0.10 * 5 / 21, 6)  # 2 tests and 3 cases lost of 21


def test_missing_hypothesis_costs_and_does_not_run(env):
    env.reset(task_id="easy", seed=1)
    obs = act(env, action_type="submit_fix", fixed_code=GOLD["easy"])
    assert obs.reward == -0.1 and obs.breakdown["missing_hypothesis"] == -0.1
    assert obs.tests_passed == 6 and obs.attempts_remaining == 5 and obs.step_number == 1 and not obs.done


def test_queries_first_free_then_cost(env):
    env.reset(task_id="medium", seed=1)
    first = act(env, action_type="query_context", query_type="related_code", query_target="validate_password")
    assert first.reward == 0.0
    assert "# calls: hash_password" in first.query_result and "# called by: authenticate_user" in first.query_result
    second = act(env, action_type="query_context", query_type="test_details", query_target="test_hash_is_deterministic")
    assert second.reward == -0.05
    assert "last run: PASSED" in second.query_result
    third = act(env, action_type="query_context", query_type="error_explanation")
    assert third.reward == -0.05 and "test_authenticate_alice_with_correct_password" in third.query_result
    assert env.state.queries_used == 3


def test_bad_actions_are_errors_that_cost_a_step(env):
    env.reset(task_id="easy", seed=1)
    cases = [
        ({"action_type": "explode"}, "unknown action_type 'explode'; expected one of: submit_fix, query_context, give_up"),
        ({}, "missing field 'action_type'; expected one of: submit_fix, query_context, give_up"),
        ({"action_type": "submit_fix", "hypothesis": "x"}, "submit_fix needs 'fixed_code': the complete corrected module"),
        ({"action_type": "submit_fix", "code": "x", "hypothesis": "x"}, "unknown field(s) 'code' for submit_fix; its fields are: fixed_code, hypothesis, suspect, mechanism"),
        ({"action_type": "query_context"}, "query_context needs 'query_type': one of function_signature, related_code, error_explanation, test_details"),
        ({"action_type": "query_context", "query_type": "gossip"}, "unknown query_type 'gossip'; expected one of: function_signature, related_code, error_explanation, test_details"),
        ({"action_type": "query_context", "query_type": "function_signature", "query_target": "nope"}, "no function or class named 'nope'; available: binary_search"),
        ({"action_type": "give_up", "final_diagnosis": "\ud800"}, "field 'final_diagnosis' is not valid UTF-8 text (it contains a lone surrogate)"),
    ]
    for number, (fields, message) in enumerate(cases[:7], start=1):
        obs = act(env, **fields)
        assert obs.error == message and obs.info == {"error": message}
        assert obs.step_number == number and obs.reward == 0.0 and not obs.done
    obs = act(env, **cases[7][0])
    assert obs.error == cases[7][1]
    assert obs.done and obs.breakdown["truncation"] == -0.2  # the 8th step of 8


def test_truncation_at_max_steps(env):
    env.reset(task_id="easy", seed=1)
    for _ in range(7):
        obs = act(env, action_type="query_context", query_type="function_signature")
    assert not obs.done
    obs = act(env, action_type="query_context", query_type="function_signature")
    assert obs.done and env.state.truncated
    assert obs.reward == -0.25 and obs.breakdown == {**obs.breakdown, "query_cost": -0.05, "truncation": -0.2}
    after = act(env, action_type="give_up")
    assert after.error == "the episode is over; call reset to start a new one" and after.step_number == 8


def test_running_out_of_attempts_ends_the_episode(env):
    env.reset(task_id="easy", seed=1)
    for i in range(5):
        obs = act(env, **submit(BUGGY["easy"].replace("-1", f"-{i + 1}", 1) if i else BUGGY["easy"] + "\n# 0\n", "the loop"))
    assert obs.done and obs.attempts_remaining == 0 and len(obs.previous_attempts) == 5
    assert obs.grader_score is not None


def test_policy_violation_counts_as_a_failed_attempt(env):
    env.reset(task_id="easy", seed=1)
    obs = act(env, **submit("import os\n" + GOLD["easy"], "the loop condition"))
    assert obs.tests_passed == 0 and obs.attempts_remaining == 4
    assert obs.current_error_output.startswith("Not run: line 1: import of 'os' is not allowed in this task")
    assert obs.reward == round(-0.10 * 12 / 21, 6)  # 6 tests and (seed 1) 6 held-out cases lost, of 21


def test_a_timed_out_submission(runtime, isolation):
    from env.runtime import Runtime
    from env.sandbox.limits import Limits
    from env.sandbox.runner import Sandbox

    # The CPU budget (1 s) must run out before the wall clock (6 s) even on a loaded machine: a spin
    # given under 1 s of CPU in 1.5 s (the shared fast sandbox) was reported as a wall-clock timeout.
    slow = Runtime(runtime.catalog, Sandbox(Limits(wall_seconds=6, cpu_seconds=1), isolation), workers=2)
    env = DebugEnvironment(slow)
    env.reset(task_id="easy", seed=1)
    looping = GOLD["easy"].replace("left = mid + 1", "left = mid")
    obs = act(env, **submit(looping, "the loop"))
    assert obs.reward == -0.1 and obs.breakdown["timeout"] == -0.1
    assert obs.previous_attempts[0].timed_out
    assert "killed by SIGXCPU (CPU time limit)" in obs.current_error_output
    assert "not run: the code's process was killed by SIGXCPU" in obs.current_error_output
    slow.sandbox.close()


def test_the_same_seed_gives_the_same_rewards(runtime):
    def play(seed):
        env = DebugEnvironment(runtime)
        env.reset(task_id="hard", seed=seed)
        out = [act(env, **submit(BUGGY["hard"] + "\n# try\n", "a race in increment")).reward]
        out.append(act(env, action_type="query_context", query_type="error_explanation").reward)
        obs = act(env, **submit(GOLD["hard"], GOOD_HYPOTHESIS["hard"]))
        return out + [obs.reward, obs.cumulative_reward, obs.grader_score, obs.breakdown]

    assert play(11) == play(11)


def test_step_before_reset_is_an_error(runtime):
    obs = DebugEnvironment(runtime).step(DebugAction(action_type="give_up"))
    assert obs.error == "no episode is running; call reset first"


def test_unknown_task_is_an_error_observation(env):
    obs = env.reset(task_id="nightmare")
    assert obs.error == "unknown task_id 'nightmare'; available: " + UNKNOWN_TASK_TAIL
