"""The wire contract of AgentDebuggerEnv: every field of the action, observation and state, defined once.

    ActionFields, ObservationFields, StateFields   # the fields, mixed into both sides: the ones every family
                                                   # shares here, each family's own from env.families.fields
    DebugAction, DebugObservation, DebugState      # the client's models (no OpenEnv import)

The server's models (``env.models``) are OpenEnv's ``Action`` / ``Observation`` / ``State`` plus
these mixins; the client's models here are the same mixins on stand-ins for those three base
classes, so a field added to a mixin appears on both sides and their JSON schemas are equal
(``tests/test_client_wire.py`` checks it). This module imports only pydantic and the families' field
mixins (pydantic only): importing OpenEnv would pull in its Gradio web interface, seconds per process.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from env.families.fields import FamilyActionFields, FamilyObservationFields, parts, refuse_duplicates

SUSPECT_DOC = "Optional: the faulty function's name, or file:line of the faulty line (scored instead of the text's location)"
MECHANISM_DOC = "Optional: the bug's mechanism, one of the published list (scored instead of the text's mechanism)"

# An action is validated by the environment, not by the schema (an unknown field comes back as an
# observation's `error`), so both sides accept extra fields.
ACTION_CONFIG = ConfigDict(extra="allow", validate_assignment=True)


class SharedActionFields(BaseModel):
    action_type: str = Field("", description="submit_fix | query_context | give_up")
    suspect: str | None = Field(None, description="submit_fix / submit: " + SUSPECT_DOC)
    mechanism: str | None = Field(None, description="submit_fix / submit: " + MECHANISM_DOC)


class SharedObservationFields(BaseModel):
    # OpenEnv allows bool | int | float here; ours is always a float (0.0, never 0), as trainers sum it.
    reward: float | None = Field(None, description="This step's reward (None only before the first step of some clients)")
    episode_id: str = ""
    task_id: str = ""
    family: str = Field("", description="classic | repo | procedural")
    task_description: str = Field("", description="What is wrong, as the task states it (a repository task's issue text)")
    tests_passed: int = 0
    tests_total: int = 0
    attempts_remaining: int = 0
    max_attempts: int = 0
    step_number: int = 0
    max_steps: int = 0
    score_estimate: float = 0.0
    query_result: str | None = Field(None, description="The answer to a query_context action")
    error: str | None = Field(None, description="What was wrong with the last action, if anything")
    info: dict[str, Any] = Field(default_factory=dict, description="{'error': ...} mirrors `error` for reference clients")
    step_reward: float = 0.0
    cumulative_reward: float = 0.0
    grader_score: float | None = Field(None, description="The episode grade, set on the terminal step")
    breakdown: dict[str, float] = Field(default_factory=dict, description="Every reward and grader component by name")
    tool_output: str | None = Field(None, description="Repository tasks: what the last tool returned")
    available_actions: list[str] = Field(default_factory=list, description="The action types this episode accepts")
    tool_result: dict[str, Any] = Field(default_factory=dict, description="The last tool's result as data (a debugger command's frame, stack, variables ...)")
    infra_failed: bool = Field(
        False, description="The machine, not the agent, decided this step (its sandbox died or could not start, the server is stopping ...): "
                           "it paid nothing and was not counted; take it again. Leave such a step out of training and statistics",
    )  # fmt: skip
    infra_cause: str | None = Field(None, description="Why, when infra_failed: fork_server_died, sandbox_start, scratch_full, replica_stopping, test_host_crashed, slot_wait, trusted_memory, trusted_time, run_starved")


# The fields every family shares, then each family's own (env.families.fields): pydantic puts the last base's first.
refuse_duplicates(SharedActionFields, *parts(FamilyActionFields))
refuse_duplicates(SharedObservationFields, *parts(FamilyObservationFields))


class ActionFields(FamilyActionFields, SharedActionFields):
    """One agent action. Fields that an action type does not use must be left out."""


class ObservationFields(FamilyObservationFields, SharedObservationFields):
    """What the agent sees after reset and after every step.

    ``reward`` (OpenEnv's field) is this step's reward, a float; the structured reward is in
    ``step_reward``, ``cumulative_reward``, ``grader_score`` and ``breakdown``.
    """


class StateFields(BaseModel):
    """The episode's internal state (GET /state, or a WebSocket `state` message)."""

    task_id: str = ""
    seed: int | None = None
    done: bool = False
    solved: bool = False
    gave_up: bool = False
    truncated: bool = False
    attempts_used: int = 0
    max_attempts: int = 0
    max_steps: int = 0
    tests_passed: int = 0
    tests_total: int = 0
    queries_used: int = 0
    cumulative_reward: float = 0.0
    grader_score: float | None = None
    secret_fingerprint: str = Field("", description="Names the server's secret (never reveals it): runs that must agree need the same one")
    infra_failures: list[str] = Field(default_factory=list, description="The causes of the steps the machine, not the agent, decided (not counted)")


# Stand-ins for OpenEnv's base classes (openenv.core.env_server.types), same fields and config, so
# the client's models below serialise and validate exactly like the server's.

_OPENENV_CONFIG = ConfigDict(validate_assignment=True, arbitrary_types_allowed=True)


class _OpenEnvAction(BaseModel):
    model_config = ConfigDict(extra="forbid", **_OPENENV_CONFIG)

    metadata: dict[str, Any] = Field(default_factory=dict, description="Additional metadata for the action")


class _OpenEnvObservation(BaseModel):
    model_config = ConfigDict(extra="forbid", **_OPENENV_CONFIG)

    done: bool = Field(default=False, description="Whether the episode has terminated")
    reward: bool | int | float | None = Field(default=None, description="Reward signal from the last action")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Additional metadata for the observation")


class _OpenEnvState(BaseModel):
    model_config = ConfigDict(extra="allow", **_OPENENV_CONFIG)

    episode_id: str | None = Field(default=None, description="Unique identifier for the current episode")
    step_count: int = Field(default=0, ge=0, description="Number of steps taken in the current episode")


# The mixin comes first so its fields override the base's (``reward``) while the base's fields keep
# their place in the schema; the docstring is the mixin's, as pydantic publishes a class's own one.

class DebugAction(ActionFields, _OpenEnvAction):
    __doc__ = ActionFields.__doc__
    model_config = ACTION_CONFIG


class DebugObservation(ObservationFields, _OpenEnvObservation):
    __doc__ = ObservationFields.__doc__


class DebugState(StateFields, _OpenEnvState):
    __doc__ = StateFields.__doc__
