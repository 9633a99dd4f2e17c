"""The repository grade and SWE-bench's resolution rules, as pure functions (hand-computed values)."""

from __future__ import annotations

from env import rewards
from env.families.repo.grader import RepoFacts, grade_repo, localisation
from env.patches import Location
from env.verdict.outcome import resolution

GOLD = [Location(file="a.py", function="f", start=10, end=12), Location(file="b.py", function="g", start=5, end=5)]


def facts(**kw):
    base = {"resolution": "FULL", "f2p_passed": 2, "f2p_total": 2, "changed": True, "edited": GOLD, "gold": GOLD, "steps_used": 5, "max_steps": 20}
    return RepoFacts(**{**base, **kw})


def test_resolution_follows_swebench():
    f2p, p2p = ["t1", "t2"], ["p1"]
    assert resolution({"t1": "PASSED", "t2": "XFAIL", "p1": "SKIPPED"}, f2p, p2p) == "FULL"
    assert resolution({"t1": "PASSED", "t2": "FAILED", "p1": "PASSED"}, f2p, p2p) == "PARTIAL"
    assert resolution({"t1": "PASSED", "t2": "PASSED", "p1": "FAILED"}, f2p, p2p) == "NO"
    assert resolution({"t1": "PASSED", "p1": "PASSED"}, f2p, p2p) == "PARTIAL"  # a missing test counts as failed
    assert resolution({"t1": "SKIPPED", "t2": "SKIPPED", "p1": "PASSED"}, f2p, p2p) == "NO"


def test_full_resolution_at_the_gold_location():
    grade = grade_repo(facts())
    assert grade.score == 0.975  # 0.7 + 0.2 + 0.1 x (1 - 5/20)
    assert grade.components["efficiency"] == 0.75


def test_no_change_or_give_up_is_exactly_zero():
    assert grade_repo(facts(changed=False)).score == 0.0
    assert grade_repo(facts(gave_up=True)).score == 0.0


def test_partial_resolution():
    grade = grade_repo(facts(resolution="PARTIAL", f2p_passed=1))
    # 0.7 x 0.5 x 1/2 + 0.2 x 1 x 0.25 (localisation times resolution), no efficiency without FULL; 0.375 before issue 46.
    assert grade.score == 0.225


def test_a_partial_fix_earns_its_share_of_the_localisation():
    # The gold location exactly (overlap 1.0 on files, functions and lines), half the F2P tests fixed, held-out
    # ones included (visible 2 of 2, held out 1 of 2: share 0.5): resolution 0.25, and localisation 1.0 x 0.25.
    # Issue 46: the full localisation term (0.2) was paid for it, 0.375.
    grade = grade_repo(facts(resolution="PARTIAL", f2p_passed=3, f2p_total=4, held_out_f2p_passed=1, held_out_f2p_total=2))
    assert grade.components == {
        "resolution": 0.25,
        "localisation": 0.25,
        "efficiency": 0.0,
        "localisation.files": 0.25,
        "localisation.functions": 0.25,
        "localisation.lines": 0.25,
    }
    assert grade.score == 0.225  # 0.7 x 0.25 + 0.2 x 0.25
    # FULL pays the whole overlap: the same edits, resolved.
    assert grade_repo(facts()).components["localisation"] == 1.0


def test_localisation_overlaps():
    edited = [Location(file="a.py", function="f", start=14, end=15), Location(file="c.py", function="h", start=1, end=1)]
    loc = localisation(edited, GOLD)
    # files: {a} of {a, b, c} -> 1/3; functions: (a, f) of 2 gold -> 1/2; lines: a.py 14 is within 3 of 12 -> 1 of 2
    assert loc == {"files": 0.333333, "functions": 0.5, "lines": 0.5}
    # 0.7 x 0.25 + 0.2 x (1/3 + 1/2 + 1/2) / 3 x 0.25 (localisation times resolution; 0.263889 before issue 46)
    assert grade_repo(facts(resolution="PARTIAL", f2p_passed=1, edited=edited)).score == 0.197222
    # An edit that improved no trusted outcome earns no localisation, however close it is.
    assert grade_repo(facts(resolution="NO", edited=edited)).score == 0.0
    assert grade_repo(facts(resolution="NO", edited=GOLD)).score == 0.0


def test_step_rewards():
    assert rewards.test_run_reward(1, 2, 0, 3) == {"f2p_progress": 0.15}
    assert rewards.test_run_reward(0, 2, 2, 3) == {"p2p_regression": -0.133333}
    assert rewards.test_run_reward(0, 2, 0, 3) == {}
    assert rewards.resolved_reward(True) == {"resolved_bonus": 0.5}
    assert rewards.resolved_reward(False) == {}
