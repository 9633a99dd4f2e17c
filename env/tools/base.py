"""What a tool is, and the registry tool sets are built from.

    @register
    class ViewFile(Tool):
        name = "view_file"
        description = "Show a file with line numbers"
        Args = ViewFileArgs                       # a pydantic model: validation and JSON schema

        def run(self, ctx, args): return ToolResult(output="...")

    TOOLS["view_file"].schema()                   # an OpenAI function-calling tool definition

Adding a tool changes no episode code: an episode looks tools up here by action_type.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

from env.debugger.session import DebugSession, Project
from env.project import RepoTask
from env.registry import Registry
from env.workspace import Workspace


class ToolError(ValueError):
    """The agent's mistake: the message says exactly what was wrong and what to do instead."""


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolResult(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    output: str
    data: dict[str, Any] = {}
    edited: bool = False
    verdict: Any = None  # run_tests: the RepoVerdict the episode's rewards are computed from


class ToolContext:
    """What a tool may touch: the episode's workspace and task, and the services to run tests.

    ``project`` says what the debugger and script runner run on (a repository task's workspace,
    or a classic task's workbench); the episode's debugging session is made on first use.
    """

    def __init__(self, task: RepoTask | Any, workspace: Workspace, runtime: Any, project: Project | None = None):
        self.task, self.workspace, self.runtime = task, workspace, runtime
        self.project = project or Project(
            files=workspace.files,
            paths=task.source_paths,
            environ=dict(task.environment),
            tests=[t for t in dict.fromkeys(task.fail_to_pass + task.pass_to_pass) if t.split("::")[0] in task.visible_tests],
        )
        self._debugger: DebugSession | None = None

    @property
    def debugger(self) -> DebugSession:
        if self._debugger is None:
            self._debugger = DebugSession(self.runtime.debug_sandbox, self.project, self.runtime.debug_slots)
        return self._debugger

    @property
    def has_debugger(self) -> bool:
        return self._debugger is not None

    def close(self) -> None:
        if self._debugger is not None:
            self._debugger.close()


class Tool:
    name: ClassVar[str]
    description: ClassVar[str]
    Args: ClassVar[type[BaseModel]] = NoArgs
    submits: ClassVar[bool] = False  # running it grades and ends the episode

    def parse(self, raw: dict[str, Any]) -> BaseModel:
        try:
            return self.Args.model_validate(raw)
        except ValidationError as exc:
            raise ToolError(f"{self.name}: " + "; ".join(_describe(e) for e in exc.errors())) from None

    def run(self, ctx: ToolContext, args: Any) -> ToolResult:
        raise NotImplementedError

    @classmethod
    def schema(cls) -> dict[str, Any]:
        parameters = cls.Args.model_json_schema()
        parameters.pop("title", None)
        for prop in parameters.get("properties", {}).values():
            prop.pop("title", None)
        return {"type": "function", "function": {"name": cls.name, "description": cls.description, "parameters": parameters}}


def _describe(error: Any) -> str:
    where = ".".join(str(p) for p in error.get("loc", ())) or "arguments"
    kind = error.get("type")
    if kind == "missing":
        return f"missing field '{where}'"
    if kind == "extra_forbidden":
        return f"unknown field '{where}'"
    return f"field '{where}': {error.get('msg')}"


TOOLS: Registry[Tool] = Registry("tool")


def register(cls: type[Tool]) -> type[Tool]:
    TOOLS.add(cls.name, cls())
    return cls
