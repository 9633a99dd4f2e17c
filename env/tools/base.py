"""What a tool is, and the catalog tool sets are built from.

    @register
    class ViewFile(Tool[ViewFileArgs]):
        name = "view_file"
        description = "Show a file with line numbers"
        Args = ViewFileArgs                       # a pydantic model: validation and JSON schema

        def run(self, ctx: ToolContext, args: ViewFileArgs) -> ToolResult: return ToolResult(output="...")

    TOOLS["view_file"].schema()                   # an OpenAI function-calling tool definition

Adding a tool changes no episode code: an episode looks tools up here by action_type.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic_core import ErrorDetails

from env.debugger.session import DebugSession, Project
from env.project import RepoTask
from env.registry import Registry
from env.tools.reports import TracedOutcome, TraceReport
from env.verdict.outcome import RepoVerdict
from env.verdict.reuse import EpisodeRuns
from env.workspace import Workspace

if TYPE_CHECKING:  # for annotations only: importing them would load OpenEnv (env.models) with every tool
    from env.contract import Task
    from env.runtime import Runtime

ArgsT = TypeVar("ArgsT", bound=BaseModel)


class ToolError(ValueError):
    """The agent's mistake: the message says exactly what was wrong and what to do instead."""


# The kinds of mistake a tool call is told apart by (OpenEnv's MCP error types): any other ToolError is the tool
# failing on valid arguments (an execution error).
class UnknownTool(ToolError):
    """The call names no tool this episode offers."""


class InvalidArguments(ToolError):
    """The call's arguments do not fit the tool's argument model."""


class ToolTimeout(ToolError):
    """The tool gave up on the call at its time limit."""


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolResult(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    output: str
    data: dict[str, Any] = {}
    edited: bool = False
    verdict: RepoVerdict | None = None  # run_tests: the verdict the episode's rewards are computed from


class ToolContext:
    """What a tool may touch: the episode's workspace and task, and the services to run tests.

    ``repository`` is the task as a repository, given by a family whose tasks are one (what the test tools and
    ``diff`` work on); a classic task has none, and its workbench gives the ``project``. ``project`` says what the
    debugger and script runner run on (a repository task's workspace, or a classic task's workbench); the
    episode's debugging session is made on first use.
    """

    def __init__(
        self, task: Task, workspace: Workspace, runtime: Runtime, project: Project | None = None, repository: RepoTask | None = None
    ):
        self.task, self.workspace, self.runtime, self.repository = task, workspace, runtime, repository
        # (one context per episode) its decided runs of the visible tests: the same run asked again answers with one,
        # and a submit of the same files takes the run of all of them as the visible half of its graded run
        self.runs = EpisodeRuns()
        self.project = project or self._repo_project()
        self._debugger: DebugSession | None = None
        # trace_report(race=true): the family's replay of its race check's failing interleaving (max_calls -> report),
        # given by a family whose task has such a check
        self.race_trace: Callable[[int], TraceReport] | None = None
        # trace_report: the traced test's outcome from the trusted side, given by a family whose tests run apart from a
        # repository (a classic task's judge); a repository's tests run in the split verdict
        self.test_outcome: Callable[[str], TracedOutcome] | None = None

    partial_view = False  # the agent sees only the files it opened (``shows``): no tool may show another's text

    def shows(self, path: str) -> bool:
        """Whether the agent may see the text of ``path`` (workspace-relative): every file, unless a view says otherwise."""
        return True

    def source_line(self, path: str, number: int, test_file: bool = False) -> str:
        """Line ``number`` of ``path`` as a test run used it: a repository's test file from the task (runs restore
        them), any other file from the workspace; "" if there is none."""
        text = self.repository.visible_tests.get(path) if test_file and self.repository is not None else None
        if text is None:
            try:
                full = self.workspace.resolve(path)
                text = full.read_text(encoding="utf-8", errors="replace") if full.is_file() else ""
            except (OSError, ValueError):
                return ""
        lines = text.split("\n")
        return lines[number - 1] if 0 < number <= len(lines) else ""

    def _repo_project(self) -> Project:
        task = self.repo_task
        return Project(
            files=self.workspace.files,
            paths=task.source_paths,
            environ=dict(task.environment),
            # the visible ones only: a held-out test's name must not appear in the debugger's list of tests either
            tests=[t for t in dict.fromkeys(task.visible_fail_to_pass + task.visible_pass_to_pass) if t.split("::")[0] in task.visible_tests],
        )

    @property
    def repo_task(self) -> RepoTask:
        """The task as a repository (its files, tests and environment): what the test tools and ``diff`` work on."""
        if self.repository is None:
            raise ToolError(f"this tool works on repository tasks; {self.task.id!r} is a {self.task.family} task")
        return self.repository

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


class Tool(Generic[ArgsT]):
    """A tool whose ``run`` takes ``ArgsT``: an instance of ``Args``, the model ``parse`` validates the call's arguments with."""

    name: ClassVar[str]
    description: ClassVar[str]
    Args: ClassVar[type[BaseModel]] = NoArgs
    submits: ClassVar[bool] = False  # running it grades and ends the episode

    def parse(self, raw: dict[str, Any]) -> BaseModel:
        try:
            return self.Args.model_validate(raw)
        except ValidationError as exc:
            raise InvalidArguments(f"{self.name}: " + "; ".join(describe_error(e) for e in exc.errors())) from None

    def run(self, ctx: ToolContext, args: ArgsT) -> ToolResult:
        raise NotImplementedError

    @classmethod
    def schema(cls) -> dict[str, Any]:
        parameters = cls.Args.model_json_schema()
        parameters.pop("title", None)
        for prop in parameters.get("properties", {}).values():
            prop.pop("title", None)
        return {"type": "function", "function": {"name": cls.name, "description": cls.description, "parameters": parameters}}


def describe_error(error: ErrorDetails) -> str:
    where = ".".join(str(p) for p in error.get("loc", ()))
    kind = error.get("type")
    if not where:  # the arguments taken together (a model's own check): its message alone
        return str(error.get("msg")).removeprefix("Value error, ")
    if kind == "missing":
        return f"missing field '{where}'"
    if kind == "extra_forbidden":
        return f"unknown field '{where}'"
    return f"field '{where}': {error.get('msg')}"


# Looked up by the name an action gives: a tool of any argument model (its own ``parse`` makes the ``run`` argument).
TOOLS: Registry[Tool[Any]] = Registry("tool")
ToolT = TypeVar("ToolT", bound=Tool[Any])


def register(cls: type[ToolT]) -> type[ToolT]:
    TOOLS.add(cls.name, cls())
    return cls
