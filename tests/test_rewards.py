"""Every row of the step-reward table, exactly."""

from env import rewards


def test_progress_is_scaled_by_tests_gained():
    assert rewards.submission_reward(6, 7, 8, solved=False, timed_out=False) == {"progress": 0.01875}


def test_regression_is_scaled_by_tests_lost():
    assert rewards.submission_reward(6, 2, 10, solved=False, timed_out=False) == {"regression": -0.04}


def test_no_change_costs_stagnation_penalty():
    assert rewards.submission_reward(6, 6, 10, solved=False, timed_out=False) == {"stagnation": -0.05}


def test_solving_adds_the_bonus_to_progress():
    parts = rewards.submission_reward(6, 8, 8, solved=True, timed_out=False)
    assert parts == {"progress": 0.0375, "solve_bonus": 0.5}
    assert rewards.total(parts) == 0.5375


def test_solving_without_a_change_in_count_is_not_stagnation():
    # The concurrency task: 8/8 sequential before and after, the stress test decides.
    assert rewards.submission_reward(8, 8, 8, solved=True, timed_out=False) == {"solve_bonus": 0.5}


def test_timeout_costs_a_tenth():
    assert rewards.submission_reward(6, 0, 8, solved=False, timed_out=True) == {"timeout": -0.1}


def test_missing_hypothesis_costs_a_tenth():
    assert rewards.missing_hypothesis_reward() == {"missing_hypothesis": -0.1}


def test_first_query_is_free_and_later_ones_cost():
    assert rewards.query_reward(0) == {"query_cost": 0.0}
    assert rewards.query_reward(1) == {"query_cost": -0.05}
    assert rewards.query_reward(5) == {"query_cost": -0.05}


def test_truncation_costs_a_fifth():
    assert rewards.truncation_reward() == {"truncation": -0.2}


def test_total_sums_parts():
    assert rewards.total({"regression": -0.1, "truncation": -0.2}) == -0.3
