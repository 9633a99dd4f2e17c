"""Reward integrity (red team): every point of reward and grade is earned by evidence the agent cannot fake.

One test per cheat that was measured against the first build: the seed-replay forge of the race
verdict, the no-op family, stuffed hypotheses, reward pumping, and credit for edits that fix nothing,
on every classic task, every bundled repository task and a sample of procedural tasks.
"""

from __future__ import annotations

import json
import random
import re

import pytest

from env.authoring.degenerate import degenerate_policies, noop_variants
from env.contract import TaskFilter
from env.eval.run import SecretMismatch, run
from env.families.classic.concurrency import explore_plan, setup_state
from env.families.repo.family import REPO
from env.runtime import Runtime
from env.secret import SecretError, ServerSecret
from env.server.in_process import InProcessDriver
from env.verdict.outcome import RepoVerdict
from tests.golden.pins import assert_pinned, pinned, play, played
from tests.helpers import BUGGY, CATALOG, GOLD, GOOD_HYPOTHESIS, submit

CLASSIC_IDS = ["easy", "medium", "hard"]
REPO_IDS = [t.id for t in CATALOG.select(TaskFilter(family="repo"))]
PROCEDURAL_SAMPLE = ["proc-easy-test-0", "proc-medium-test-0", "proc-hard-test-0", "proc-extreme-test-0", "proc-medium-train-7"]
# Every degenerate policy played here also has its exact rewards, grade and breakdown pinned in
# tests/golden/rewards.json ("degenerate" / task / hypothesis kind / policy): a refactoring changes none.


def step_parts(obs) -> dict[str, float]:
    """The step's own reward terms (the breakdown also carries the running grade's components)."""
    return {k: v for k, v in obs.breakdown.items() if "." not in k}


def outcome(observations: list) -> tuple[float, float]:
    rewards = [o.reward for o in observations[1:]]
    return observations[-1].grader_score, round(sum(rewards), 6)


# -- degenerate policies ----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["wrong", "stuffed", "correct"])
@pytest.mark.parametrize("task_id", CLASSIC_IDS)
def test_degenerate_classic_policies_score_exactly_zero(runtime, task_id, kind):
    # With the gold hypothesis too: a diagnosis pays only with a fix (issue 32; it paid the hypothesis weight before).
    exact = {}
    for name, actions in degenerate_policies(CATALOG.get(task_id), kind).items():
        observations = play(runtime, task_id, actions)[1]
        grade, total = outcome(observations)
        assert grade == 0.0, f"{task_id} {name} with a {kind} hypothesis graded {grade}"
        assert total <= 0.0, f"{task_id} {name} summed {total}"
        exact[name] = played(observations)
    assert_pinned("rewards.json", ["degenerate", task_id, kind], exact)


@pytest.mark.parametrize("task_id", REPO_IDS + PROCEDURAL_SAMPLE)
def test_degenerate_repository_and_procedural_policies_score_exactly_zero(runtime, task_id):
    exact = {}
    for name, actions in degenerate_policies(CATALOG.get(task_id)).items():
        _, observations = play(runtime, task_id, actions)
        errors = [o.error for o in observations if o.error]
        assert not errors, f"{task_id} {name}: the policy itself went wrong: {errors}"
        grade, total = outcome(observations)
        assert grade == 0.0, f"{task_id} {name} graded {grade}: {observations[-1].breakdown}"
        assert total <= 0.0, f"{task_id} {name} summed {total}"
        exact[name] = played(observations)
    assert_pinned("rewards.json", ["degenerate", task_id, "wrong"], exact)


def test_every_degenerate_policy_played_here_is_pinned_and_nothing_else():
    kinds = {t: ["correct", "stuffed", "wrong"] for t in CLASSIC_IDS} | {t: ["wrong"] for t in REPO_IDS + PROCEDURAL_SAMPLE}
    assert {t: sorted(by_kind) for t, by_kind in pinned("rewards.json", ["degenerate"]).items()} == kinds


def test_the_noop_family_covers_comments_extra_functions_renamed_locals_and_reordered_imports():
    variants = {name for t in CLASSIC_IDS for name in noop_variants(CATALOG.get(t))}
    assert variants == {"comment_next_to_bug", "extra_function", "renamed_local", "reordered_imports"}


@pytest.mark.parametrize("task_id", ["easy", "medium"])
def test_a_noop_edit_earns_nothing_even_with_the_right_diagnosis(runtime, task_id):
    code = noop_variants(CATALOG.get(task_id))["extra_function"]
    _, observations = play(runtime, task_id, [submit(code, GOOD_HYPOTHESIS[task_id])])
    last = observations[-1]
    assert last.breakdown["grader.test_credit"] == 0.0
    assert last.breakdown["grader.hypothesis"] == 0.0  # the hypothesis weight (0.15) before issue 32
    assert last.grader_score == 0.0
    assert step_parts(observations[1]) == {"stagnation": -0.05}


def test_breaking_a_passing_test_cancels_a_fixed_one(runtime):
    # easy: the fix of the loop with a broken empty-list case passes 7 of 8 (the bug passes 6 of 8).
    code = GOLD["easy"].replace("def binary_search(arr, target):", "def binary_search(arr, target):\n    if not arr:\n        return 0", 1)
    _, observations = play(runtime, "easy", [submit(code, GOOD_HYPOTHESIS["easy"])])
    assert observations[1].tests_passed == 7
    assert observations[-1].breakdown["grader.test_credit"] == 0.5  # (7 - 6) / 2


# -- gated terms scale with their gate (issue 46) -----------------------------------------------

# easy's bug with one-element lists handled and the off-by-one kept.
ONE_ELEMENT = BUGGY["easy"].replace(
    "    left, right = 0, len(arr) - 1\n", "    if len(arr) == 1:\n        return 0 if arr[0] == target else -1\n    left, right = 0, len(arr) - 1\n", 1
)


def grader_parts(obs) -> dict[str, float]:
    return {k: v for k, v in obs.breakdown.items() if k.startswith("grader.")}


def test_a_partial_fix_with_the_gold_diagnosis_earns_only_its_share_of_the_diagnosis(runtime):
    # 7 of 8 tests (the bug passes 6) and 1 of the 7 held-out cases the bug fails (the one-element find): credit 1/7.
    _, observations = play(runtime, "easy", [submit(ONE_ELEMENT, GOOD_HYPOTHESIS["easy"])])
    assert observations[1].tests_passed == 7
    assert grader_parts(observations[-1]) == {
        "grader.test_credit": 0.142857, "grader.efficiency": 0.0, "grader.hypothesis": 0.142857, "grader.early_solve": 0.0,
    }
    # 0.60 x 1/7 + 0.15 x 1.0 x 1/7; it was 0.235714 with the whole hypothesis term paid.
    assert observations[-1].grader_score == 0.107143
    _, poor = play(runtime, "easy", [submit(ONE_ELEMENT, "something is wrong")])
    assert poor[-1].breakdown["grader.hypothesis"] == 0.0 and poor[-1].grader_score == 0.085714
    _, gold = play(runtime, "easy", [submit(GOLD["easy"], GOOD_HYPOTHESIS["easy"])])
    assert gold[-1].grader_score == 0.96  # the fix in full earns the diagnosis in full


def test_a_repository_fix_of_one_boundary_at_the_gold_location_earns_only_its_share_of_the_localisation(runtime):
    # page_count rounds up only when one item spills over: 2 of the 6 visible F2P tests pass and 2 of the 4 held-out
    # ones, no P2P test breaks (PARTIAL, share min(1/3, 1/2), resolution 0.5 x 1/3), all in the gold patch's file,
    # function and lines (overlap 1.0).
    edit = {
        "action_type": "replace_text", "path": "catalog/pagination.py", "old_text": "    return max(1, total // per_page)",
        "new_text": "    return max(1, total // per_page + (total % per_page == 1))",
    }
    _, observations = play(runtime, "repo-pagination-off-by-one", [edit, {"action_type": "submit"}])
    last = observations[-1]
    assert last.done and last.info["resolved"] is False
    share = {"grader.resolution": 0.166667, "grader.localisation": 0.166667, "grader.efficiency": 0.0}
    assert grader_parts(last) == share | {f"grader.localisation.{k}": 0.166667 for k in ("files", "functions", "lines")}
    assert last.grader_score == 0.15  # 0.7 x 1/6 + 0.2 x 1.0 x 1/6; it was 0.316667 with the whole localisation term paid


# -- pumping -----------------------------------------------------------------------------------


def test_alternating_a_broken_submission_with_the_bug_pumps_nothing(runtime):
    # Measured against the first build: +0.25 on hard with nothing fixed. Progress is now measured
    # against the best outcome so far, so each broken run costs and the bug earns nothing back.
    actions = degenerate_policies(CATALOG.get("hard"), "wrong")["alternating"]
    _, observations = play(runtime, "hard", actions)
    assert [o.reward for o in observations[1:3]] == [-0.1, -0.05]
    assert outcome(observations) == (0.0, -0.75)


def test_progress_pays_once_per_test_gained(runtime):
    partial = GOLD["easy"].replace("def binary_search(arr, target):", "def binary_search(arr, target):\n    if len(arr) == 1:\n        return -1", 1)
    actions = [submit(partial, GOOD_HYPOTHESIS["easy"]), submit(BUGGY["easy"] + "\n# again\n", "x"), submit(partial, GOOD_HYPOTHESIS["easy"])]
    _, observations = play(runtime, "easy", actions)
    assert [o.tests_passed for o in observations[1:4]] == [7, 6, 7]
    # Of 8 tests and 13 held-out cases: the bug passes 6 and 6, the partial fix 7 and 12 (it fails one-element finds).
    assert [step_parts(o) for o in observations[1:4]] == [
        {"progress": round(0.15 * 7 / 21, 6)},
        {"regression": round(-0.10 * 7 / 21, 6)},
        {"stagnation": -0.05},
    ]


def _verdict(task, f2p_passing: int, p2p_broken: int) -> RepoVerdict:
    outcomes = {t: ("PASSED" if i < f2p_passing else "FAILED") for i, t in enumerate(task.fail_to_pass)}
    outcomes.update({t: ("FAILED" if i < p2p_broken else "PASSED") for i, t in enumerate(task.pass_to_pass)})
    return RepoVerdict(outcomes=outcomes)


def test_repository_runs_that_pass_fail_to_pass_by_breaking_pass_to_pass_earn_nothing(runtime):
    # Measured against the first build: +0.30 for the F2P tests, -0.20 for the broken P2P one, +0.10 net.

    task = CATALOG.get("repo-pagination-off-by-one")
    episode = REPO.episode(runtime, task, 1, "e1")
    try:
        n_f2p, n_p2p = len(task.fail_to_pass), len(task.pass_to_pass)
        breaking = episode._record_run(_verdict(task, n_f2p, 1))
        restored = episode._record_run(_verdict(task, 0, 0))
        again = episode._record_run(_verdict(task, n_f2p, 1))
        assert breaking == {"p2p_regression": round(-0.2 / n_p2p, 6)}
        assert restored == {}
        assert again == {"p2p_regression": round(-0.2 / n_p2p, 6)}
        # A clean run pays for the F2P tests once; running it again pays nothing.
        assert episode._record_run(_verdict(task, n_f2p, 0)) == {"f2p_progress": 0.3}
        assert episode._record_run(_verdict(task, n_f2p, 0)) == {}
        # A run that did not run every P2P test cannot tell whether it broke one: no progress from it.
        fresh = REPO.episode(runtime, task, 1, "e2")
        subset = RepoVerdict(outcomes={t: "PASSED" for t in task.fail_to_pass})
        assert fresh._record_run(subset) == {}
        fresh.close()
    finally:
        episode.close()


# -- the race verdict's secret ------------------------------------------------------------------

def forge(totals: list[int]) -> str:
    """The buggy counter, race intact, whose get_count answers the given totals after each threaded round."""
    source = BUGGY["hard"].replace("import threading\n", f"import threading\n\nTOTALS = {totals!r}\nROUNDS = [0]\n", 1)
    source = source.replace("        self.peak = 0\n", "        self.peak = 0\n        self.threaded = False\n", 1)
    source = source.replace(
        "    def increment(self):\n",
        "    def increment(self):\n        if threading.current_thread() is not threading.main_thread():\n            self.threaded = True\n", 1,
    )
    source = source.replace(  # threaded decrements never raise, so only the count can give the race away
        "    def decrement(self):\n",
        "    def decrement(self):\n        if threading.current_thread() is not threading.main_thread():\n"
        "            self.threaded = True\n            self.count -= 1\n            return self.count\n", 1,
    )
    return source.replace(
        "    def get_count(self):\n",
        "    def get_count(self):\n        if self.threaded:\n            ROUNDS[0] += 1\n            return TOTALS[(ROUNDS[0] - 1) % len(TOTALS)]\n", 1,
    )


def _totals(rng: random.Random) -> list[int]:
    """The final counts a correct counter reaches in each scenario of the plan ``rng`` makes."""
    scenarios = explore_plan(CATALOG.get("hard").stress, rng)["scenarios"]
    return [setup_state(tuple(s["setup"]))[0] + sum(op == "increment" for t in s["threads"] for op in t) - sum(op == "decrement" for t in s["threads"] for op in t) for s in scenarios]


def test_the_seed_replay_forge_of_the_race_verdict_fails(runtime):
    # The first build derived the stress plans from random.Random(seed), and /state shows the seed:
    # a submission replayed them and answered the totals from get_count (grade 1.0, race intact).
    # The plans now derive from the server's secret: replaying the public seed predicts nothing.
    seed = 4242
    public = explore_plan(CATALOG.get("hard").stress, random.Random(seed))
    secret = explore_plan(CATALOG.get("hard").stress, runtime.secret.rng("classic", "hard", seed, "verdict"))
    assert public != secret
    _, observations = play(runtime, "hard", [submit(forge(_totals(random.Random(seed))), GOOD_HYPOTHESIS["hard"])], seed=seed)
    first = observations[1]
    assert not first.done and "solve_bonus" not in first.breakdown
    assert "concurrency check ... FAILED" in first.current_error_output


def test_reports_never_show_the_expected_count(runtime):
    _, observations = play(runtime, "hard", [submit(BUGGY["hard"] + "\n\ndef helper():\n    return 1\n", GOOD_HYPOTHESIS["hard"])])
    report = observations[1].current_error_output
    check = report[report.index("concurrency check"):].splitlines()
    assert check[0] == "concurrency check ... FAILED"
    assert "expected" not in report
    assert re.fullmatch(r"    2 threads \(thread A: \w+; thread B: \w+\) on one shared counter, interleaved by a controlled scheduler: "
                        r"updates were lost under concurrency \(the final count is wrong\)\.", check[1])


def test_the_same_secret_and_seed_give_the_same_verdicts_and_another_secret_other_plans(runtime):
    spec = CATALOG.get("hard").stress
    shared = ServerSecret("a secret shared by two replicas")
    assert explore_plan(spec, shared.rng("classic", "hard", 7, "verdict")) == explore_plan(spec, shared.rng("classic", "hard", 7, "verdict"))
    other = ServerSecret("another secret, another server").rng("classic", "hard", 7, "verdict")
    assert explore_plan(spec, other) != explore_plan(spec, shared.rng("classic", "hard", 7, "verdict"))
    oracle = [submit(GOLD["hard"], GOOD_HYPOTHESIS["hard"])]
    first, second = (outcome(play(runtime, "hard", oracle, seed=7)[1]) for _ in range(2))
    assert first == second == (1.0, 0.5)


def test_a_short_secret_is_refused(monkeypatch):
    with pytest.raises(SecretError, match="ENV_SECRET is 5 characters long; it needs at least 16"):
        ServerSecret("short")
    monkeypatch.setenv("ENV_SECRET", "x" * 20)
    assert not ServerSecret.from_env().generated
    monkeypatch.delenv("ENV_SECRET")
    generated = ServerSecret.from_env()
    assert generated.generated and "ServerSecret(fingerprint=" in repr(generated)


def test_the_fingerprint_is_published_and_the_secret_is_not(client, runtime):
    secret = "the test suite's own secret, fixed for reproducible verdicts"
    health = client.get("/health").json()
    assert health["secret_fingerprint"] == runtime.secret.fingerprint and len(runtime.secret.fingerprint) == 16
    reset = client.post("/reset", json={"task_id": "easy", "seed": 3}).json()
    assert reset["observation"]["info"]["secret_fingerprint"] == runtime.secret.fingerprint
    state = client.get("/state", params={"episode_id": reset["observation"]["episode_id"]}).json()
    assert state["secret_fingerprint"] == runtime.secret.fingerprint
    assert secret not in json.dumps([health, reset, state])


def test_a_resumed_evaluation_under_another_secret_refuses(runtime, catalog, isolation, tmp_path):
    run(lambda: InProcessDriver(runtime), "random", ["easy"], 1, 1, tmp_path)
    recorded = json.loads((tmp_path / "results.jsonl").read_text().splitlines()[0])
    assert recorded["secret_fingerprint"] == runtime.secret.fingerprint
    other = Runtime(catalog, runtime.sandbox, workers=2, secret=ServerSecret("a different secret for this run"))
    with pytest.raises(SecretMismatch, match=f"fingerprint {runtime.secret.fingerprint}; this environment's is {other.secret.fingerprint}"):
        run(lambda: InProcessDriver(other), "random", ["easy"], 2, 1, tmp_path)


# -- structured hypothesis fields -----------------------------------------------------------------


def test_structured_fields_are_scored_exactly(runtime):
    action = {**submit(GOLD["medium"], "The hashes never match."), "suspect": "hash_password", "mechanism": "wrong_representation"}
    _, observations = play(runtime, "medium", [action])
    assert observations[-1].breakdown["grader.hypothesis"] == 1.0
    wrong = {**action, "suspect": "authenticate_user", "mechanism": "race_condition"}
    _, observations = play(runtime, "medium", [wrong])
    assert observations[-1].breakdown["grader.hypothesis"] == 0.0
    by_line = {**action, "suspect": "auth.py:7"}
    _, observations = play(runtime, "medium", [by_line])
    assert observations[-1].breakdown["grader.hypothesis"] == 1.0


def test_an_unknown_mechanism_is_the_agents_mistake(runtime):
    _, observations = play(runtime, "easy", [{**submit(GOLD["easy"], "x"), "mechanism": "gremlins"}])
    assert observations[1].error.startswith("field 'mechanism' is 'gremlins'; expected one of: off_by_one, wrong_operator")
    assert observations[1].tests_passed == 6  # nothing ran


def test_a_repository_submit_reports_its_claim_without_changing_the_grade(runtime):
    task = CATALOG.get("repo-slice-window")
    from env.authoring.oracle import oracle_actions

    actions = oracle_actions(task)
    claimed = actions[:-1] + [{"action_type": "submit", "suspect": "sliding", "mechanism": "off_by_one", "hypothesis": "range stops one short"}]
    _, observations = play(runtime, task.id, claimed)
    _, plain = play(runtime, task.id, actions)
    assert observations[-1].breakdown["claim.suspect"] == 1.0 and observations[-1].breakdown["claim.mechanism"] == 1.0
    assert observations[-1].grader_score == plain[-1].grader_score
    _, wrong = play(runtime, task.id, actions[:-1] + [{"action_type": "submit", "suspect": "tumbling", "mechanism": "race_condition"}])
    assert (wrong[-1].breakdown["claim.suspect"], wrong[-1].breakdown["claim.mechanism"]) == (0.0, 0.0)


def test_tasks_publish_the_mechanism_list(client):
    from env.graders.mechanisms import MECHANISMS

    for task in client.get("/tasks").json():
        assert task["mechanisms"] == MECHANISMS
        submit_tool = next(t for t in task["tools"] if t["function"]["name"] in ("submit_fix", "submit", "submit_short"))
        assert submit_tool["function"]["parameters"]["properties"]["mechanism"]["enum"] == list(MECHANISMS)


def test_an_in_process_evaluation_keeps_its_secret_in_its_folder(tmp_path, monkeypatch):
    import stat

    monkeypatch.delenv("ENV_SECRET", raising=False)
    first, again = ServerSecret.for_directory(tmp_path), ServerSecret.for_directory(tmp_path)
    assert first.fingerprint == again.fingerprint  # a resumed run, or another agent's, plays the same episodes
    assert stat.S_IMODE((tmp_path / "secret").stat().st_mode) == 0o600
    assert ServerSecret.for_directory(tmp_path / "other").fingerprint != first.fingerprint
    monkeypatch.setenv("ENV_SECRET", "a secret the operator chose")
    assert ServerSecret.for_directory(tmp_path).fingerprint == ServerSecret("a secret the operator chose").fingerprint
