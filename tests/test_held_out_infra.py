"""Held-out tests (issue 32), the repository family's infrastructure: what the agent never sees, what grades it.

One small task (the shop of tests/repo_fixture.py) holds out a FAIL_TO_PASS test added to the visible test file and a
PASS_TO_PASS test in a file of its own; its overfit fixes only what the visible test measures (a count of items).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from env.authoring import validate as validate_module
from env.authoring.holdout import changed_tests, expand, share, strip_tests
from env.authoring.importer import Instance, import_instance
from env.authoring.synthesize import defines, hold_out
from env.authoring.validate import validate_task
from env.families.catalog import TaskCatalog
from env.families.repo.family import REPO
from env.families.repo.grader import RepoFacts, grade_repo
from env.held_out import held_out_line
from env.models import DebugAction
from env.patches import apply_patch, make_patch
from env.project import RepoTask, load_repo_task
from env.runtime import Runtime
from env.verdict.repo_judge import run_graded, tree_of
from tests import repo_fixture

HIDDEN_OWNER = "hidden-owner-7"  # the held-out F2P test's input: it must never reach the agent
HELD_F2P = "tests/test_cart.py::test_new_carts_have_no_items"
HELD_P2P = "tests/test_extra.py::test_receipt_of_one_item"
HELD_NAMES = ("test_new_carts_have_no_items", "test_extra", "test_receipt_of_one_item", HIDDEN_OWNER)
HELD_F2P_CODE = f'''

def test_new_carts_have_no_items():
    Cart("ann").add("apple")
    assert list(Cart("{HIDDEN_OWNER}")) == []
'''
HELD_P2P_FILE = '''from shop.cart import Cart


def test_receipt_of_one_item():
    assert Cart("x", []).add("pear").receipt() == b"pear x1"
'''
# Fits the visible F2P test (a new cart's len is 0) and every visible P2P test, but carts still share their items.
OVERFIT = {
    "shop/cart.py": repo_fixture.CART.replace("        self.items = items\n", "        self.items = items\n        self.count = 0\n        print('owner', owner)\n")
    .replace("        self.items.append((sku, qty))\n", "        self.items.append((sku, qty))\n        self.count += 1\n")
    .replace("        return len(self.items)\n", "        return self.count\n")
}
FIX = {"action_type": "replace_text", "path": "shop/cart.py", "old_text": "items=[]", "new_text": "items=None"}
FIX2 = {"action_type": "replace_text", "path": "shop/cart.py", "old_text": "self.items = items", "new_text": "self.items = [] if items is None else items"}


def write_held_out_task(folder: Path, overfit: dict[str, str] | None = None, held_f2p: bool = True) -> Path:
    """The shop with HELD_OUT tests in test_patch.diff (never in repo/) and an overfit.patch (``held_f2p``: a held-out
    FAIL_TO_PASS test besides the held-out PASS_TO_PASS one)."""
    f2p = [*repo_fixture.F2P, HELD_F2P] if held_f2p else repo_fixture.F2P
    held = [HELD_F2P, HELD_P2P] if held_f2p else [HELD_P2P]
    repo_fixture.write_task(folder, FAIL_TO_PASS=f2p, PASS_TO_PASS=[*repo_fixture.P2P, HELD_P2P], HELD_OUT=held)
    visible = {"tests/test_cart.py": repo_fixture.TESTS}
    graded = {"tests/test_cart.py": repo_fixture.TESTS + (HELD_F2P_CODE if held_f2p else ""), "tests/test_extra.py": HELD_P2P_FILE}
    (folder / "test_patch.diff").write_text(make_patch(visible, graded), encoding="utf-8")
    buggy = repo_fixture.buggy_files()
    (folder / "overfit.patch").write_text(make_patch(buggy, {**buggy, **(overfit or OVERFIT)}), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> RepoTask:
    return load_repo_task(write_held_out_task(tmp_path_factory.mktemp("held")))


@pytest.fixture()
def episode(runtime, task):
    ep = REPO.episode(runtime, task, seed=3, episode_id="held")
    yield ep
    ep.close()


def act(episode, **fields):
    return episode.step(DebugAction(**fields))


def leaked(text: str) -> list[str]:
    return [name for name in HELD_NAMES if name in text]


def overfit(episode) -> None:
    path = "shop/cart.py"
    act(episode, action_type="create_file", path="shop/_tmp.py", content="")  # a no-op step, like an agent's exploring
    current = episode.workspace.files()[path]
    act(episode, action_type="replace_text", path=path, old_text=current, new_text=OVERFIT[path])


# -- exposure ---------------------------------------------------------------------------------------


def test_the_task_keeps_held_out_code_out_of_its_visible_tests(task):
    assert task.visible_fail_to_pass == repo_fixture.F2P and task.visible_pass_to_pass == repo_fixture.P2P
    assert not leaked(json.dumps(task.visible_tests)) and "tests/test_extra.py" not in task.files
    assert "test_new_carts_have_no_items" in task.grading_tests["tests/test_cart.py"]  # graded runs have them


def test_no_observation_state_or_listing_names_a_held_out_test(episode, task):
    views = [episode.observe(0.0, {}), act(episode, action_type="run_tests"), act(episode, action_type="list_dir", path="tests"),
             act(episode, action_type="search", pattern="def test_")]  # fmt: skip
    first = views[1]
    assert first.test_results == {t: "FAILED" if t in repo_fixture.F2P else "PASSED" for t in repo_fixture.F2P + repo_fixture.P2P}
    assert first.tool_output.splitlines()[0] == "1 failed, 3 passed"
    views.append(act(episode, action_type="submit"))
    for obs in views:
        assert not leaked(obs.model_dump_json()), obs.model_dump_json()
    assert not leaked(episode.state().model_dump_json())
    assert not leaked(json.dumps(task.summary()))


def test_a_held_out_id_answers_exactly_like_an_unknown_id(episode):
    """In the visible file, a held-out id is a test that does not run; in a file of its own, an unknown file."""
    in_file = act(episode, action_type="run_tests", test_ids=[HELD_F2P]).tool_output
    made_up = act(episode, action_type="run_tests", test_ids=["tests/test_cart.py::test_nothing_by_that_name"]).tool_output
    assert in_file.replace(HELD_F2P, "X") == made_up.replace("tests/test_cart.py::test_nothing_by_that_name", "X")
    assert made_up == "No tests ran: the test process failed (exit 0): "  # pytest selected nothing, as for any id it lacks
    other = act(episode, action_type="run_tests", test_ids=[HELD_P2P]).error
    unknown = act(episode, action_type="run_tests", test_ids=["tests/test_zzz.py::test_x"]).error
    assert other is not None and other.replace(HELD_P2P, "X") == unknown.replace("tests/test_zzz.py::test_x", "X")
    assert not leaked(other.replace(HELD_P2P, "X"))  # the list of the task's tests it offers holds visible ones only
    bare = act(episode, action_type="debug_start", test="test_new_carts_have_no_items").error
    none = act(episode, action_type="debug_start", test="test_nothing_by_that_name").error
    assert bare is not None and bare.replace("test_new_carts_have_no_items", "X") == none.replace("test_nothing_by_that_name", "X")


# -- graded runs, resolution, grade and rewards -----------------------------------------------------


def test_the_held_out_line():
    assert [held_out_line(n) for n in (0, 1, 2)] == ["0 held-out tests failed", "1 held-out test failed", "2 held-out tests failed"]


def test_the_gold_fix_sees_the_count_and_earns_the_rest_of_its_progress_on_submit(episode):
    act(episode, **FIX)
    act(episode, **FIX2)
    obs = act(episode, action_type="run_tests")
    assert obs.breakdown == {"f2p_progress": 0.15}  # 1 of 2 F2P tests: the held-out one has not run
    obs = act(episode, action_type="submit")
    assert obs.tool_output.splitlines()[:2] == ["4 passed", "0 held-out tests failed"]
    assert obs.info["resolved"] is True and obs.breakdown["f2p_progress"] == 0.15 and obs.breakdown["resolved_bonus"] == 0.5
    assert obs.cumulative_reward == 0.8
    assert obs.test_results == {t: "PASSED" for t in repo_fixture.F2P + repo_fixture.P2P}
    # 0.7 x 1 (FULL) + 0.2 x 1 (the gold patch's lines) + 0.1 x (1 - 4/12)
    assert obs.grader_score == 0.966667


def test_an_overfit_passes_the_visible_tests_and_grades_exactly_zero(episode):
    overfit(episode)
    obs = act(episode, action_type="run_tests")
    assert obs.tool_output.splitlines()[0] == "4 passed" and "owner bob" in obs.tool_output
    assert obs.breakdown == {"f2p_progress": 0.15}  # the visible share only: half the F2P progress
    obs = act(episode, action_type="submit")
    assert obs.tool_output.splitlines()[:2] == ["4 passed", "1 held-out test failed"]
    assert HIDDEN_OWNER not in obs.tool_output  # the project printed its input in the held-out run: never shown
    assert obs.info["resolved"] is False and obs.breakdown.get("resolved_bonus") is None
    assert obs.reward == 0.0 and obs.cumulative_reward == 0.15
    assert obs.grader_score == 0.0
    assert (obs.breakdown["grader.resolution"], obs.breakdown["grader.localisation"]) == (0.0, 0.0)


def test_the_graded_run_keeps_held_out_outcomes_apart(runtime, task):
    verdict = run_graded(runtime.sandbox, task, apply_patch(task.files, task.overfit_patch))
    assert verdict.held_out == {HELD_F2P: "FAILED", HELD_P2P: "PASSED"}
    assert set(verdict.outcomes) == set(repo_fixture.F2P + repo_fixture.P2P)
    assert not leaked(verdict.output + json.dumps(verdict.excerpts))


def test_partial_credit_is_the_smaller_of_the_visible_and_held_out_f2p_shares():
    base = {"changed": True, "edited": [], "gold": [], "steps_used": 5, "max_steps": 10}
    facts = RepoFacts(resolution="PARTIAL", f2p_passed=3, f2p_total=5, held_out_f2p_passed=1, held_out_f2p_total=2, **base)
    assert facts.f2p_share() == 0.5 and grade_repo(facts).components["resolution"] == 0.25  # visible 2/3, held-out 1/2
    fitted = facts.model_copy(update={"f2p_passed": 3, "held_out_f2p_passed": 0})  # every visible F2P, no held-out one
    assert grade_repo(fitted).score == 0.0 and grade_repo(fitted).components["localisation"] == 0.0
    only_held = RepoFacts(resolution="PARTIAL", f2p_passed=1, f2p_total=2, held_out_f2p_passed=1, held_out_f2p_total=2, **base)
    assert only_held.f2p_share() == 0.5  # every F2P test held out: the held-out share alone
    plain = RepoFacts(resolution="PARTIAL", f2p_passed=1, f2p_total=4, **base)
    assert grade_repo(plain).components["resolution"] == 0.125  # no held-out tests: as before


# -- the sandbox -----------------------------------------------------------------------------------


def test_the_projects_code_cannot_read_the_held_out_test_files(runtime, task):
    """The trusted test process runs in a tree holding the held-out tests; the project's code tries to read it."""
    tree = tree_of(task, graded=True)
    target = os.path.join(tree, "tests", "test_extra.py")
    assert os.path.exists(target) and HELD_P2P_FILE in Path(target).read_text()
    probe = "".join(
        f"try:\n    print('READ', len(open({p!r}).read()) if {p!r}.endswith('.py') else os.listdir({p!r}))\n"
        f"except OSError as exc:\n    print('DENIED', type(exc).__name__)\n"
        for p in (target, os.path.join(tree, "tests", "test_cart.py"), tree)
    )
    episode = REPO.episode(runtime, task, seed=1, episode_id="reader")
    try:
        act(episode, action_type="replace_text", path="shop/prices.py", old_text="from decimal import Decimal\n", new_text="import os\nfrom decimal import Decimal\n" + probe)
        obs = act(episode, action_type="submit")  # a graded run: the held-out tree exists and is in use
        assert "READ" not in obs.tool_output and obs.tool_output.count("DENIED PermissionError") >= 3, obs.tool_output
    finally:
        episode.close()


# -- validation --------------------------------------------------------------------------------------


def failing(report) -> dict[str, str]:
    return {c.name: c.detail for c in report.checks if not c.ok}


def test_validation_proves_the_held_out_tests_and_the_overfit(runtime, task):
    report = validate_task(runtime, task, runs=1)
    assert failing(report) == {}
    names = [c.name for c in report.checks]
    for name in ("held-out tests are only in test_patch.diff", "buggy state fails a held-out test", "gold patch is resolved under the graded run",
                 "overfit.patch passes every visible test", "overfit.patch is not resolved"):  # fmt: skip
        assert name in names


def test_validation_refuses_an_overfit_the_held_out_tests_do_not_catch(runtime, tmp_path):
    gold = repo_fixture.gold_files()
    task = load_repo_task(write_held_out_task(tmp_path / "t", overfit={"shop/cart.py": gold["shop/cart.py"]}, held_f2p=False))
    assert failing(validate_task(runtime, task, runs=1)) == {
        "buggy state fails a held-out test": "the bug passes every held-out test",
        "overfit.patch is not resolved": "it is resolved: no held-out test catches it",
    }


def test_validation_refuses_held_out_code_left_in_the_visible_tests(runtime, tmp_path):
    folder = write_held_out_task(tmp_path / "t")
    data = json.loads((folder / "task.json").read_text())
    (folder / "task.json").write_text(json.dumps({**data, "HELD_OUT": [*data["HELD_OUT"], "tests/test_cart.py::test_total_and_contents"]}))
    assert failing(validate_task(runtime, load_repo_task(folder), runs=1))["held-out tests are only in test_patch.diff"] == (
        "repo/ holds tests/test_cart.py::test_total_and_contents"
    )


def test_a_bundled_task_without_held_out_tests_or_overfit_is_invalid(runtime, tmp_path, monkeypatch):
    monkeypatch.setattr(validate_module, "TASKS_DIR", tmp_path)
    task = load_repo_task(repo_fixture.write_task(tmp_path / "repo" / "shop-cart"))
    assert failing(validate_task(runtime, task, runs=1)) == {
        "bundled task holds out tests (HELD_OUT)": "task.json names no HELD_OUT tests",
        "bundled task records an overfit (overfit.patch)": "no overfit.patch in shop-cart",
    }


# -- authoring: the importer and synthesis ------------------------------------------------------------


def test_strip_tests_removes_whole_functions_and_keeps_classes_valid():
    source = "import pytest\n\n\n@pytest.mark.parametrize('x', [1, 2])\ndef test_a(x):\n    assert x\n\n\nclass TestB:\n    def test_c(self):\n        pass\n\n\ndef test_e():\n    pass\n"
    files = {"tests/test_m.py": source}
    ids = ["tests/test_m.py::test_a[1]", "tests/test_m.py::TestB::test_c"]
    assert strip_tests(files, ids)["tests/test_m.py"] == "import pytest\n\n\n\n\nclass TestB:\n    pass\n\n\ndef test_e():\n    pass\n"
    listed = ["tests/test_m.py::test_a[1]", "tests/test_m.py::test_a[2]", "tests/test_m.py::test_e"]
    assert expand(["tests/test_m.py::test_a[1]"], listed) == listed[:2]  # a parametrisation's siblings go with it
    changed = {"tests/test_m.py": source.replace("def test_e():\n    pass", "def test_e():\n    assert 1")}
    assert changed_tests(files, changed, listed) == ["tests/test_m.py::test_e"]


def test_synthesis_holds_out_a_third_by_function_never_every_failing_one():
    failing = [f"t.py::test_f{i}" for i in range(6)]
    passing = [f"t.py::test_p{i}" for i in range(6)]
    held = hold_out("lib-abc", failing, passing[:3], passing)
    assert held == hold_out("lib-abc", failing, passing[:3], passing)  # deterministic
    assert len([t for t in held if t in failing]) == 2 and len([t for t in held if t in passing]) == 1
    assert hold_out("lib-abc", failing[:1], passing[:3], passing) == []  # one failing test: none held out
    two = hold_out("lib-abc", failing[:2], [], [])
    assert len(two) == 1  # at least one, never both
    assert share(failing, 1 / 3, "salt", minimum=1, keep=1) == ["t.py::test_f0", "t.py::test_f3"]  # by a hash of salt and test



def test_a_test_its_class_inherits_is_never_held_out():
    # addict's ChildDictTests and cachetools' decorator tests inherit every test of a base class: their ids name the
    # subclass, whose body defines none of them, so no code could leave repo/ (the task was refused as
    # "test_patch.diff does not define ..."); the base class's own ids may be held out, their code is theirs.
    source = (
        "class Base:\n    def test_a(self):\n        assert 1\n\n    def test_b(self):\n        assert 1\n\n    def test_c(self):\n        assert 1\n\n\n"
        "class TestChild(Base):\n    pass\n\n\nclass TestBase(Base):\n    def test_d(self):\n        assert 1\n"
    )
    files = {"t.py": source}
    inherited = [f"t.py::TestChild::test_{n}" for n in "abc"]
    own = ["t.py::TestBase::test_d", "t.py::Base::test_a", "t.py::Base::test_b"]
    failing = inherited + own
    for salt in (f"lib-{i}" for i in range(40)):
        held = hold_out(salt, failing, [], [], defines(files))
        assert held and not set(held) & set(inherited), held
        assert set(held) < set(own)
    assert hold_out("lib-0", inherited + own[:1], [], [], defines(files)) == []  # one holdable failing test: it stays visible
    assert defines(files)("t.py::TestBase::test_d") and not defines(files)("t.py::TestChild::test_a")

def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout.strip()


def test_the_importer_holds_out_what_the_test_patch_adds_or_changes(runtime, tmp_path):
    clone = tmp_path / "clone"
    clone.mkdir()
    base_tests = repo_fixture.TESTS.replace("    assert len(Cart(\"eve\", []).add(\"plum\", 5)) == 1", "    assert Cart(\"eve\", []).add(\"plum\", 5)")
    files = {**repo_fixture.buggy_files(), "tests/test_cart.py": base_tests}
    for rel, text in files.items():
        (clone / rel).parent.mkdir(parents=True, exist_ok=True)
        (clone / rel).write_text(text)
    git(clone, "init", "-q")
    git(clone, "add", "-A")
    git(clone, "commit", "-qm", "base")
    graded = {"tests/test_cart.py": repo_fixture.TESTS + HELD_F2P_CODE}  # changes test_stock_can_be_patched, adds one
    instance = Instance.model_validate({
        "instance_id": "acme__shop-2", "base_commit": git(clone, "rev-parse", "HEAD"),
        "patch": make_patch(repo_fixture.buggy_files(), repo_fixture.gold_files()),
        "test_patch": make_patch({"tests/test_cart.py": base_tests}, graded), "problem_statement": "New carts are not empty.",
        "FAIL_TO_PASS": json.dumps([*repo_fixture.F2P, HELD_F2P]), "PASS_TO_PASS": json.dumps(repo_fixture.P2P),
    })  # fmt: skip
    task = load_repo_task(import_instance(instance, clone, tmp_path / "out", say=lambda _: None))
    changed = "tests/test_cart.py::test_stock_can_be_patched"
    assert task.held_out == [HELD_F2P, changed]
    visible = task.files["tests/test_cart.py"]
    assert "test_stock_can_be_patched" not in visible and "test_new_carts_have_no_items" not in visible  # nor its old version
    assert task.grading_tests["tests/test_cart.py"] == graded["tests/test_cart.py"]
    assert failing(validate_task(runtime, task, runs=1)) == {}


def test_a_task_whose_every_f2p_test_is_held_out_stays_valid_and_solvable(runtime, tmp_path):
    """A synthesized task's instance names HELD_OUT; re-imported from the release it keeps them out of repo/ again."""
    clone = tmp_path / "clone"
    clone.mkdir()
    for rel, text in repo_fixture.buggy_files().items():
        (clone / rel).parent.mkdir(parents=True, exist_ok=True)
        (clone / rel).write_text(text)
    git(clone, "init", "-q")
    git(clone, "add", "-A")
    git(clone, "commit", "-qm", "base")
    instance = Instance.model_validate({
        "instance_id": "acme__shop-3", "base_commit": git(clone, "rev-parse", "HEAD"),
        "patch": make_patch(repo_fixture.buggy_files(), repo_fixture.gold_files()), "problem_statement": "New carts are not empty.",
        "FAIL_TO_PASS": repo_fixture.F2P, "PASS_TO_PASS": repo_fixture.P2P, "HELD_OUT": json.dumps(repo_fixture.F2P),
    })  # fmt: skip
    task = load_repo_task(import_instance(instance, clone, tmp_path / "out", say=lambda _: None))
    assert task.held_out == repo_fixture.F2P and task.visible_fail_to_pass == []
    assert "test_new_carts_start_empty" not in task.files["tests/test_cart.py"]
    assert failing(validate_task(runtime, task, runs=1)) == {}
    solver = Runtime(TaskCatalog([task]), runtime.sandbox)
    episode = REPO.episode(solver, task, seed=1, episode_id="all-held")
    try:
        assert act(episode, action_type="run_tests").tool_output == "3 passed"
        act(episode, **FIX)
        act(episode, **FIX2)
        final = act(episode, action_type="submit")
        assert final.tool_output.splitlines()[:2] == ["3 passed", "0 held-out tests failed"] and final.info["resolved"] is True
    finally:
        episode.close()


def test_a_held_out_method_is_found_in_its_own_class_not_by_its_name():
    """Many test classes define test_basic: validation looks for the held-out class's own method (more-itertools'
    import was refused because other classes still defined a test_duplicates)."""
    from env.families.repo.validation import _defined

    text = "class A:\n    def test_basic(self):\n        pass\n\n\nclass B:\n    def test_other(self):\n        pass\n"
    assert _defined(text, "tests/t.py::A::test_basic")
    assert not _defined(text, "tests/t.py::B::test_basic")  # B has none, whatever A has
    assert _defined(text, "tests/t.py::B::test_other[1-2]") and not _defined(text, "tests/t.py::C::test_basic")


def test_a_gold_the_graded_run_does_not_resolve_names_each_failing_test_and_where_it_ran(runtime, tmp_path):
    # A FAIL_TO_PASS case only the held-out test patch defines, listed as visible: the visible run never collects it
    # (mined tasks whose new parametrised case lives in a changed data file looked like this, and said only "a test fails").
    folder = write_held_out_task(tmp_path / "t")
    data = json.loads((folder / "task.json").read_text())
    missing = "tests/test_cart.py::test_defined_nowhere"
    (folder / "task.json").write_text(json.dumps({**data, "FAIL_TO_PASS": [*data["FAIL_TO_PASS"], missing]}))
    found = failing(validate_task(runtime, load_repo_task(folder), runs=1))
    assert found["gold patch is resolved under the graded run"] == f"PARTIAL: fails {missing} (visible: not run)"


def test_mining_holds_out_a_listed_test_only_the_grading_tests_define(runtime, tmp_path):
    # As marko 2.1.4's new spec example: a case listed as visible that only the grading tests define. The miner finds it
    # (the visible run on the gold tree never collects it) and imports the task again with it held out.
    from env.authoring.mine import Miner

    folder = write_held_out_task(tmp_path / "t")
    data = json.loads((folder / "task.json").read_text())
    added = "tests/test_extra.py::test_added_by_the_fix"
    graded = {"tests/test_cart.py": repo_fixture.TESTS + HELD_F2P_CODE, "tests/test_extra.py": HELD_P2P_FILE + "\n\ndef test_added_by_the_fix():\n    assert Cart('y', []).add('pear').receipt() == b'pear x1'\n"}
    (folder / "test_patch.diff").write_text(make_patch({"tests/test_cart.py": repo_fixture.TESTS}, graded), encoding="utf-8")
    (folder / "task.json").write_text(json.dumps({**data, "PASS_TO_PASS": [*data["PASS_TO_PASS"], added]}))
    task = load_repo_task(folder)
    report = validate_task(runtime, task, runs=1)
    assert failing(report) == {
        "gold patch is resolved under the graded run": f"NO: fails {added} (visible: not run)",
        "overfit.patch passes every visible test": f"it fails {added}",
    }
    miner = Miner("shop", tmp_path / "mined", runs=1, log=lambda line: None, sandbox=runtime.sandbox)
    assert miner.visibly_uncollected(task, report) == [added]
    valid = load_repo_task(write_held_out_task(tmp_path / "valid"))
    assert miner.visibly_uncollected(valid, validate_task(runtime, valid, runs=1)) == []  # nothing wrong: nothing to hold out
