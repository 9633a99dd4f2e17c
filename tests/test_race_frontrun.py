"""An independent cross-check of the hard task's race verdict: frontrun's DPOR explorer must agree with it.

For every racy and correct variant of tests/race_variants.py, tests/race_crosscheck.py explores the task's
boundary scenarios with frontrun (PyPI, a dev dependency; a different tracer, scheduler and model of the
specification). Wherever frontrun is conclusive, its verdict must be the project's verdict and the variant's
kind; where it is not (code it cannot model, or a verdict it does not reproduce when it alone disagrees), the
test skips and says why. frontrun explores only under its
own CLI wrapper, so it runs once, in a subprocess, and prints its results as JSON.
bench/bench_race_crosscheck.py prints the same comparison as a table.
"""

from __future__ import annotations

import pytest

from env.families.catalog import TaskCatalog
from env.families.classic.judge import judge
from env.families.classic.task import TaskSpec
from env.runtime import Runtime
from env.secret import ServerSecret
from tests.race_crosscheck import ScenarioResult, VariantResult, run_under_frontrun, variants

SECRET = ServerSecret("the frontrun cross-check's own secret, fixed for reproducible verdicts")
VARIANTS = variants()
SOURCES = {name: source for name, _, source in VARIANTS}


@pytest.fixture(scope="module")
def frontrun_verdicts() -> dict[str, VariantResult]:
    try:
        results = run_under_frontrun()
    except RuntimeError as exc:
        pytest.fail(str(exc))
    return {result["name"]: result for result in results}


def _counterexample(scenario: ScenarioResult) -> str:
    return f"frontrun's counterexample in '{scenario['scenario']}' (thread per step {scenario['schedule']}):\n{scenario['detail']}"


@pytest.mark.parametrize(("name", "kind"), [(name, kind) for name, kind, _ in VARIANTS])
def test_frontrun_agrees_with_the_projects_verdict(runtime: Runtime, catalog: TaskCatalog, frontrun_verdicts: dict[str, VariantResult], name: str, kind: str) -> None:
    theirs = frontrun_verdicts[name]
    if theirs["verdict"] == "inconclusive":
        reasons: dict[str, list[str]] = {}  # one line per distinct reason, not one per scenario
        for scenario in theirs["scenarios"]:
            if scenario["outcome"] != "held":
                reasons.setdefault(scenario["detail"].split(". ")[0], []).append(repr(scenario["scenario"]))
        why = theirs["error"] or "; ".join(f"{', '.join(names)}: {reason}" for reason, names in reasons.items())
        pytest.skip(f"frontrun is inconclusive on {name!r}: {why}")
    task = catalog.get("hard")
    assert isinstance(task, TaskSpec)
    verdict = judge(task, SOURCES[name], runtime.sandbox, SECRET.rng("classic", "hard", 0, "verdict"))
    assert verdict.stress is not None
    ours = "correct" if verdict.stress.passed else "racy"
    if theirs["verdict"] == ours == kind:
        return
    if ours == kind:
        # frontrun alone disagrees with the variant's known kind: its exploration is timed (a run may take 1 s), so on
        # a starved machine it can miss an interleaving it finds otherwise (CI once saw 'correct' on a racy variant it
        # calls racy in every run here). A verdict it does not reproduce is no verdict; one it keeps is a disagreement.
        again = [run_under_frontrun(only=[name])[0]["verdict"] for _ in range(2)]
        if any(v != theirs["verdict"] for v in again):
            pytest.skip(f"frontrun's verdict on {name!r} is not reproducible: {theirs['verdict']}, then {', then '.join(again)}")
    violated = [s for s in theirs["scenarios"] if s["outcome"] == "violated"]
    if theirs["verdict"] == "racy":
        where = _counterexample(violated[0])
    else:
        where = f"frontrun explored every scenario to the end ({theirs['interleavings']} interleavings) and found none violated"
    pytest.fail(
        f"{name!r} (a {kind} variant): frontrun says {theirs['verdict']}, the project says {ours} "
        f"after {verdict.stress.schedules} interleavings.\n"
        f"The project's report: {verdict.stress.message}\n{where}"
    )


def test_frontrun_is_conclusive_on_the_bug_and_the_plain_fix(frontrun_verdicts: dict[str, VariantResult]) -> None:
    # Guards the skips above: an environment where frontrun can model nothing must not pass quietly.
    assert frontrun_verdicts["original bug"]["verdict"] == "racy", frontrun_verdicts["original bug"]
    assert frontrun_verdicts["one lock around each method body"]["verdict"] == "correct", frontrun_verdicts["one lock around each method body"]
