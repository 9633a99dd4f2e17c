"""Where each of a task's tests runs, decided once by the task's author: under the split, or sandboxed.

    placement = place(sandbox, task)                 # the named tests on the gold tree: split first, then sandboxed
    placement.sandboxed                              # what task.json's "sandboxed" should list
    placement.split_reasons[test]                    # why the split could not run it (what the split must fix)
    placement.failing[test]                          # passes neither way: left where it was, and reported

A test runs sandboxed only where the split cannot run it: every named test (FAIL_TO_PASS and PASS_TO_PASS, or those
``select`` names) runs on the gold tree under the split alone; those that do not pass there run sandboxed, and the
ones passing there are the placement. This is an authoring step (``python -m env.authoring place``, after import and
before validate), never part of grading: decided on the gold tree, an agent cannot move a test into the forgeable
mode by breaking it. ``bench/bench_compat.py`` calls the same function per test file on a library's own files.
With limits counted in CPU time (``Sandbox.for_validity``), a run the machine starved runs again, and raises
``env.verdict.busy.MachineBusy`` when it stays starved: no test is placed or failed for the machine's load.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

from env.patches import Files
from env.project import RepoTask
from env.sandbox.runner import Sandbox
from env.verdict.busy import until_decided
from env.verdict.outcome import RepoVerdict, f2p_ok
from env.verdict.repo_judge import run_tests


@dataclass(frozen=True)
class Placement:
    split: list[str] = field(default_factory=list)  # pass under the split: they stay there
    sandboxed: list[str] = field(default_factory=list)  # fail under the split, pass sandboxed
    split_reasons: dict[str, str] = field(default_factory=dict)  # each sandboxed test: why the split failed it
    failing: dict[str, str] = field(default_factory=dict)  # pass neither way: why the sandboxed run failed it

    def listed(self, before: list[str]) -> list[str]:
        """The task's new ``sandboxed`` list: the placed tests, and those failing either way where they were before."""
        return sorted(set(self.sandboxed) | {t for t in self.failing if t in before})


def named_tests(task: RepoTask, select: list[str] | None = None) -> list[str]:
    """The tests a placement decides: the task's named ones, or the ids in ``select`` (a bare file path there means
    the task's named tests in that file), in order, without repeats."""
    named = task.fail_to_pass + task.pass_to_pass
    if select is None:
        return list(dict.fromkeys(named))
    files = {s for s in select if "::" not in s}
    return list(dict.fromkeys([s for s in select if "::" in s] + [t for t in named if t.split("::")[0] in files]))


def place(
    sandbox: Sandbox, task: RepoTask, select: list[str] | None = None, files: Files | None = None, split: RepoVerdict | None = None
) -> Placement:
    """Run the named tests on ``files`` (default: the gold tree) under the split alone, then those it failed
    sandboxed. ``split`` is a split-only run of the same tests on the same files already made (the bench's), reused."""
    tree = task.gold_files if files is None else files
    wanted = named_tests(task, select)
    under_split = _decide(sandbox, task.model_copy(update={"sandboxed": []}), tree, wanted, select, split)
    passing = [t for t in wanted if f2p_ok(under_split[t].status(t))]
    rest = [t for t in wanted if t not in passing]
    if not rest:
        return Placement(split=passing)
    boxed = _decide(sandbox, task.model_copy(update={"sandboxed": rest}), tree, rest, rest, None)
    placed = [t for t in rest if f2p_ok(boxed[t].status(t))]
    return Placement(
        split=passing,
        sandboxed=placed,
        split_reasons={t: under_split[t].reason(t) for t in placed},
        failing={t: boxed[t].reason(t) for t in rest if t not in placed},
    )


def _decide(sandbox: Sandbox, task: RepoTask, tree: Files, wanted: list[str], select: list[str] | None, first: RepoVerdict | None) -> dict[str, RepoVerdict]:
    """The run that decided each wanted test. A file that cannot be collected interrupts pytest's whole session, so
    the tests of the other files, which never ran, run again without it."""
    decided: dict[str, RepoVerdict] = {}
    pending, verdict = wanted, first
    while pending:
        if verdict is None:
            verdict = until_decided(partial(run_tests, sandbox, task, tree, select, graded=True))
        broken = {key.split("::")[0] for key in verdict.collect_errors} - {"", "<session>"}
        rest = [t for t in pending if t not in verdict.outcomes and t.split("::")[0] not in broken] if broken else []
        if len(rest) == len(pending):  # nothing more to learn from running them again
            rest = []
        decided.update({t: verdict for t in pending if t not in rest})
        pending, select, verdict = rest, rest, None
    return decided
