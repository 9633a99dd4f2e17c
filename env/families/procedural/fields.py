"""The procedural family's own wire fields (issue 52, item 1): the files opened so far, the logs shown, the steps
left. Pydantic only: the client imports this through ``env.wire``."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ProceduralObservationFields(BaseModel):
    visible_files: dict[str, str] = Field(default_factory=dict, description="Procedural tasks: the files opened so far, as they are now")
    logs: list[str] = Field(default_factory=list, description="Procedural tasks: the log lines the last analyze_logs showed")
    time_remaining: int | None = Field(None, description="Procedural tasks: steps left before the episode is cut off")
