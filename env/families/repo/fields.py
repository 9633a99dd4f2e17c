"""The repository family's own wire fields (issue 52, item 1): each test's status in the latest run (the procedural
family's tasks are repositories too and show it). Pydantic only: the client imports this through ``env.wire``."""

from __future__ import annotations

from pydantic import BaseModel, Field


class RepoObservationFields(BaseModel):
    test_results: dict[str, str] = Field(default_factory=dict, description="Repository tasks: each test's status in the latest run")
