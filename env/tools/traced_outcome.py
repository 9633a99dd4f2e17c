"""The traced test's outcome and failure for ``trace_report``, from the trusted side: never from the traced process.

    outcome = traced_outcome(ctx, "tests/test_tax.py::test_rate")
    outcome.exit_code          # 0 passed, 1 failed, 2 its file failed to collect, 5 no such test ran
    outcome.text               # "tests/test_tax.py::test_rate FAILED\\ntests/test_tax.py:22 in test_rate\\n ...\\nKeyError: 'x'"

A repository task's test runs in the split verdict (``env.verdict.repo_judge.run_tests``, as ``run_tests`` runs it:
the task's own tests, in the trusted test process); a family whose tests run elsewhere (a classic task's judge) gives
``ctx.test_outcome``. The failure is rebuilt from the run's excerpt as frames (``path:line in function``) and the
exception's lines; a frame's source line is read here, from the file the run used, and only where ``ctx.shows``
allows (a partial view shows the lines of opened files only). Nothing of the excerpt's own source lines is kept: in
the project's frames they were printed by the project's process.
"""

from __future__ import annotations

import re

from env.tools.base import ToolContext, ToolError
from env.tools.reports import TracedOutcome
from env.tools.testing import select_tests
from env.verdict.outcome import RepoVerdict
from env.verdict.repo_judge import run_tests

MAX_ERROR_LINES = 12
MAX_LINE_CHARS = 300
MAX_FRAMES = 40

_HOST_FRAME = re.compile(r"^(?P<path>[^\s:]+\.py):(?P<line>\d+): in (?P<function>\S+)$")
_PROJECT_FRAME = re.compile(r'^E\s+File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<function>\S+)$')
_RUN_DIR = re.compile(r"^.*/adbg-run-[^/]+/")  # the sandbox's copy of the project: paths inside it are the workspace's
_LIBRARY = re.compile(r"^.*/(?:site-packages|dist-packages|python\d+\.\d+)/")
_PROJECT_HEADER = "in the project's code (sandbox):"
_VERDICT_OWN = "/adbg_host/"
_PASSING = {"PASSED", "SKIPPED", "XFAIL", "XPASS"}


def traced_outcome(ctx: ToolContext, test: str) -> TracedOutcome:
    if ctx.test_outcome is not None:
        return ctx.test_outcome(test)
    if ctx.repository is None:
        raise ToolError("trace_report: this task has no trusted run of its tests, so nothing can be traced here")
    try:
        selected = select_tests(ctx, [test])
    except ToolError as exc:
        raise ToolError("trace_report" + str(exc).removeprefix("run_tests")) from None
    verdict = run_tests(ctx.runtime.sandbox, ctx.repo_task, ctx.workspace.files(), selected, graded=False, hosts=ctx.runtime.verdict_hosts)
    return repo_outcome(ctx, test, verdict)


def repo_outcome(ctx: ToolContext, test: str, verdict: RepoVerdict) -> TracedOutcome:
    """The outcome of ``test`` (an id, or a file: each of its tests) in ``verdict``, its failures rendered for ``ctx``."""
    if verdict.error:
        task = ctx.repo_task
        if test not in task.visible_tests and test not in task.visible_fail_to_pass + task.visible_pass_to_pass:
            return TracedOutcome(exit_code=5, text="")  # an id the task does not list, whose run found nothing
        raise ToolError(f"trace_report: the test could not run: {verdict.error.splitlines()[0][:MAX_LINE_CHARS]}")
    ran = {t: s for t, s in verdict.outcomes.items() if t == test or t.split("::")[0] == test}
    lines: list[str] = []
    for node, excerpt in verdict.collect_errors.items():
        if node == test.split("::")[0]:
            lines += [f"ERROR collecting {node}", *failure_lines(ctx, excerpt)]
    for node, status in ran.items():
        lines.append(f"{node} {status}")
        if status not in _PASSING:
            lines += failure_lines(ctx, verdict.excerpts.get(node, ""))
    if not ran:
        code = 2 if lines else 5
    else:
        code = 0 if all(s in _PASSING for s in ran.values()) else 1
    return TracedOutcome(exit_code=code, text="\n".join(lines))


def _project_path(path: str) -> str:
    """A project frame's path as the workspace names it; a library's from its package; anything else by its name."""
    if _RUN_DIR.match(path):
        return _RUN_DIR.sub("", path)
    if _LIBRARY.match(path):
        return _LIBRARY.sub("", path)
    return path.rsplit("/", 1)[-1] if path.startswith(("/", "..")) else path


def failure_lines(ctx: ToolContext, excerpt: str) -> list[str]:
    """A failure's frames (``path:line in function``, under each the source line where ``ctx.shows`` the file) and
    its exception's lines; every other line of the excerpt (the source lines it quotes, carets) is left out."""
    lines: list[str] = []
    frames = errors = 0
    hidden = False
    for raw in excerpt.splitlines():
        host, project = _HOST_FRAME.match(raw), _PROJECT_FRAME.match(raw)
        frame = host or project
        if frame is not None:
            if _VERDICT_OWN in frame["path"]:
                continue  # the trusted test process's own machinery: neither the project's nor the tests'
            frames += 1
            if frames > MAX_FRAMES:
                continue
            path = frame["path"] if host and not frame["path"].startswith(("/", "..")) else _project_path(frame["path"])
            lines.append(f"{path}:{frame['line']} in {frame['function']}"[:MAX_LINE_CHARS])
            if not ctx.shows(path):
                hidden = hidden or _RUN_DIR.match(frame["path"]) is not None or host is not None
                continue
            source = ctx.source_line(path, int(frame["line"]), test_file=host is not None)
            if source:
                lines.append("    " + source.strip()[:MAX_LINE_CHARS])
            continue
        if not raw.startswith("E "):
            continue  # a source line or carets under a frame: printed from a file, never shown from here
        body = raw[1:]
        text = body.strip()
        depth = len(body) - len(body.lstrip())
        if text == _PROJECT_HEADER:
            lines.append(text)
        elif text and (depth <= 3 or text.startswith("+")) and errors < MAX_ERROR_LINES:
            errors += 1  # the exception and pytest's explanation of an assertion: deeper lines quote source
            lines.append(text[:MAX_LINE_CHARS])
    if frames > MAX_FRAMES:
        lines.append(f"({frames - MAX_FRAMES} more frame(s) not shown)")
    if hidden:
        lines.append("(the lines of files you have not opened are not shown: open_file shows them)")
    return lines
