"""A family that subclasses no built-in family goes the whole way: loaded from its folder, validated, played by the
oracle and by every degenerate policy, checked by validator.py, evaluated by ``env.eval run`` and reported, with
nothing but its own class and its registration (issue 35, item 1). Its task is a calculator whose operator table
has a wrong symbol; its tests are facts about the table, so nothing here runs code in a sandbox.
"""

from __future__ import annotations

import json
import operator
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, ConfigDict, Field

from env import rewards
from env.authoring.degenerate import degenerate_policies
from env.authoring.oracle import oracle_actions, overfit_actions
from env.authoring.predictions import instance_of
from env.authoring.validate import validate_task
from env.config import Settings
from env.eval import report as report_module
from env.eval import run as run_module
from env.families.base import TASKS_DIR, Action, Episode, Family, ResultRow, StateParts, Turn
from env.families.catalog import TaskCatalog
from env.families.policies import HypothesisKind
from env.families.registry import FAMILIES, load_task
from env.families.validation import StateRun, TaskValidation, measured
from env.interface import Interface, profile_named
from env.models import DebugAction, DebugObservation
from env.project import RepoTask
from env.runtime import Runtime
from env.server.app import build_app
from env.server.in_process import InProcessDriver
from env.tools import ToolError
from env.validation import presubmission
from tests.conftest import LiveServer

SYMBOLS: dict[str, Callable[[int, int], int]] = {"+": operator.add, "-": operator.sub, "*": operator.mul}
EXPECTED = {"add": 9, "sub": 3, "mul": 18}  # each operation on (6, 3)
ACTIONS = ("set_op", "submit", "give_up")


class CalcTask(BaseModel):
    """An operator table (``ops``: operation -> symbol) with a wrong symbol; ``gold`` is the right table."""

    model_config = ConfigDict(populate_by_name=True)

    id: str
    family: str = "calc"
    folder: Path
    ops: dict[str, str]
    gold: dict[str, str]
    fail_to_pass: list[str] = Field(alias="FAIL_TO_PASS")
    pass_to_pass: list[str] = Field(alias="PASS_TO_PASS")
    max_steps: int = 8

    @property
    def tests_total(self) -> int:
        return len(self.fail_to_pass) + len(self.pass_to_pass)

    def summary(self) -> dict[str, Any]:
        return {"id": self.id, "family": self.family, "max_steps": self.max_steps, "tests_total": self.tests_total, "max_attempts": 1}


def outcomes(task: CalcTask, ops: dict[str, str]) -> dict[str, str]:
    """Each test ``calc::<op>``: PASSED when the table's symbol for <op> gives the expected answer on (6, 3)."""
    ran = {}
    for test in task.fail_to_pass + task.pass_to_pass:
        op = test.split("::")[1]
        ran[test] = "PASSED" if SYMBOLS[ops[op]](6, 3) == EXPECTED[op] else "FAILED"
    return ran


class CalcEpisode(Episode):
    task: CalcTask

    def __init__(self, runtime: Runtime, task: CalcTask, seed: int, episode_id: str, interface: Interface):
        super().__init__(runtime, task, seed, episode_id, interface)
        self.ops = dict(task.ops)
        self.grade: float | None = None

    def passed(self) -> int:
        return sum(status == "PASSED" for status in outcomes(self.task, self.ops).values())

    def act(self, action: DebugAction, turn: Turn) -> None:
        args = self.arguments(action)
        if action.action_type == "set_op":
            if args.get("op") not in self.ops or args.get("symbol") not in SYMBOLS:
                raise ToolError(f"set_op needs an op of {sorted(self.ops)} and a symbol of {sorted(SYMBOLS)}")
            self.ops[args["op"]] = args["symbol"]
        elif action.action_type == "submit":
            self.solved = self.passed() == self.task.tests_total
            self.grade = 1.0 if self.solved else 0.0
            turn.parts["resolved"] = self.grade
            self.done = True
        elif action.action_type == "give_up":
            self.gave_up = self.done = True
            self.grade = 0.0
        else:
            raise ToolError(f"unknown action_type {action.action_type!r}; expected one of: {', '.join(ACTIONS)}")

    def finish(self) -> None:
        self.grade, self.done = 0.0, True  # nothing submitted in time

    def observe(
        self, reward: float, parts: rewards.Breakdown, error: str | None = None, query_result: str | None = None, tool_output: str | None = None,
    ) -> DebugObservation:
        info = self.info(error)
        if self.done:
            info["resolved"] = self.solved
        return DebugObservation(
            reward=reward, done=self.done, episode_id=self.episode_id, task_id=self.task.id, family=self.task.family,
            current_code=json.dumps(self.ops), tests_passed=self.passed(), tests_total=self.task.tests_total,
            step_number=self.step_number, max_steps=self.task.max_steps, score_estimate=self.passed() / self.task.tests_total,
            error=error, info=info, step_reward=reward, cumulative_reward=self.cumulative_reward,
            grader_score=self.grade if self.done else None, breakdown=parts, available_actions=list(self.interface.tools),
        )  # fmt: skip

    def state_fields(self) -> StateParts:
        return {"tests_passed": self.passed(), "grader_score": self.grade}

    def files(self) -> dict[str, str]:
        return {"ops.json": json.dumps(self.ops)}

    def close(self) -> None:
        pass


def _function(name: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description,
            "parameters": {"type": "object", "properties": properties, "required": list(properties)}}}  # fmt: skip


class CalcFamily(Family[CalcTask]):
    name = "calc"
    description = "An operator table with a wrong symbol"
    grader = staticmethod(lambda grade: grade)
    reported: ClassVar[list[int]] = []

    def load(self, folder: Path, data: dict[str, Any]) -> CalcTask:
        return CalcTask(folder=folder, **data)

    def interface(self, profile: str | None = None, edit_gate: bool | None = None, aliases: object = None) -> Interface:
        chosen = profile_named(profile)
        if chosen.name != "default":
            raise ValueError("calc tasks have the default interface only")
        return Interface.build(chosen, ACTIONS, edit_gate, aliases, own_actions=ACTIONS)

    def episode(self, runtime: Runtime, task: CalcTask, seed: int, episode_id: str, interface: Interface | None = None) -> CalcEpisode:
        return CalcEpisode(runtime, task, seed, episode_id, interface or self.interface())

    def own_tools(self) -> list[dict[str, Any]]:
        return [
            _function("set_op", "Set an operation's symbol", {"op": {"type": "string"}, "symbol": {"type": "string", "enum": sorted(SYMBOLS)}}),
            _function("submit", "Submit the table", {}),
            _function("give_up", "End the episode", {}),
        ]

    def oracle_actions(self, task: CalcTask) -> list[Action]:
        fixes = [{"action_type": "set_op", "op": op, "symbol": symbol} for op, symbol in task.gold.items() if task.ops[op] != symbol]
        return fixes + [{"action_type": "submit"}]

    def overfit_actions(self, task: CalcTask) -> list[Action] | None:
        return None  # no held-out tests, so no overfit to record

    def overfit_ceiling(self, oracle_grade: float) -> float:
        return 0.0

    def degenerate_policies(self, task: CalcTask, hypothesis: HypothesisKind = "wrong") -> dict[str, list[Action]]:
        op, symbol = next(iter(task.ops.items()))
        wrong = next(s for s in SYMBOLS if s not in (symbol, task.gold[op]))
        return {
            "give_up": [{"action_type": "give_up"}],
            "submit_unchanged": [{"action_type": "submit"}],
            "noop_edit": [{"action_type": "set_op", "op": op, "symbol": symbol}, {"action_type": "submit"}],
            "wrong_edit": [{"action_type": "set_op", "op": op, "symbol": wrong}, {"action_type": "submit"}],
        }

    def smoke_actions(self, task: CalcTask) -> list[Action]:
        return [{"action_type": "set_op", "op": "nope", "symbol": "+"}] + self.oracle_actions(task)

    def a_visible_test(self, task: CalcTask) -> str:
        return task.fail_to_pass[0]

    def validate(self, runtime: Runtime, task: CalcTask, runs: int, tasks_dir: Path = TASKS_DIR) -> TaskValidation:
        def observe(gold: bool, seed: int) -> StateRun:
            ran = outcomes(task, task.gold if gold else task.ops)
            return StateRun(outcomes=ran, calls=dict.fromkeys(ran, 1), collected=list(ran))

        return measured(task, runs, observe, time.monotonic())

    def repository(self, task: CalcTask) -> RepoTask | None:
        return None

    def report_table(self, rows: list[ResultRow]) -> str:
        self.reported.append(len(rows))
        return f"calc: {sum(r['solved'] for r in rows)} of {len(rows)} episodes solved"


@pytest.fixture()
def calc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CalcTask:
    monkeypatch.setattr(FAMILIES, "_items", dict(FAMILIES.items()))  # the calc family is gone after the test
    FAMILIES.add("calc", CalcFamily())
    folder = tmp_path / "tasks" / "calc-add"
    folder.mkdir(parents=True)
    data = {"id": "calc-add", "family": "calc", "ops": {"add": "-", "mul": "*"}, "gold": {"add": "+", "mul": "*"},
            "FAIL_TO_PASS": ["calc::add"], "PASS_TO_PASS": ["calc::mul"]}  # fmt: skip
    (folder / "task.json").write_text(json.dumps(data))
    monkeypatch.setenv("ENV_TASK_DIRS", str(folder))  # where the oracle agent finds it (TaskCatalog.from_env)
    task = load_task(folder)
    assert isinstance(task, CalcTask)
    return task


def test_a_family_of_its_own_is_validated_played_checked_evaluated_and_reported(calc, runtime, tmp_path):
    report = validate_task(runtime, calc, runs=3)
    assert report.ok and report.family == "calc" and "buggy state fails every FAIL_TO_PASS test" in [c.name for c in report.checks]
    assert oracle_actions(calc) == [{"action_type": "set_op", "op": "add", "symbol": "+"}, {"action_type": "submit"}]
    assert overfit_actions(calc) is None and set(degenerate_policies(calc)) == {"give_up", "submit_unchanged", "noop_edit", "wrong_edit"}
    assert instance_of(calc) == "calc-add"  # not a repository: its predictions would go under its own id

    served = Runtime(TaskCatalog([calc]), runtime.sandbox, workers=2, secret=runtime.secret)
    with LiveServer(build_app(runtime=served, settings=Settings())) as server:
        check = presubmission.check_task(server.url, TaskCatalog([calc]), "calc-add")
    assert check.failures == [] and len(check.lines) == 5, check.lines
    assert "PASS  calc-add: every degenerate policy scores exactly 0.0 and earns no reward" in check.lines

    out = tmp_path / "results"
    [played] = run_module.run(partial(InProcessDriver, served), "oracle", ["calc-add"], 1, 1, out)
    assert (played["family"], played["solved"], played["score"], played["steps"]) == ("calc", True, 1.0, 2)
    text = report_module.report([out], out)
    assert "## By family\n\ncalc: 1 of 1 episodes solved" in text and CalcFamily.reported == [1]


def test_a_family_that_leaves_a_step_of_its_lifecycle_out_says_which(calc, runtime):
    class Bare(Family[CalcTask]):
        name = "bare"
        description = "loads and plays, and nothing else"
        load, interface, episode = CalcFamily.load, CalcFamily.interface, CalcFamily.episode

    bare = Bare()
    for call in (lambda: bare.oracle_actions(calc), lambda: bare.degenerate_policies(calc), lambda: bare.validate(runtime, calc, 1),
                 lambda: bare.smoke_actions(calc), lambda: bare.report_table([]), lambda: bare.repository(calc)):  # fmt: skip
        with pytest.raises(NotImplementedError, match=r"^the 'bare' family does not define \w+: write Bare\.\w+$"):
            call()


@pytest.mark.parametrize("task_id", ["easy", "medium", "hard"])
def test_every_classic_task_validates(runtime, task_id):
    """hard's stress check included: its calls are the interleavings explored (validation crashed on it before)."""
    report = validate_task(runtime, runtime.catalog.get(task_id), runs=2)
    assert report.ok, [c for c in report.checks if not c.ok]
    assert report.family == "classic" and report.checks[0].name == "every run set up"
