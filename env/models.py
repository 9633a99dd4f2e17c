"""Typed Action / Observation / State of AgentDebuggerEnv (the OpenEnv wire contract).

    DebugAction(action_type="submit_fix", fixed_code="...", hypothesis="the loop stops early")
    DebugAction(action_type="query_context", query_type="function_signature", query_target="binary_search")
    DebugAction(action_type="give_up", final_diagnosis="...")

An action is validated by the environment, not by the schema: an unknown ``action_type``, a
missing field or an unknown field is the agent's mistake and comes back as an observation whose
``error`` says what was wrong (HTTP 200), so an evaluation is never interrupted by a 422.

The fields are defined once in ``env.wire`` (the client's models use the same ones without
importing OpenEnv); these are OpenEnv's base classes plus those fields.
"""

from __future__ import annotations

from typing import Any

from openenv.core.env_server.types import Action, Observation, State
from pydantic import PrivateAttr

from env.graders.mechanisms import MECHANISMS
from env.wire import (  # noqa: F401  (re-exported: the server and agents import these from here)
    ACTION_CONFIG,
    ACTION_TYPES,
    MECHANISM_DOC,
    QUERY_TYPES,
    SUSPECT_DOC,
    ActionFields,
    AttemptView,
    ObservationFields,
    StateFields,
)

# The longest hypothesis, diagnosis or query target an episode accepts (the demo's text boxes stop there too).
MAX_TEXT_FIELD = 8 * 1024

# The structured hypothesis fields, shared by submit_fix and the repository families' submit.
CLAIM_PROPERTIES: dict[str, Any] = {
    "suspect": {"type": "string", "description": SUSPECT_DOC},
    "mechanism": {"type": "string", "enum": list(MECHANISMS), "description": MECHANISM_DOC},
}
# The classic action types as OpenAI function-calling tools (published in /tasks, like a repository task's).
CLASSIC_TOOLS = [
    {"type": "function", "function": {
        "name": "submit_fix", "description": "Submit the complete corrected module with your theory of the bug; runs the tests.",
        "parameters": {"type": "object", "properties": {"fixed_code": {"type": "string"}, "hypothesis": {"type": "string"}, **CLAIM_PROPERTIES},
                       "required": ["fixed_code", "hypothesis"], "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "query_context", "description": "Ask about the code or the tests (the first query is free).",
        "parameters": {"type": "object", "properties": {"query_type": {"type": "string", "enum": list(QUERY_TYPES)}, "query_target": {"type": "string"}},
                       "required": ["query_type"], "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "give_up", "description": "End the episode.",
        "parameters": {"type": "object", "properties": {"final_diagnosis": {"type": "string"}}, "additionalProperties": False}}},
]


# The mixin comes first so its fields override OpenEnv's (``reward``) while OpenEnv's keep their
# place in the schema; the docstring is the mixin's, as pydantic publishes a class's own one.

class DebugAction(ActionFields, Action):
    __doc__ = ActionFields.__doc__
    model_config = ACTION_CONFIG


class DebugObservation(ObservationFields, Observation):
    __doc__ = ObservationFields.__doc__

    # The kind of mistake ``error`` reports (UnknownTool, InvalidArguments, another ToolError ...), for the tool
    # protocol's error types; private, so never on the wire: the action wire's observation stays as it was.
    _mistake: type[Exception] | None = PrivateAttr(default=None)

    @property
    def mistake(self) -> type[Exception] | None:
        return self._mistake

    def with_mistake(self, kind: type[Exception] | None) -> DebugObservation:
        self._mistake = kind
        return self


class DebugState(StateFields, State):
    __doc__ = StateFields.__doc__
