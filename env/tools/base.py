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

from env.tasks.repository import RepoTask
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
    """What a tool may touch: the episode's workspace and task, and the services to run tests."""

    def __init__(self, task: RepoTask, workspace: Workspace, runtime: Any):
        self.task, self.workspace, self.runtime = task, workspace, runtime


class Tool:
    name: ClassVar[str]
    description: ClassVar[str]
    Args: ClassVar[type[BaseModel]] = NoArgs

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


TOOLS: dict[str, Tool] = {}


def register(cls: type[Tool]) -> type[Tool]:
    TOOLS[cls.name] = cls()
    return cls
