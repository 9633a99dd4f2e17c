"""A synthesized task's problem statement, written from its failing tests' own output: what a user reporting the
bug would paste, never the fix.

    problem_statement("parse", ["tests/test_parse.py::test_x"], verdict)

It names the failing tests with their one-line reasons and shows the first failure's traceback with the frames
of the project's own files left out: those would point at the planted bug's line, which is the agent's to find.
"""

from __future__ import annotations

import re

from env.project import is_test_path
from env.verdict.outcome import RepoVerdict

MAX_LISTED = 8
MAX_TRACE_LINES = 40
_FRAME = re.compile(r"^(?P<path>[^\s:][^:]*\.py):\d+: in \S+")


def keep_test_frames(excerpt: str) -> str:
    """A ``--tb=short`` excerpt keeping the tests' frames and the exception lines (project frames dropped)."""
    kept: list[str] = []
    keeping = True
    for line in excerpt.splitlines():
        frame = _FRAME.match(line)
        if frame:
            keeping = is_test_path(frame.group("path"))
        elif line.startswith("E "):
            keeping = True
        if keeping:
            kept.append(line.rstrip())
    return "\n".join(kept[-MAX_TRACE_LINES:]).strip()


SYNTHESIZED = "These tests passed before the latest change to the library's code. Find the cause and fix the code (not the tests)."


def problem_statement(library: str, failing: list[str], verdict: RepoVerdict, closing: str = SYNTHESIZED) -> str:
    count = len(failing)
    lines = [f"{count} test{'s' if count != 1 else ''} of {library} fail{'s' if count == 1 else ''}:"]
    lines += [f"- {test}: {verdict.reason(test)}" for test in failing[:MAX_LISTED]]
    if count > MAX_LISTED:
        lines.append(f"- and {count - MAX_LISTED} more")
    trace = keep_test_frames(verdict.excerpts.get(failing[0], "")) if failing else ""
    if trace:
        lines += ["", f"The output of {failing[0]}:", "", "```", trace, "```"]
    lines += ["", closing]
    return "\n".join(lines)
