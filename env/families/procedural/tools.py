"""Tools of a procedural episode, where the agent sees only what it has opened.

    open_file {"path": "svc/orders.py"}          # the file's text; from now on it is visible
    edit_file {"path": ..., "start_line": 3, "end_line": 4, "new_text": "..."}   # only opened files
    analyze_logs {}                               # the service's logs, with noise and drift
    run_tests {"test_ids": [...]}                 # per-test status and the error's first line, no source

Partial observability is enforced here: no tool shows the content of a file the agent has not
opened (search names the unopened files that match, without their lines; test reports carry
no source lines). ``ctx.view`` (a :class:`ProcContext`'s) is the episode's :class:`ProcView`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel

from env.families.procedural.noise import LogModel
from env.families.procedural.task import ProceduralTask
from env.held_out import held_out_line
from env.runtime import Runtime
from env.tools.base import TOOLS, Tool, ToolContext, ToolError, ToolResult, register
from env.tools.files import EditArgs, ReplaceTextArgs, SearchArgs, ViewFileArgs
from env.tools.testing import RunTestsArgs, SubmitArgs, select_tests, visible_run
from env.verdict.outcome import RepoVerdict, held_out_failed
from env.verdict.repo_judge import run_graded
from env.workspace import PathError, Workspace, check_path


@dataclass
class ProcView:
    logs: LogModel
    opened: set[str] = field(default_factory=set)
    shown_logs: list[str] = field(default_factory=list)


class ProcContext(ToolContext):
    """A procedural episode's tool context: the workspace and task, plus what the agent has opened and seen."""

    partial_view = True

    def __init__(self, task: ProceduralTask, workspace: Workspace, runtime: Runtime, view: ProcView):
        super().__init__(task, workspace, runtime, repository=task)
        self.view = view

    def shows(self, path: str) -> bool:
        """An opened file's text, or a file that is not the task's (the agent's own, a library's); no other."""
        return path in self.view.opened or path not in self.task.files


def _view(ctx: ToolContext) -> ProcView:
    if not isinstance(ctx, ProcContext):
        raise ToolError("this tool belongs to procedural tasks")
    return ctx.view


def _rel(path: str) -> str:
    try:
        return check_path(path)
    except PathError as exc:
        raise ToolError(str(exc)) from None


def _must_be_open(ctx: ToolContext, path: str, tool: str) -> str:
    rel = _rel(path)
    if rel not in _view(ctx).opened and (ctx.workspace.root / rel).exists():
        raise ToolError(f"{tool}: open {rel} first (open_file); you can only edit what you have seen")
    return rel


@register
class OpenFile(Tool):
    name = "open_file"
    description = "Open a file of the service: shows its text with line numbers and keeps it in visible_files."
    Args = ViewFileArgs

    def run(self, ctx: ToolContext, args: ViewFileArgs) -> ToolResult:
        result = TOOLS["view_file"].run(ctx, args)
        _view(ctx).opened.add(result.data["path"])
        return result


@register
class EditFile(Tool):
    name = "edit_file"
    description = "Replace lines start_line..end_line of an opened file with new_text (end_line = start_line - 1 inserts)."
    Args = EditArgs

    def run(self, ctx: ToolContext, args: EditArgs) -> ToolResult:
        _must_be_open(ctx, args.path, self.name)
        return TOOLS["edit"].run(ctx, args)


@register
class ReplaceInFile(Tool):
    name = "replace_in_file"
    description = "Replace an exact, unique occurrence of old_text in an opened file with new_text."
    Args = ReplaceTextArgs

    def run(self, ctx: ToolContext, args: ReplaceTextArgs) -> ToolResult:
        _must_be_open(ctx, args.path, "replace_text")
        return TOOLS["replace_text"].run(ctx, args)


@register
class SearchOpened(Tool):
    name = "search_opened"
    description = "Find a text in the files you have opened; other files that match are named, without their lines."
    Args = SearchArgs

    def run(self, ctx: ToolContext, args: SearchArgs) -> ToolResult:
        opened = _view(ctx).opened
        result = TOOLS["search"].run(ctx, args.model_copy(update={"max_results": 200}))
        shown: list[str] = []
        hidden: dict[str, int] = {}
        for line in result.output.splitlines():
            path = line.split(":", 1)[0]
            if line.startswith("[") or line.startswith("no matches"):
                continue
            if path in opened:
                shown.append(line)
            else:
                hidden[path] = hidden.get(path, 0) + 1
        text = "\n".join(shown[: args.max_results]) or f"no matches for {args.pattern!r} in the files you have opened"
        if hidden:
            text += "\nalso matching, in files you have not opened: " + ", ".join(f"{p} ({n})" for p, n in sorted(hidden.items()))
        return ToolResult(output=text, data={"matches": len(shown), "unopened": sorted(hidden)})


@register
class AnalyzeLogs(Tool):
    name = "analyze_logs"
    description = "Read the service's logs from the failing run (noisy: lines can be cut, misattributed or irrelevant, and they drift)."

    def run(self, ctx: ToolContext, args: BaseModel) -> ToolResult:
        view = _view(ctx)
        view.shown_logs = view.logs.observe()
        return ToolResult(output="\n".join(view.shown_logs), data={"lines": len(view.shown_logs)})


def short_report(verdict: RepoVerdict, held_out_failed: int | None = None) -> str:
    """Statuses and each failure's first line: no traceback, so no source line of any file.

    A graded run's report ends with how many held-out tests failed (``held_out_failed``), nothing else of them: they
    ran in a run of their own (``run_graded``), so its outcomes, excerpts and output are never in ``verdict.outcomes``.
    """
    if verdict.error:
        return f"No tests ran: {verdict.error.splitlines()[0]}"
    outcomes = dict(verdict.outcomes)
    counts: dict[str, int] = {}
    for status in outcomes.values():
        counts[status] = counts.get(status, 0) + 1
    lines = [", ".join(f"{n} {s.lower()}" for s, n in sorted(counts.items())) or "no tests ran"]
    for test, status in outcomes.items():
        if status in ("PASSED", "SKIPPED", "XFAIL"):
            continue
        excerpt = [line.strip() for line in verdict.excerpts.get(test, "").splitlines() if line.strip().startswith("E ")]
        first = excerpt[0][1:].strip() if excerpt else ""
        lines.append(f"{status} {test}" + (f": {first[:300]}" if first else ""))
    if held_out_failed is not None:
        lines.append(held_out_line(held_out_failed))
    return "\n".join(lines)


@register
class RunTestsShort(Tool):
    name = "run_tests_short"
    description = "Run the service's tests (all, or the given ids): each test's status and its error's first line."
    Args = RunTestsArgs

    def run(self, ctx: ToolContext, args: RunTestsArgs) -> ToolResult:
        verdict = visible_run(ctx, select_tests(ctx, args.test_ids))
        return ToolResult(output=short_report(verdict), data={"outcomes": dict(verdict.outcomes)}, verdict=verdict)


@register
class SubmitShort(Tool):
    name = "submit_short"
    description = "Submit your changes: every test runs once more and the episode ends with its grade."
    submits = True
    Args = SubmitArgs

    def run(self, ctx: ToolContext, args: SubmitArgs) -> ToolResult:
        task, files = ctx.repo_task, ctx.workspace.files()
        verdict = run_graded(ctx.runtime.sandbox, task, files, ctx.runtime.verdict_hosts, visible=ctx.runs.of(files))
        failed = held_out_failed(verdict.held_out, task.held_out, task.fail_to_pass) if verdict.held_out is not None else None
        return ToolResult(output=short_report(verdict, failed), verdict=verdict)
