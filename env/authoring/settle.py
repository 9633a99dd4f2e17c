"""The step ``import-swebench`` runs after writing a task folder: place its tests and keep only the PASS_TO_PASS tests
the gold passes, so an imported task is valid without hand work, or the import says exactly why not.

    settled = settle(sandbox, folder)       # task.json rewritten: "sandboxed", PASS_TO_PASS, HELD_OUT, "dropped"
    settled.problems                        # why the task cannot be valid (a FAIL_TO_PASS test the gold fails ...)
    settled.dropped[test]                   # a PASS_TO_PASS test left out, and why

On the gold tree (the grading tests applied), the named tests run under the split alone, then those it failed
sandboxed (``env.authoring.placement.place``). A PASS_TO_PASS test is one the gold passes (SWE-bench's own rule), so one
that passes neither way is dropped, and so is one that passes without ever reaching the project's code: it cannot be
broken by any change to the project, and the validator refuses a test that passes vacuously. Each dropped test is
named in task.json's ``dropped`` with its reason. A FAIL_TO_PASS test is the task itself and is never dropped: one the
gold fails, or one that never reaches the project, is a problem the import reports. The trust level stays honest: a
FAIL_TO_PASS test that only passes sandboxed is listed in ``sandboxed`` and the task is untrusted.

Give it a sandbox whose limits count CPU time (``Sandbox.for_validity``: what ``import-swebench`` does), so that no test
is dropped or refused because the machine was busy; a run the machine starved runs again, and when it stays starved
nothing is decided and task.json is left as it was (``busy`` says why).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from env.authoring.placement import Placement, place
from env.project import RepoTask, load_repo_task
from env.sandbox.runner import Sandbox
from env.verdict.busy import MachineBusy, until_decided
from env.verdict.repo_judge import run_tests


@dataclass(frozen=True)
class Settled:
    task: RepoTask  # as rewritten
    placement: Placement
    dropped: dict[str, str] = field(default_factory=dict)  # PASS_TO_PASS tests left out: why
    problems: list[str] = field(default_factory=list)  # why the task cannot be valid; empty when nothing is known wrong
    busy: str = ""  # why nothing was decided: the machine starved a run in every attempt (task.json left as it was)


def settle(sandbox: Sandbox, folder: Path) -> Settled:
    """Place ``folder``'s task on its gold tree and drop the PASS_TO_PASS tests the gold does not pass (see the module's
    docstring); task.json is rewritten in place (every other key kept)."""
    task = load_repo_task(folder)
    if not sandbox.isolation.can_execute:
        return Settled(task, Placement(), problems=[f"not placed: this host cannot run the verdict: {sandbox.isolation.reason}"])
    alone = task.model_copy(update={"sandboxed": []})
    try:
        first = until_decided(lambda: run_tests(sandbox, alone, task.gold_files, graded=True))
        if first.error:
            return Settled(task, Placement(), problems=[f"the gold tree's tests could not run: {first.error}"])
        placement = place(sandbox, alone, split=first)
    except MachineBusy as exc:
        return Settled(task, Placement(), busy=str(exc))
    # Reach is counted under the split only (a sandboxed test shares the project's process), from the first run.
    unreached = {t for t in placement.split if t in first.outcomes and first.ops.get(t, 0) < 1}
    dropped = {t: f"fails on the gold tree either way: {placement.failing[t]}" for t in task.pass_to_pass if t in placement.failing}
    dropped |= {t: "passes without reaching the project's code (no change to the project can break it)" for t in task.pass_to_pass if t in unreached}
    problems = [f"FAIL_TO_PASS test {t} fails on the gold tree: {placement.failing[t]}" for t in task.fail_to_pass if t in placement.failing]
    problems += [f"FAIL_TO_PASS test {t} passes on the gold tree without reaching the project's code" for t in task.fail_to_pass if t in unreached]
    data = json.loads((folder / "task.json").read_text(encoding="utf-8"))
    data["PASS_TO_PASS"] = [t for t in task.pass_to_pass if t not in dropped]
    if "HELD_OUT" in data:
        data["HELD_OUT"] = [t for t in task.held_out if t not in dropped]
        if not data["HELD_OUT"]:
            del data["HELD_OUT"]
    data["sandboxed"] = sorted(t for t in placement.sandboxed if t not in dropped)
    if dropped:
        data["dropped"] = dropped
    (folder / "task.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return Settled(load_repo_task(folder), placement, dropped, problems)


def report(settled: Settled) -> list[str]:
    """What the settling decided, for the task's author: one line per decision that is not the plain case."""
    task, placement = settled.task, settled.placement
    if settled.busy:
        return []  # nothing was decided
    lines = [f"  {task.id}: {len(placement.split)} test(s) run split, {len(task.sandboxed)} sandboxed; "
             f"{'trusted' if task.trusted else 'UNTRUSTED (a FAIL_TO_PASS test runs sandboxed)'}"]  # fmt: skip
    lines += [f"  sandboxed: {t} (the split: {placement.split_reasons[t]})" for t in task.sandboxed if t in placement.split_reasons]
    lines += [f"  dropped from PASS_TO_PASS: {t}: {why}" for t, why in settled.dropped.items()]
    return lines
