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

from openenv.core.env_server.types import Action, Observation, State
from pydantic import PrivateAttr

from env.wire import (  # noqa: F401  (re-exported: the server and agents import these from here)
    ACTION_CONFIG,
    MECHANISM_DOC,
    SUSPECT_DOC,
    ActionFields,
    ObservationFields,
    StateFields,
)

# The longest hypothesis, diagnosis or query target an episode accepts (the demo's text boxes stop there too).
MAX_TEXT_FIELD = 8 * 1024

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
