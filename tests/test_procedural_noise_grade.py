"""The procedural family's pure parts: the grade's terms on hand-built trajectories, and noise and drift
rates within tolerance of η and δ, tied to the program (misleading attributions name real neighbours)."""

from __future__ import annotations

import random

import pytest

from env.families.procedural.grader import Act, ProcFacts, exploration, grade_procedural, redundancy, usage_of_tests
from env.families.procedural.noise import Emitter, ErrorFact, LogFacts, LogModel

FAULT = "svc/pricing.py"
RELEVANT = ["svc/pricing.py", "svc/orders.py", "svc/tax.py"]


def facts(actions, resolved=True, steps=10, changed=True, gave_up=False, improved=None):
    acts = [Act(kind=k, target=t) for k, t in actions]
    return ProcFacts(resolved=resolved, improved=resolved if improved is None else improved, gave_up=gave_up, changed=changed,
                     steps_used=steps, max_steps=40, fault_file=FAULT, relevant_files=RELEVANT, actions=acts)


METHODICAL = [("logs", ""), ("open", "svc/orders.py"), ("open", "svc/pricing.py"), ("test", ""), ("edit", FAULT), ("test", "")]
THRASHING = [("edit", "svc/orders.py"), ("edit", "svc/tax.py"), ("open", "svc/tax.py"), ("open", "svc/tax.py"), ("edit", FAULT), ("test", ""), ("test", "")]


def test_a_methodical_solve():
    f = facts(METHODICAL, steps=6)
    assert (exploration(f), usage_of_tests(f), redundancy(f)) == (2 / 3, 1.0, 0.0)
    grade = grade_procedural(f)
    # 0.4 + 0.2 x (1 - 6/40) + 0.2 x 1 + 0.2 x (0.5 x 2/3 + 0.3 x 1)
    assert grade.score == round(0.4 + 0.2 * 0.85 + 0.2 + 0.2 * (0.5 * 2 / 3 + 0.3), 6)
    assert grade.components["robustness"] == 1.0


def test_thrashing_through_wrong_files():
    f = facts(THRASHING, steps=7)
    assert exploration(f) == 0.0  # nothing opened before the first edit
    assert usage_of_tests(f) == 0.5  # tests only after the last edit
    assert redundancy(f) == 2 / 7  # the second open of tax.py, the second test run
    grade = grade_procedural(f)
    assert grade.components["robustness"] == round(1 / 3, 6)  # two wrong-file edits
    assert grade.components["reasoning"] == round(max(0.0, 0.3 * 0.5 - 0.2 * 2 / 7), 6)
    assert grade.score == round(0.4 + 0.2 * (1 - 7 / 40) + 0.2 / 3 + 0.2 * (0.15 - 0.4 / 7), 6)


def test_unsolved_but_improved_gets_no_correctness_and_no_efficiency():
    # some FAIL_TO_PASS tests pass and no PASS_TO_PASS test broke: the way of working counts
    grade = grade_procedural(facts(METHODICAL, resolved=False, improved=True))
    assert (grade.components["correctness"], grade.components["efficiency"]) == (0.0, 0.0)
    assert grade.score == round(0.2 + 0.2 * (0.5 * 2 / 3 + 0.3), 6)


def test_a_methodical_episode_that_fixed_nothing_scores_zero():
    # Robustness and reasoning paid 0.27 for this with nothing fixed; they pay only for an improved outcome now.
    grade = grade_procedural(facts(METHODICAL, resolved=False, improved=False))
    assert grade.score == 0.0 and set(grade.components.values()) == {0.0}


@pytest.mark.parametrize("kwargs", [{"changed": False}, {"gave_up": True}])
def test_no_change_or_giving_up_scores_zero(kwargs):
    assert grade_procedural(facts(METHODICAL, **kwargs)).score == 0.0


def test_redundancy_resets_after_an_edit():
    f = facts([("test", ""), ("edit", FAULT), ("test", ""), ("open", FAULT), ("open", FAULT)])
    assert redundancy(f) == 1 / 5


# -- noise and drift ------------------------------------------------------------------------------

PATH = [
    Emitter(where="svc/api.py::checkout", logger="svc.api", messages=["checkout %s started"]),
    Emitter(where="svc/orders.py::place_order", logger="svc.orders", messages=["order %d placed total=%f"]),
    Emitter(where="svc/pricing.py::price_for", logger="svc.pricing", messages=["price for %s is %f"]),
]
OTHERS = [Emitter(where="svc/audit.py::record", logger="svc.audit", messages=["audit %s written"]),
          Emitter(where="svc/metrics.py::bump", logger="svc.metrics", messages=["counter %s=%d"])]
NEIGHBOURS = ["svc/orders.py::place_order", "svc/tax.py::tax_for"]
FACTS = LogFacts(path=PATH, others=OTHERS, neighbours=NEIGHBOURS, errors=[ErrorFact(exc_type="KeyError", message="'gold'", where="svc/pricing.py::price_for")])


@pytest.mark.parametrize("eta", [0.0, 0.3, 0.8])
def test_noise_rates_follow_eta(eta):
    corrupted = lines = misattributed = errors = irrelevant = 0
    for seed in range(600):
        model = LogModel(FACTS, noise=eta, drift=0.0, rng=random.Random(seed))
        real = [line for line in model.lines if line.kind in ("trace", "error")]
        lines += len(real)
        corrupted += sum(line.corrupted for line in real)
        errors += sum(line.kind == "error" for line in real)
        misattributed += sum(line.misattributed for line in real)
        irrelevant += sum(line.kind == "irrelevant" for line in model.lines)
        for line in model.lines:
            if line.misattributed:
                assert line.where in NEIGHBOURS  # a real caller or callee, never a random file
            if line.kind == "irrelevant":
                assert line.where in {e.where for e in OTHERS}  # from the same program
    assert abs(corrupted / lines - eta) < 0.04
    assert abs(misattributed / errors - 0.7 * eta) < 0.06
    assert abs(irrelevant / lines - eta) < 0.04


@pytest.mark.parametrize("delta", [0.0, 0.25, 0.6])
def test_drift_rate_follows_delta_and_never_loses_the_error(delta):
    events = steps = 0
    for seed in range(100):
        model = LogModel(FACTS, noise=0.2, drift=delta, rng=random.Random(seed))
        for _ in range(30):
            before = model.observe()
            changed = model.tick()
            events += changed
            steps += 1
            assert sum(line.kind == "error" for line in model.lines) == 1
            if not changed:
                assert model.observe() == before  # without drift nothing moves
    assert abs(events / steps - delta) < 0.03


def test_the_same_seed_gives_the_same_logs():
    def play(seed):
        model = LogModel(FACTS, noise=0.5, drift=0.5, rng=random.Random(seed))
        out = [model.observe()]
        for _ in range(10):
            model.tick()
            out.append(model.observe())
        return out

    assert play(3) == play(3)
    assert play(3) != play(4)


def test_noise_and_drift_out_of_range():
    with pytest.raises(ValueError, match=r"noise and drift must be within \[0, 1\]"):
        LogModel(FACTS, noise=1.5, drift=0.0, rng=random.Random(0))
