"""Real repositories, part 2: a real historic bug imported from two PyPI releases, and tasks synthesized from a real
library, each proven valid and solved through the API over /ws. Both sdists and the library are downloaded from
PyPI at test time (cached after the first download); nothing third-party is committed here.

The historic bug: parse 1.20.1 did not accept a hyphen in a field name (`{user-id}`); 1.20.2 fixed it and added two
tests. The gold patch is the difference of the two releases' code, the test patch the difference of their tests.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from openenv.core.generic_client import GenericEnvClient

from env.authoring.__main__ import main as tasks_cli
from env.authoring.importer import release_files
from env.authoring.library import load_library
from env.authoring.oracle import oracle_actions
from env.authoring.sdist import SdistError
from env.authoring.synthesize import Synthesis
from env.authoring.validate import validate_task
from env.config import Settings
from env.families.catalog import TaskCatalog
from env.graders.mechanisms import MECHANISMS
from env.patches import make_patch
from env.project import RepoTask, is_test_path, load_repo_task, source_only
from env.runtime import Runtime
from env.sandbox.isolation import Isolation
from env.sandbox.limits import Limits
from env.sandbox.runner import Sandbox
from env.server.app import build_app
from env.verdict.repo_judge import run_tests
from tests.conftest import TEST_SECRET, LiveServer

BUGGY, FIXED = ("parse", "1.20.1"), ("parse", "1.20.2")
F2P = ["tests/test_parse.py::test_hyphen_inside_field_name", "tests/test_parse.py::test_hyphen_inside_field_name_collision_handling"]
LIBRARY = "parse==1.20.2"  # one module, 96 tests: the smallest real suite the bench uses


def _releases() -> tuple[dict[str, str], dict[str, str]]:
    try:
        return release_files(*BUGGY)[0], release_files(*FIXED)[0]
    except SdistError as exc:
        pytest.fail(f"this test needs the sdists of parse 1.20.1 and 1.20.2 from PyPI (cached after the first download): {exc}")


def _code(files: dict[str, str]) -> dict[str, str]:
    return {p: t for p, t in source_only(files).items() if p.endswith(".py")}


def _tests(files: dict[str, str]) -> dict[str, str]:
    return {p: t for p, t in files.items() if is_test_path(p)}


def _serve(tasks: list[RepoTask], isolation: Isolation) -> LiveServer:
    runtime = Runtime(TaskCatalog(tasks), Sandbox(Limits(), isolation), workers=4, secret=TEST_SECRET)
    return LiveServer(build_app(runtime=runtime, settings=Settings()))


def _solve_over_ws(server: LiveServer, task: RepoTask) -> dict:
    with GenericEnvClient(base_url=server.url) as client:
        client.reset(task_id=task.id, seed=1)
        actions = oracle_actions(task)
        for action in actions[:-1]:
            assert client.step(action).observation["error"] is None
        final = client.step(actions[-1])
    assert final.done
    return final.observation


def _do_nothing_over_ws(server: LiveServer, task: RepoTask) -> dict:
    with GenericEnvClient(base_url=server.url) as client:
        client.reset(task_id=task.id, seed=2)
        final = client.step({"action_type": "submit"})
    assert final.done
    return final.observation


# -- a real historic bug -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def historic(isolation: Isolation, tmp_path_factory: pytest.TempPathFactory) -> RepoTask:
    old, new = _releases()
    gold, test_patch = make_patch(_code(old), _code(new)), make_patch(_tests(old), _tests(new))
    assert gold.count("+++ ") == 1 and "parse.py" in gold  # the fix is parse.py's alone
    work = tmp_path_factory.mktemp("historic")
    instance = {"instance_id": "parse-hyphen-field-names", "repo": "r1chardj0n3s/parse", "version": BUGGY[1], "patch": gold,
                "test_patch": test_patch, "FAIL_TO_PASS": json.dumps(F2P), "PASS_TO_PASS": "[]",
                "problem_statement": "A template field named `{user-id}` is not recognised: parse('/local/sub/{user-id}/duration', ...) "
                                     "finds no 'user-id' (a hyphen should be allowed in field names)."}  # fmt: skip
    # PASS_TO_PASS as SWE-bench lists it: the named test file's other tests, passing with the fix
    (work / "draft.jsonl").write_text(json.dumps(instance) + "\n")
    assert tasks_cli(["import-swebench", str(work / "draft.jsonl"), "--pypi", "parse", "--out", str(work / "draft")]) == 0
    draft = load_repo_task(work / "draft" / "parse-hyphen-field-names")
    sandbox = Sandbox(Limits(), isolation)
    outcomes = run_tests(sandbox, draft, draft.gold_files).outcomes
    instance["PASS_TO_PASS"] = json.dumps(sorted(t for t, s in outcomes.items() if s == "PASSED" and t not in F2P))
    (work / "instances.jsonl").write_text(json.dumps(instance) + "\n")
    assert tasks_cli(["import-swebench", str(work / "instances.jsonl"), "--pypi", "parse==1.20.1", "--out", str(work / "tasks")]) == 0
    return load_repo_task(work / "tasks" / "parse-hyphen-field-names")


def test_the_historic_bug_imports_from_pypi_with_its_gold_suspect_and_mechanism(historic: RepoTask):
    old, new = _releases()
    assert historic.files == {p: t for p, t in old.items() if p != ".adbg-complete"}  # the buggy release, as released
    assert historic.gold_files["parse.py"] == new["parse.py"]  # the fix makes parse.py the fixed release's
    assert historic.grading_tests["tests/test_parse.py"] == new["tests/test_parse.py"]  # the hidden tests are 1.20.2's
    assert "test_hyphen_inside_field_name" not in historic.visible_tests["tests/test_parse.py"]  # the agent never sees them
    assert historic.version == "1.20.1" and len(historic.pass_to_pass) == 48  # test_parse.py's other tests
    assert {w.file for w in historic.suspect} == {"parse.py"} and historic.suspect == historic.gold_lines
    assert historic.mechanism and set(historic.mechanism) <= set(MECHANISMS)
    assert "wrong_value" in historic.mechanism  # the field-name pattern's character class was the bug


def test_the_historic_bug_is_valid_and_the_oracle_solves_it_over_ws(historic: RepoTask, isolation: Isolation):
    runtime = Runtime(TaskCatalog([historic]), Sandbox(Limits(), isolation), workers=4, secret=TEST_SECRET)
    report = validate_task(runtime, historic, runs=3)
    assert {c.name: c.detail for c in report.checks if not c.ok} == {} and report.trusted
    with _serve([historic], isolation) as server:
        solved = _solve_over_ws(server, historic)
        assert solved["info"]["resolved"] is True and solved["grader_score"] >= 0.9
        nothing = _do_nothing_over_ws(server, historic)
        assert nothing["info"]["resolved"] is False and nothing["grader_score"] == 0.0


# -- synthesis from a real library ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def synthesized(isolation: Isolation, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Synthesis, Path]]:
    try:
        lib = load_library(LIBRARY)
    except SdistError as exc:
        pytest.fail(f"this test needs the sdist of {LIBRARY} from PyPI (cached after the first download): {exc}")
    out = tmp_path_factory.mktemp("synth")
    lines: list[str] = []
    synthesis = Synthesis(lib, out, runs=3, seed=0, log=lines.append, sandbox=Sandbox(Limits(wall_seconds=120, cpu_seconds=120), isolation))
    first = synthesis.run(4)  # a run cut short ...
    assert first.valid == 4
    decided = [json.loads(line)["key"] for line in (out / ".synthesis" / "ledger.jsonl").read_text().splitlines()]
    kept_first = {p.name: (p / "task.json").read_text() for p in out.iterdir() if (p / "task.json").is_file()}
    orphan = out / "parse-1.20.2-orphan"  # a task folder moved into place by a run stopped before its decision was written
    shutil.copytree(next(p for p in out.iterdir() if (p / "task.json").is_file()), orphan)
    bundled = Path(__file__).resolve().parents[1] / "tasks" / "repo" / "repo-slice-window"
    shutil.copytree(bundled, out / "repo-slice-window")  # someone else's task in the same folder: never touched
    with (out / ".synthesis" / "runs.jsonl").open("a") as handle:
        handle.write('{"seconds": 1')  # a line cut by a stop mid-write
    summary = Synthesis(lib, out, runs=3, seed=0, log=lines.append, sandbox=synthesis.sandbox).run(10)  # ... goes on
    assert not orphan.exists() and (out / "repo-slice-window" / "task.json").read_text() == (bundled / "task.json").read_text()
    assert summary.seconds > 0
    assert summary.valid == 10 and summary.tried >= 10
    ledger = [json.loads(line)["key"] for line in (out / ".synthesis" / "ledger.jsonl").read_text().splitlines()]
    assert ledger[: len(decided)] == decided and len(set(ledger)) == len(ledger)  # nothing decided twice
    assert all((out / name / "task.json").read_text() == text for name, text in kept_first.items())
    assert any("decided before" in line and "4 valid" in line for line in lines)
    yield synthesis, out
    shutil.rmtree(out, ignore_errors=True)


def test_synthesis_writes_ten_valid_distinct_tasks_from_a_real_library(synthesized: tuple[Synthesis, Path]):
    synthesis, out = synthesized
    tasks = synthesis.tasks()
    assert len(tasks) == 10 and "repo-slice-window" not in {t.id for t in tasks}
    assert len({frozenset(t.fail_to_pass) for t in tasks}) == 10  # deduplicated by failing-test signature
    lib = synthesis.lib
    for task in tasks:
        assert task.trusted and task.sandboxed == [] and task.fail_to_pass
        assert not set(task.fail_to_pass) & set(task.pass_to_pass)
        assert task.mechanism and set(task.mechanism) <= set(MECHANISMS)
        assert task.suspect == task.gold_lines and len(task.suspect) >= 1
        assert {**task.gold_files, **task.grading_tests} == lib.files  # the fix and the held-out tests restore the release exactly
        changed = [p for p in task.source_files if task.files[p] != lib.files[p]]
        assert changed == [task.suspect[0].file]
        fixed_lines = set(lib.files[changed[0]].splitlines()) - set(task.files[changed[0]].splitlines())
        # never the fix: no restored line that says anything (a line of brackets alone, the `)` closing a call, says nothing)
        assert not any(any(c.isalnum() for c in line) and line.strip() in task.problem_statement for line in fixed_lines)
        planted = set(task.files[changed[0]].splitlines()) - set(lib.files[changed[0]].splitlines())
        assert not any(len(line.strip()) > 8 and line.strip() in task.problem_statement for line in planted)  # nor where it is
        assert task.name.startswith("parse 1.20.2: ") and task.tags == ["synthesized", "parse"]  # nothing naming the bug
        assert all(t.split("[")[0].split("::")[-1] in task.problem_statement for t in task.visible_fail_to_pass[:8])
        assert not any(f"- {t}:" in task.problem_statement for t in task.held_out)  # held-out tests are never named
        failing_functions = {t.split("[")[0] for t in task.fail_to_pass}
        assert bool(set(task.held_out) & set(task.fail_to_pass)) == (len(failing_functions) >= 2) and task.visible_fail_to_pass
        assert task.difficulty in ("easy", "medium", "hard") and task.difficulty_basis["fail_to_pass"] == len(task.visible_fail_to_pass)
        assert task.synthesis["pypi"] == LIBRARY
    instances = [json.loads(line) for line in (out / "instances.jsonl").read_text().splitlines()]
    assert sorted(i["instance_id"] for i in instances) == sorted(t.id for t in tasks)
    assert all(isinstance(i["FAIL_TO_PASS"], str) for i in instances)  # SWE-bench's JSON-encoded lists
    assert any(t.held_out for t in tasks) and all(bool(i.get("HELD_OUT")) == bool(t.held_out) for i, t in zip(
        sorted(instances, key=lambda i: i["instance_id"]), sorted(tasks, key=lambda t: t.id), strict=True))  # fmt: skip


def test_synthesized_instances_import_back_from_pypi_as_the_same_tasks(synthesized: tuple[Synthesis, Path], tmp_path: Path):
    synthesis, out = synthesized
    assert tasks_cli(["import-swebench", str(out / "instances.jsonl"), "--pypi", LIBRARY, "--smith", "--out", str(tmp_path)]) == 0
    for task in synthesis.tasks():
        again = load_repo_task(tmp_path / task.id)
        assert (again.files, again.gold_files) == (task.files, task.gold_files)
        assert (again.fail_to_pass, again.pass_to_pass, again.suspect) == (task.fail_to_pass, task.pass_to_pass, task.suspect)
        assert (again.held_out, again.grading_tests) == (task.held_out, task.grading_tests)  # held out again, the same ones
        assert set(task.mechanism) & set(again.mechanism)  # the fix read back names the planted bug's mechanism


def test_a_synthesized_task_is_solved_by_the_oracle_over_ws_and_not_by_doing_nothing(synthesized: tuple[Synthesis, Path], isolation: Isolation):
    synthesis, _ = synthesized
    task = synthesis.tasks()[0]
    with _serve([task], isolation) as server:
        solved = _solve_over_ws(server, task)
        assert solved["info"]["resolved"] is True and solved["grader_score"] >= 0.9
        nothing = _do_nothing_over_ws(server, task)
        assert nothing["info"]["resolved"] is False and nothing["grader_score"] == 0.0
