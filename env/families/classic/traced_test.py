"""trace_report's outcome of a workbench test on a classic task, from the classic judge (the trusted side): the
traced run in the shell gives only the calls (``env.tools.trace``).

    outcome = traced_test(runtime, task, "test_binary_search.py::test_finds_last_element", source)
    outcome.exit_code, outcome.text     # 1, "test_binary_search.py::test_finds_last_element failed\\nassert ..."

The judge runs the task's own tests against the module as the workbench holds it; its messages are the ones
``submit_fix`` reports. A classic task has no partial view: the module and its tests are the agent's to read.
"""

from __future__ import annotations

import random

from env.families.classic.judge import judge_on
from env.families.classic.task import TaskSpec
from env.runtime import Runtime
from env.tools.base import ToolError
from env.tools.reports import TracedOutcome
from env.tools.traced_outcome import MAX_ERROR_LINES, MAX_LINE_CHARS


def traced_test(runtime: Runtime, task: TaskSpec, test_file: str, test: str, source: str) -> TracedOutcome:
    """``test``: ``<test_file>::name`` or ``<test_file>`` (each of its tests); any other is no test (exit code 5)."""
    path, _, name = test.partition("::")
    ids = [tid for tid, _ in task.tests]
    if path != test_file or (name and name not in ids):
        return TracedOutcome(exit_code=5, text="")
    verdict = judge_on(runtime, task, source, random.Random(0), with_stress=False)
    if verdict.rejected:
        raise ToolError(f"trace_report: the module cannot run: {verdict.rejected}")
    lines: list[str] = []
    chosen = [t for t in verdict.tests if not name or t.id == name]
    for outcome in chosen:
        lines.append(f"{test_file}::{outcome.id} {outcome.outcome.upper()}")
        lines += [line[:MAX_LINE_CHARS] for line in outcome.message.splitlines()[:MAX_ERROR_LINES]]
    code = 0 if all(t.outcome == "passed" for t in chosen) else 1
    return TracedOutcome(exit_code=code, text="\n".join(lines))
