"""The harness compares interfaces: an arm is AGENT@PROFILE, agents get the profile's tools, aliases are recorded."""

from __future__ import annotations

import json
from functools import partial

from env.eval import run as run_module
from env.eval.report import who_solved
from env.server.in_process import InProcessDriver

TASKS = ["easy", "repo-pagination-off-by-one"]


def test_the_oracle_solves_under_every_profile(runtime, tmp_path):
    factory = partial(InProcessDriver, runtime)
    by_arm = {}
    for profile in ("default", "bash", "pdb", "minimal"):
        results = run_module.run(factory, "oracle", TASKS, 1, 2, tmp_path, profile)
        by_arm.update({(r["agent"], r["task_id"]): r for r in results})
    assert sorted({arm for arm, _ in by_arm}) == ["oracle", "oracle@bash", "oracle@minimal", "oracle@pdb"]
    assert ("oracle@minimal", "easy") not in by_arm  # minimal needs a repository; the task is skipped
    assert all(r["solved"] for r in by_arm.values())
    # Under pdb the edit gate holds the edits back until the oracle's one debugger command.
    assert by_arm[("oracle@pdb", "repo-pagination-off-by-one")]["actions"][:2] == ["debug_start", "edit"]
    assert by_arm[("oracle@pdb", "easy")]["actions"] == ["debug_start", "submit_fix"]
    steps = tmp_path / "steps" / "oracle@minimal" / "repo-pagination-off-by-one" / "run0.jsonl"
    records = [json.loads(line) for line in steps.read_text().splitlines()]
    assert records[-1]["action"] == {"action_type": "submit"}
    assert records[-1]["call"] == {"tool": "finish", "aliased_from": "submit"}  # the server's alias, in the trajectory
    results = [r for r in by_arm.values() if r["task_id"] == "repo-pagination-off-by-one"]
    table = who_solved(results)  # every pair of arms is compared: interfaces are arms like agents
    assert "**oracle@bash vs oracle@minimal** (1 tasks, 1 runs each): passX@2 = 1.000" in table
    assert table.count("passX@2 = 1.000") == 6
