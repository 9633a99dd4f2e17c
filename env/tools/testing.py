"""Test tools of the repository interface: run_tests, and the two that end an episode (submit, give_up).

``run_tests`` always uses the task's own test files, restored: edits to tests in the workspace
change nothing, so an agent cannot pass by rewriting them. The same run asked again on the same files answers with
the episode's kept run (``env.verdict.reuse``). It runs the visible tests only: a held-out
test's id answers as any unknown id does. ``submit`` runs the held-out tests too, in a run of their own
(``env.verdict.repo_judge.run_graded``); its report says only how many of them failed.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from env.graders.mechanisms import MECHANISMS, check_mechanism
from env.held_out import held_out_line
from env.tools.base import NoArgs, Tool, ToolContext, ToolError, ToolResult, register
from env.verdict.outcome import RepoVerdict, held_out_failed
from env.verdict.repo_judge import run_graded, run_tests

MAX_REPORT_CHARS = 8000


class RunTestsArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    test_ids: list[str] | None = Field(
        None, max_length=200, description="pytest node ids or test file paths to run; omit to run every test"
    )


class SubmitArgs(BaseModel):
    """The structured hypothesis a submission may carry: reported with the grade, never part of it."""

    model_config = ConfigDict(extra="forbid")
    hypothesis: str | None = Field(None, max_length=8192, description="Optional: your theory of the bug")
    suspect: str | None = Field(
        None, min_length=1, max_length=300, description="Optional: the faulty function's name, or file:line of the faulty line"
    )
    mechanism: str | None = Field(
        None, description="Optional: the bug's mechanism, one of the listed values", json_schema_extra={"enum": list(MECHANISMS)}
    )

    @field_validator("mechanism")
    @classmethod
    def _known(cls, value: str | None) -> str | None:
        return None if value is None else check_mechanism(value)


def select_tests(ctx: ToolContext, wanted: list[str] | None) -> list[str] | None:
    if wanted is None:
        return None
    task = ctx.repo_task
    visible = task.visible_tests
    # Held-out ids are not known here: one named by an agent is an unknown id like any other (same answer, same run).
    known = [t for t in dict.fromkeys(task.visible_fail_to_pass + task.visible_pass_to_pass) if t.split("::")[0] in visible]
    chosen: list[str] = []
    for item in wanted:
        if not isinstance(item, str) or not item.strip():
            raise ToolError("run_tests: every test id must be a non-empty string")
        if item in visible:  # a whole file
            chosen += [t for t in known if t.split("::")[0] == item] or [item]
        elif item in known or (item.split("::")[0] in visible and "::" in item):
            chosen.append(item)
        else:
            sample = ", ".join(known[:8]) + (" ..." if len(known) > 8 else "")
            raise ToolError(f"run_tests: unknown test id {item!r}; the task's tests include: {sample}")
    if not chosen:
        raise ToolError("run_tests: the selection holds no tests")
    return list(dict.fromkeys(chosen))


def visible_run(ctx: ToolContext, select: list[str] | None) -> RepoVerdict:
    """The visible tests (``select``: their ids, None for all) on the workspace's files: the episode's kept run of the
    very same files and selection when it has one (``env.verdict.reuse``), else a new run, kept for the next."""
    files = ctx.workspace.files()
    return ctx.runs.answer(
        files, select, lambda: run_tests(ctx.runtime.sandbox, ctx.repo_task, files, select, graded=False, hosts=ctx.runtime.verdict_hosts)
    )


def report(verdict: RepoVerdict, expected: list[str] | None = None, held_out: int | None = None) -> str:
    """What a run shows the agent: the visible tests' outcomes, excerpts and the project's output; ``held_out`` (a
    graded run's count of failed held-out tests) adds ``held_out_line``, right after the summary so no cut drops it."""
    extra = [held_out_line(held_out)] if held_out is not None else []
    if verdict.error:
        return "\n".join([f"No tests ran: {verdict.error}", *extra])
    counts: dict[str, int] = {}
    for status in verdict.outcomes.values():
        counts[status] = counts.get(status, 0) + 1
    missing = [t for t in (expected or []) if t not in verdict.outcomes]
    summary = ", ".join(f"{n} {s.lower()}" for s, n in sorted(counts.items())) or ("no visible tests ran" if extra else "no tests ran")
    lines = [summary + (f", {len(missing)} did not run" if missing else ""), *extra]
    if verdict.aborted:
        lines.append(f"The project's process stopped: {verdict.aborted}")
    for node, excerpt in verdict.collect_errors.items():
        lines.append(f"\nERROR collecting {node}\n{excerpt}")
    for test, status in verdict.outcomes.items():
        if status not in ("PASSED", "SKIPPED", "XFAIL"):
            lines.append(f"\n{status} {test}\n{verdict.excerpts.get(test, '').rstrip()}")
    for test in missing[:20]:
        lines.append(f"\nNOT RUN {test}")
    if verdict.output.strip():
        lines.append("\n--- output of the project's code ---\n" + verdict.output.rstrip())
    text = "\n".join(lines)
    return text if len(text) <= MAX_REPORT_CHARS else text[:MAX_REPORT_CHARS] + "\n[... report cut]"


@register
class RunTests(Tool[RunTestsArgs]):
    name = "run_tests"
    description = (
        "Run the repository's tests (all, or the given test ids / test files) against your current code. "
        "Each test is PASSED, FAILED, ERROR or SKIPPED, with the failure's excerpt."
    )
    Args = RunTestsArgs

    def run(self, ctx: ToolContext, args: RunTestsArgs) -> ToolResult:
        selected = select_tests(ctx, args.test_ids)
        verdict = visible_run(ctx, selected)
        expected = [t for t in selected or [] if "::" in t]  # an unselected run may not see hidden tests
        return ToolResult(output=report(verdict, expected), data={"outcomes": dict(verdict.outcomes)}, verdict=verdict)


@register
class Submit(Tool[SubmitArgs]):
    name = "submit"
    description = "Submit your changes: every test runs once more and the episode ends with its grade."
    submits = True
    Args = SubmitArgs

    def run(self, ctx: ToolContext, args: SubmitArgs) -> ToolResult:
        task, files = ctx.repo_task, ctx.workspace.files()
        verdict = run_graded(ctx.runtime.sandbox, task, files, ctx.runtime.verdict_hosts, visible=ctx.runs.of(files))
        failed = held_out_failed(verdict.held_out, task.held_out, task.fail_to_pass) if verdict.held_out is not None else None
        return ToolResult(output=report(verdict, task.visible_fail_to_pass + task.visible_pass_to_pass, failed), verdict=verdict)


@register
class GiveUp(Tool[NoArgs]):
    name = "give_up"
    description = "End the episode without submitting (scores 0)."

    def run(self, ctx: ToolContext, args: NoArgs) -> ToolResult:
        return ToolResult(output="You gave up; the episode is over.")
