"""Evaluation statistics against hand-computed values, and passX@k's unbiasedness by simulation."""

import random

import pytest

from env.eval.metrics import counts_within, mean_std, pass_at_k, pass_at_k_interval, pass_hat_k, passx_at_k, wilson_interval


@pytest.mark.parametrize(
    "n, c, k, expected",
    [(3, 0, 1, 0.0), (3, 1, 1, 1 / 3), (3, 1, 2, 2 / 3), (3, 2, 2, 1.0), (3, 3, 3, 1.0), (5, 1, 2, 0.4), (10, 3, 5, 1 - 21 / 252)],
)
def test_pass_at_k(n, c, k, expected):
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("n, c, k, expected", [(3, 2, 2, 1 / 3), (3, 3, 2, 1.0), (3, 1, 2, 0.0), (5, 3, 2, 0.3), (4, 4, 4, 1.0)])
def test_pass_hat_k(n, c, k, expected):
    assert pass_hat_k(n, c, k) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("c", [0, 1, 2, 3])
def test_the_study_s_closed_forms_for_n3_k2(c):
    # Equation 4: intra-agent pass@2 = 1 - C(3 - c, 2) / 3.
    assert pass_at_k(3, c, 2) == pytest.approx(1 - {3: 3, 2: 1, 1: 0, 0: 0}[3 - c] / 3)
    for c2 in range(4):
        # Equation 5: inter-agent passX@2 = 1 - (3 - c)(3 - c') / 9.
        assert passx_at_k([c, c2], 3) == pytest.approx(1 - (3 - c) * (3 - c2) / 9)


def test_passx_hand_values():
    assert passx_at_k([1, 2], 3) == pytest.approx(7 / 9)
    assert passx_at_k([0, 0, 0], 4) == 0.0
    assert passx_at_k([4, 0], 4) == 1.0
    assert passx_at_k([2], 4) == pytest.approx(0.5)  # one agent: pass@1


def test_thresholded_passx_uses_runs_within_the_budget():
    bash = [(True, 2), (True, 7), (False, 10)]
    pdb = [(True, 9), (False, 3), (True, 1)]
    assert counts_within([bash, pdb], 5) == [1, 1]
    assert counts_within([bash, pdb], 10) == [2, 2]
    assert passx_at_k(counts_within([bash, pdb], 5), 3) == pytest.approx(1 - (2 * 2) / 9)


def test_passx_is_unbiased_by_simulation():
    rng = random.Random(20261129)
    probabilities, n, trials = (0.3, 0.55), 3, 40000
    truth = 1 - (1 - probabilities[0]) * (1 - probabilities[1])
    total = 0.0
    for _ in range(trials):
        counts = [sum(rng.random() < p for _ in range(n)) for p in probabilities]
        total += passx_at_k(counts, n)
    assert total / trials == pytest.approx(truth, abs=0.005)  # standard error here is about 0.0015


def test_wilson_interval_hand_values():
    low, high = wilson_interval(7, 10)
    assert (round(low, 4), round(high, 4)) == (0.3968, 0.8922)
    assert wilson_interval(0, 5)[0] == 0.0 and round(wilson_interval(0, 5)[1], 4) == 0.4345
    assert wilson_interval(5, 5)[1] == 1.0 and round(wilson_interval(5, 5)[0], 4) == 0.5655


def test_pass_at_k_interval_maps_wilson_s_to_pass_at_k():
    lo, hi = pass_at_k_interval(5, 1, 2)  # Wilson's for 1 of 5: (0.0362, 0.6245); 1 - (1 - x)^2 of each end
    assert (round(lo, 4), round(hi, 4)) == (0.0711, 0.859)
    assert pass_at_k_interval(7, 3, 1) == wilson_interval(3, 7)  # k = 1: pass@1 is the success rate
    assert pass_at_k_interval(5, 0, 3)[0] == 0.0 and pass_at_k_interval(5, 5, 3)[1] == 1.0
    widths = [pass_at_k_interval(10, 4, k) for k in range(1, 11)]
    assert all(a[0] <= b[0] and a[1] <= b[1] for a, b in zip(widths, widths[1:], strict=False))  # pass@k rises with k, and so does its interval


@pytest.mark.parametrize("p", [0.05, 0.3, 0.5, 0.8])
def test_pass_at_k_interval_covers_the_true_pass_at_k_as_often_as_wilson_s_covers_p(p):
    """Exact coverage over every outcome of n = 6 runs: the mapping keeps it (1 - (1 - p)^k rises with p)."""
    n, k = 6, 3
    truth = 1 - (1 - p) ** k
    for c in range(n + 1):
        wilson = wilson_interval(c, n)
        lo, hi = pass_at_k_interval(n, c, k)
        assert (wilson[0] <= p <= wilson[1]) == (lo - 1e-12 <= truth <= hi + 1e-12), c


def test_mean_std():
    assert mean_std([0.85, 0.8, 0.9]) == (pytest.approx(0.85), pytest.approx(0.05))
    assert mean_std([0.5]) == (0.5, 0.0)


@pytest.mark.parametrize("bad", [lambda: pass_at_k(3, 4, 1), lambda: pass_at_k(3, 1, 4), lambda: passx_at_k([], 3), lambda: wilson_interval(3, 0),
                                 lambda: pass_at_k_interval(3, 1, 4)])
def test_invalid_input_is_refused(bad):
    with pytest.raises(ValueError):
        bad()


def test_a_submission_is_counted_by_the_tool_it_runs_an_alias_and_a_family_s_own_action_too(runtime):
    from env.families.registry import FAMILIES

    classic = FAMILIES["classic"].episode(runtime, runtime.catalog.get("easy"), 1, "m-classic")
    repo = FAMILIES["repo"].episode(runtime, runtime.catalog.get("repo-slice-window"), 1, "m-repo")
    procedural = FAMILIES["procedural"].episode(runtime, runtime.catalog.get("proc-easy-train-0"), 1, "m-proc")
    try:
        assert classic.submits("submit_fix") and not classic.submits("query_context") and not classic.submits("give_up")
        assert repo.submits("submit") and repo.submits("finish") and not repo.submits("run_tests") and not repo.submits("nope")
        assert procedural.submits("submit") and not procedural.submits("run_tests")  # it runs submit_short, a tool that submits
    finally:
        for episode in (classic, repo, procedural):
            episode.close()
