"""The shell tool of the ``bash`` interface: one command in the repository root, sandboxed.

    run_bash(command="python -m pytest -q tests/test_cart.py")
    # -> the command's output (stdout and stderr together), then "[exit status 1, 412 ms]"

The command runs through ``runtime.shell`` (``env.sandbox.shell``): no network, only the workspace
and a private temporary directory writable, time and output limits, and nothing it starts outlives
it. Git commands that reach past the workspace's single commit are refused first, by
``env.tools.git_guard``. Files the command changes are the agent's edits, as with the file tools.
"""

from __future__ import annotations

import os

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from env.sandbox.runner import RefusedToRun
from env.sandbox.shell import ShellError
from env.tools.base import Tool, ToolContext, ToolError, ToolResult, register
from env.tools.git_guard import check_command

MAX_COMMAND_CHARS = 10_000


class RunBashArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    command: str = Field(
        min_length=1,
        max_length=MAX_COMMAND_CHARS,
        description="A bash command line, run with `bash -c` in the repository root, e.g. `python -m pytest -q -x` or `grep -rn cache src/`",
    )

    @field_validator("command", mode="before")
    @classmethod
    def _text(cls, value: object) -> object:
        if not isinstance(value, str):
            return value  # pydantic says what is wrong with it
        if "\0" in value:
            raise PydanticCustomError("nul_character", "the command contains a NUL character")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise PydanticCustomError("lone_surrogate", "the command is not valid UTF-8 text (it contains a lone surrogate)") from None
        return value


def command_environment(ctx: ToolContext) -> dict[str, str]:
    """The task's environment, with PYTHONPATH holding its import roots as absolute paths in the workspace."""
    paths = getattr(ctx.task, "source_paths", None)
    if paths is None:
        return {}
    env = {k: v for k, v in dict(getattr(ctx.task, "environment", None) or {}).items() if k != "PYTHONPATH"}
    root = ctx.workspace.root
    env["PYTHONPATH"] = ":".join(os.path.normpath(os.path.join(root, p)) for p in paths)
    return env


@register
class RunBash(Tool[RunBashArgs]):
    name = "run_bash"
    description = (
        "Run a bash command in the repository root (your working copy) and show its output and exit status. "
        "No network; time, output and workspace size limits apply, and every process it starts ends with it. "
        "Files it changes are your edits. Git sees the repository's single commit only."
    )
    Args = RunBashArgs

    def run(self, ctx: ToolContext, args: RunBashArgs) -> ToolResult:
        refusal = check_command(args.command)
        if refusal:
            raise ToolError(refusal)
        shell = ctx.runtime.shell
        try:
            result = shell.run(ctx.workspace.root, args.command, env=command_environment(ctx))
        except RefusedToRun as exc:
            raise ToolError(f"run_bash: commands cannot run on this server: {exc}") from None
        except ShellError as exc:  # QuotaExceeded too: the workspace is as it was before the command
            raise ToolError(f"run_bash: {exc}") from None
        if result.timed_out:
            footer = f"[{result.note}]"  # "timed out after N s", and any other note
        else:
            footer = f"[exit status {result.exit_code}, {result.duration_ms:.0f} ms" + (f"; {result.note}" if result.note else "") + "]"
        output = result.output if not result.output or result.output.endswith("\n") else result.output + "\n"
        return ToolResult(
            output=(output or "(no output)\n") + footer,
            data={
                "exit_code": result.exit_code,
                "timed_out": result.timed_out,
                "output_truncated": result.output_truncated,
                "duration_ms": round(result.duration_ms, 1),
            },
        )
