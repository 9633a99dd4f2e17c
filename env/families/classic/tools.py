"""The classic family's three actions as registered tools: submit_fix, query_context and give_up.

    tool = TOOLS["submit_fix"]
    args = tool.parse({"fixed_code": "...", "hypothesis": "the loop stops early"})   # a SubmitFixArgs, or ActionError
    tool.schema()                                    # what /tasks and tools/list publish for it

Their arguments keep the reference environment's wire names (``DebugAction``'s fields), and their checks keep its
messages: a field no action has is refused by name, a field of another classic action is ignored, as it always was.
The repository's ``give_up`` takes no arguments, so the classic one, which takes ``final_diagnosis``, is registered
as ``classic_give_up`` and offered as ``give_up`` (``NAMES``). The episode answers them itself (it holds the attempts
and the grade): ``ClassicEpisode.act`` takes the parsed arguments, and ``run`` is never called.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, WithJsonSchema

from env.families.classic.fields import QUERY_TYPES
from env.graders.mechanisms import MECHANISMS
from env.interface import DEBUG_TOOLS
from env.models import MAX_TEXT_FIELD
from env.tools.base import TOOLS, InvalidArguments, Tool, ToolContext, ToolError, ToolResult, register
from env.wire import MECHANISM_DOC, SUSPECT_DOC, ActionFields

MAX_SUSPECT = 300  # a function name or file:line

# The actions under the names agents send, in the order /tasks lists them, and the registered tool each one is.
CLASSIC_ACTIONS = ("submit_fix", "query_context", "give_up")
NAMES = {"give_up": "classic_give_up"}


def classic_tool(action: str) -> ClassicTool:
    """The registered tool an action of the classic wire names."""
    tool = TOOLS[NAMES.get(action, action)]
    assert isinstance(tool, ClassicTool)
    return tool
# What a classic task's workbench (its module and tests in a directory) supports beyond the three actions.
CLASSIC_EXTRA = frozenset({"list_dir", "view_file", "search", "run_bash", "run_script", "new_relay", "trace_report", *DEBUG_TOOLS})

# The structured hypothesis fields, as submit_fix publishes them.
CLAIM_PROPERTIES: dict[str, Any] = {
    "suspect": {"type": "string", "description": SUSPECT_DOC},
    "mechanism": {"type": "string", "enum": list(MECHANISMS), "description": MECHANISM_DOC},
}
# A wire field's published schema is a plain string, as the reference environment's definitions were: null is
# accepted but not advertised, and a field the check lets go missing (to answer it in its own words) may be required.
Text = Annotated[str | None, WithJsonSchema({"type": "string"})]


def published(*required: str) -> Callable[[dict[str, Any]], None]:
    """The ``json_schema_extra`` of an action's arguments: no null defaults, and the fields the schema requires."""

    def extra(schema: dict[str, Any]) -> None:
        for prop in schema.get("properties", {}).values():
            prop.pop("default", None)
        if required:
            schema["required"] = list(required)

    return extra


class ActionError(InvalidArguments):
    """An ill-formed action (its fields): the step counts, nothing else happens, and the message says why."""


class SubmitFixArgs(BaseModel):
    # hypothesis is required by the schema but not by the check: a submission without one is paid a penalty, not refused
    model_config = ConfigDict(extra="forbid", json_schema_extra=published("fixed_code", "hypothesis"))
    fixed_code: Text = None
    hypothesis: Text = None
    suspect: Annotated[str | None, WithJsonSchema(CLAIM_PROPERTIES["suspect"])] = None
    mechanism: Annotated[str | None, WithJsonSchema(CLAIM_PROPERTIES["mechanism"])] = None


class QueryContextArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra=published("query_type"))
    query_type: Annotated[str | None, WithJsonSchema({"type": "string", "enum": list(QUERY_TYPES)})] = None
    query_target: Text = None


class GiveUpArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra=published())
    final_diagnosis: Text = None


def check_text(name: str, value: str | None, limit: int | None = MAX_TEXT_FIELD) -> None:
    if value is None:
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ActionError(f"field '{name}' is not valid UTF-8 text (it contains a lone surrogate)") from None
    if limit is not None and len(value) > limit:
        raise ActionError(f"field '{name}' is {len(value)} characters long; the limit is {limit}")


def check_claim_fields(suspect: str | None, mechanism: str | None) -> None:
    """The structured hypothesis fields every family's submission takes: a short suspect, a mechanism from the closed list."""
    check_text("suspect", suspect, limit=MAX_SUSPECT)
    if suspect is not None and not suspect.strip():
        raise ActionError("field 'suspect' is empty; give a function name or file:line, or leave it out")
    if mechanism is not None and mechanism not in MECHANISMS:
        raise ActionError(f"field 'mechanism' is {mechanism[:60]!r}; expected one of: {', '.join(MECHANISMS)} (see /tasks)")


class ClassicTool(Tool[Any]):
    """One of the three actions: ``parse`` checks the wire fields in the reference environment's order and words."""

    action: ClassVar[str]  # the name agents send
    overview: ClassVar[dict[str, Any]]  # what GET / says of it besides its fields

    def described(self) -> dict[str, Any]:
        """What GET / says of the action: its fields, then the rest of its ``overview``."""
        return {"fields": list(self.Args.model_fields), **self.overview}

    def parse(self, raw: dict[str, Any]) -> BaseModel:
        extra = sorted(k for k in raw if k not in ActionFields.model_fields)
        if extra:
            raise ActionError(
                f"unknown field(s) {', '.join(repr(e) for e in extra)} for {self.action}; its fields are: {', '.join(self.Args.model_fields)}"
            )
        check_text("fixed_code", raw.get("fixed_code"), limit=None)  # its size is the policy's to judge
        for name in ("hypothesis", "query_type", "query_target", "final_diagnosis"):
            check_text(name, raw.get(name))
        check_claim_fields(raw.get("suspect"), raw.get("mechanism"))
        self.require(raw)
        return self.Args.model_validate({k: v for k, v in raw.items() if k in self.Args.model_fields})

    def require(self, raw: dict[str, Any]) -> None:
        """The action's own required fields, with the reference environment's messages."""

    def run(self, ctx: ToolContext, args: Any) -> ToolResult:
        raise ToolError(f"{self.action} is answered by a classic episode, not run as a tool")


@register
class SubmitFix(ClassicTool):
    name = action = "submit_fix"
    description = "Submit the complete corrected module with your theory of the bug; runs the tests."
    overview = {
        "mechanisms": MECHANISMS,
        "doc": "Run the complete corrected module against the tests; suspect and mechanism are optional structured hypothesis fields.",
    }
    Args = SubmitFixArgs
    submits = True

    def require(self, raw: dict[str, Any]) -> None:
        if not (raw.get("fixed_code") or "").strip():
            raise ActionError("submit_fix needs 'fixed_code': the complete corrected module")


@register
class QueryContext(ClassicTool):
    name = action = "query_context"
    description = "Ask about the code or the tests (the first query is free)."
    overview = {"query_types": list(QUERY_TYPES), "doc": "Ask about the code or tests; the first query is free."}
    Args = QueryContextArgs

    def require(self, raw: dict[str, Any]) -> None:
        if not raw.get("query_type"):
            raise ActionError(f"query_context needs 'query_type': one of {', '.join(QUERY_TYPES)}")


@register
class ClassicGiveUp(ClassicTool):
    name = "classic_give_up"
    action = "give_up"
    description = "End the episode."
    overview = {"doc": "End the episode."}
    Args = GiveUpArgs


def _published(action: str) -> dict[str, Any]:
    schema = classic_tool(action).schema()
    schema["function"]["name"] = action
    return schema


# The three as OpenAI function definitions under the names agents send: what the default profile publishes.
CLASSIC_TOOLS = [_published(action) for action in CLASSIC_ACTIONS]
