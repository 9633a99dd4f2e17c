"""Typed Action / Observation / State of AgentDebuggerEnv (the OpenEnv wire contract).

    DebugAction(action_type="submit_fix", fixed_code="...", hypothesis="the loop stops early")
    DebugAction(action_type="query_context", query_type="function_signature", query_target="binary_search")
    DebugAction(action_type="give_up", final_diagnosis="...")

An action is validated by the environment, not by the schema: an unknown ``action_type``, a
missing field or an unknown field is the agent's mistake and comes back as an observation whose
``error`` says what was wrong (HTTP 200), so an evaluation is never interrupted by a 422.
"""

from __future__ import annotations

from typing import Any

from openenv.core.env_server.types import Action, Observation, State
from pydantic import BaseModel, ConfigDict, Field

from env.graders.mechanisms import MECHANISMS

ACTION_TYPES = ("submit_fix", "query_context", "give_up")

SUSPECT_DOC = "Optional: the faulty function's name, or file:line of the faulty line (scored instead of the text's location)"
MECHANISM_DOC = "Optional: the bug's mechanism, one of the published list (scored instead of the text's mechanism)"
# The structured hypothesis fields, shared by submit_fix and the repository families' submit.
CLAIM_PROPERTIES: dict[str, Any] = {
    "suspect": {"type": "string", "description": SUSPECT_DOC},
    "mechanism": {"type": "string", "enum": list(MECHANISMS), "description": MECHANISM_DOC},
}
QUERY_TYPES = ("function_signature", "related_code", "error_explanation", "test_details")

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


class DebugAction(Action):
    """One agent action. Fields that an action type does not use must be left out."""

    model_config = ConfigDict(extra="allow", validate_assignment=True)

    action_type: str = Field("", description="submit_fix | query_context | give_up")
    fixed_code: str | None = Field(None, description="submit_fix: the complete corrected module")
    hypothesis: str | None = Field(None, description="submit_fix: your theory of the bug (required)")
    suspect: str | None = Field(None, description="submit_fix / submit: " + SUSPECT_DOC)
    mechanism: str | None = Field(None, description="submit_fix / submit: " + MECHANISM_DOC)
    query_type: str | None = Field(None, description="query_context: " + " | ".join(QUERY_TYPES))
    query_target: str | None = Field(None, description="query_context: a function, class or test name")
    final_diagnosis: str | None = Field(None, description="give_up: what you believe the bug is")


class AttemptView(BaseModel):
    """One earlier submission as the agent sees it."""

    code: str
    hypothesis: str
    output: str
    tests_passed: int
    execution_time_ms: float
    timed_out: bool


class DebugObservation(Observation):
    """What the agent sees after reset and after every step.

    ``reward`` (OpenEnv's field) is this step's reward, a float; the structured reward is in
    ``step_reward``, ``cumulative_reward``, ``grader_score`` and ``breakdown``.
    """

    episode_id: str = ""
    task_id: str = ""
    family: str = Field("", description="classic | repo | procedural")
    task_description: str = Field("", description="What is wrong, as the task states it (a repository task's issue text)")
    buggy_code: str = ""
    test_suite: str = ""
    current_code: str = ""
    initial_error_output: str = ""
    current_error_output: str = ""
    tests_passed: int = 0
    tests_total: int = 0
    previous_attempts: list[AttemptView] = Field(default_factory=list)
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
    test_results: dict[str, str] = Field(default_factory=dict, description="Repository tasks: each test's status in the latest run")
    available_actions: list[str] = Field(default_factory=list, description="The action types this episode accepts")
    tool_result: dict[str, Any] = Field(default_factory=dict, description="The last tool's result as data (a debugger command's frame, stack, variables ...)")
    visible_files: dict[str, str] = Field(default_factory=dict, description="Procedural tasks: the files opened so far, as they are now")
    logs: list[str] = Field(default_factory=list, description="Procedural tasks: the log lines the last analyze_logs showed")
    time_remaining: int | None = Field(None, description="Procedural tasks: steps left before the episode is cut off")


class DebugState(State):
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
