"""The classic family's own wire fields (issue 52, item 1): what its three actions take beyond the shared ones, and
what its observations show (the module, its tests, their output and the earlier attempts). Pydantic only: the client
imports this through ``env.wire``."""

from __future__ import annotations

from pydantic import BaseModel, Field

QUERY_TYPES = ("function_signature", "related_code", "error_explanation", "test_details")


class AttemptView(BaseModel):
    """One earlier submission as the agent sees it."""

    code: str
    hypothesis: str
    output: str
    tests_passed: int
    execution_time_ms: float
    timed_out: bool


class ClassicActionFields(BaseModel):
    fixed_code: str | None = Field(None, description="submit_fix: the complete corrected module")
    hypothesis: str | None = Field(None, description="submit_fix: your theory of the bug (required)")
    query_type: str | None = Field(None, description="query_context: " + " | ".join(QUERY_TYPES))
    query_target: str | None = Field(None, description="query_context: a function, class or test name")
    final_diagnosis: str | None = Field(None, description="give_up: what you believe the bug is")


class ClassicObservationFields(BaseModel):
    buggy_code: str = ""
    test_suite: str = ""
    current_code: str = ""
    initial_error_output: str = ""
    current_error_output: str = ""
    previous_attempts: list[AttemptView] = Field(default_factory=list)
