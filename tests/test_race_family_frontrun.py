"""The race family's verdict cross-checked with frontrun (issue 49): on 38 tasks (two seeds of every pattern x domain),
the buggy and the gold class, frontrun's DPOR explorer (tests/race_family_crosscheck.py) against the project's
controlled interleavings.

Where frontrun is conclusive its verdict must be ours, unless ours is shown right another way: where frontrun finds
no race in a buggy class, the interleaving our verdict reports is run again here with neither explorer (real threads,
thread A stopped by a plain ``sys.settrace`` at the line the report names, thread B run to its end, then A let go) and
its results must be explained by no order of the calls (tried one by one with the domain's step functions). frontrun
misses such races where the conflicting accesses are C-level container operations (``key in dict``, ``dict.get``),
which its DPOR does not see as conflicting with a write of the same item. Where frontrun is inconclusive (a take
waiting on a condition: blocking it cannot manage), the test says so and skips.
"""

from __future__ import annotations

import ast
import importlib.util
import random
import re
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from env.families.race.exploration import judge, plan_for
from env.families.race.task import RaceTaskSpec, race_task
from tests.race_crosscheck import VariantResult
from tests.race_family_crosscheck import TASKS, Scenario, allowed, plain, run_under_frontrun

PAIR = re.compile(r"^2 threads \(thread A: (?P<a>[^;]+); thread B: (?P<b>[^)]*\)?)\) (?P<start>on a new object|after .+?): ")
PAUSE = re.compile(r"thread A paused at line (\d+)")


@pytest.fixture(scope="module")
def frontrun_verdicts() -> dict[str, VariantResult]:
    try:
        return {result["name"]: result for result in run_under_frontrun(TASKS)}
    except RuntimeError as exc:
        pytest.fail(str(exc))


def _ours(runtime: Any, task: RaceTaskSpec, source: str) -> tuple[bool, str]:
    plan = plan_for(task.generated.model, task.generated.cls, random.Random(0))
    with runtime.sandbox.start(source, task.filename, task.module) as run:
        outcome = judge(task.generated.model, plan, run.explore(plan), source)
    return outcome.passed, outcome.message


def _call(text: str) -> tuple[str, tuple[Any, ...]]:
    node = ast.parse(text.strip(), mode="eval").body
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    return node.func.id, tuple(ast.literal_eval(a) for a in node.args)


def replayed(task: RaceTaskSpec, message: str, tmp_path: Path) -> tuple[Scenario, tuple[Any, ...]]:
    """Our reported interleaving run with real threads and a plain tracer: (the scenario, what it observed)."""
    pair, pause = PAIR.match(message), PAUSE.search(message)
    assert pair is not None and pause is not None, message
    start = pair["start"]
    setup = () if start == "on a new object" else tuple(_call(c) for c in re.split(r", (?=\w+\()", start.removeprefix("after ")))
    scenario = Scenario("replay", setup, ((_call(pair["a"]),), (_call(pair["b"]),)), task.generated.model.reads)
    path = tmp_path / f"{task.module}.py"
    path.write_text(task.buggy_source)
    spec = importlib.util.spec_from_file_location(f"replay_{task.module}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    target = getattr(module, task.generated.cls)()
    for op, args in setup:
        getattr(target, op)(*args)
    line, reached, go, out = int(pause.group(1)), threading.Event(), threading.Event(), {}

    def tracer(frame: FrameType, event: str, arg: object) -> Any:
        if event == "line" and frame.f_code.co_filename == str(path) and frame.f_lineno == line and not reached.is_set():
            reached.set()
            go.wait(10)
        return tracer

    def run(key: str, op: str, args: tuple[Any, ...], traced: bool) -> None:
        if traced:
            sys.settrace(tracer)
        try:
            out[key] = (plain(getattr(target, op)(*args)), "")
        except Exception as exc:
            out[key] = (None, type(exc).__name__)
        finally:
            sys.settrace(None)

    a = threading.Thread(target=run, args=("a", *scenario.threads[0][0], True))
    a.start()
    assert reached.wait(10), f"thread A never reached line {line}"
    run("b", *scenario.threads[1][0], False)
    go.set()
    a.join(10)
    reads = tuple(_read(target, op, args) for op, args in scenario.reads)
    return scenario, (((out["a"],), (out["b"],)), reads)


def _read(target: Any, op: str, args: tuple[Any, ...]) -> tuple[Any, str]:
    try:
        return plain(getattr(target, op)(*args)), ""
    except Exception as exc:
        return None, type(exc).__name__


@pytest.mark.parametrize("task_id", TASKS)
def test_frontrun_agrees_with_the_race_family_s_verdict(runtime, frontrun_verdicts, task_id, tmp_path):
    task = race_task(task_id)
    assert task is not None
    inconclusive = []
    for state, source, kind in (("buggy", task.buggy_source, "racy"), ("gold", task.gold_source, "correct")):
        theirs = frontrun_verdicts[f"{task_id}:{state}"]
        passed, message = _ours(runtime, task, source)
        assert ("correct" if passed else "racy") == kind, message
        if theirs["verdict"] == "inconclusive":
            why = theirs["error"] or next(s["detail"] for s in theirs["scenarios"] if s["outcome"] != "held")
            inconclusive.append(f"{state}: {why.split('. ')[0]}")
            continue
        if theirs["verdict"] == kind:
            continue
        # frontrun found no race where ours did: our interleaving, run again with neither explorer, shows it
        assert kind == "racy", f"frontrun calls the gold class of {task_id} racy: {theirs['scenarios']}"
        scenario, observed = replayed(task, message, tmp_path)
        assert observed not in allowed(task.generated.model, scenario), (observed, sorted(map(repr, allowed(task.generated.model, scenario))))
    if inconclusive:
        pytest.skip(f"frontrun is inconclusive on {task_id}: {'; '.join(inconclusive)}")
