"""What ``trace_report`` reports, as data: a traced test's calls (``TraceReport``), a race check's replayed
interleaving (``RaceTrace``), and the trusted side's outcome of the traced test (``TracedOutcome``).

    report = TraceReport(test="t.py::t", exit_code=1, calls=[...], calls_made=2, cut=0, pytest="")

A module of their own, importing nothing of env.tools: the tool context (``env.tools.base``) names a report and an
outcome as what a family's replay and trusted run give, and the modules that make them (``trace``,
``traced_outcome``) import the tool context, so the models cannot live in either without an import circle.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

_TEXT = 200  # a value's text (the tracer cuts reprs at 120 characters)
_NAME = 300
Text = Annotated[str, StringConstraints(max_length=_TEXT)]
Name = Annotated[str, StringConstraints(max_length=_NAME)]
Change = Annotated[list[Text | None], Field(min_length=2, max_length=2)]


class TraceCall(BaseModel):
    """One call: bounded, since a record comes from the traced process (``trace.TraceRecord``)."""

    model_config = ConfigDict(extra="forbid")
    id: int
    function: Annotated[str, StringConstraints(max_length=_NAME, pattern=r"^[\w.<>]+$")]  # a qualified name: no free text
    path: Name
    line: int = Field(ge=0)
    thread: Annotated[str, StringConstraints(max_length=100)]
    caller: int | None
    args: dict[Name, Text] = Field(max_length=64)
    returned: Text | None = None
    raised: Name | None = None
    locals_changed: dict[Name, Change] = Field({}, max_length=64)
    self_changed: dict[Name, Change] = Field({}, max_length=64)


class RaceStep(BaseModel):
    """One step of a replayed interleaving: a shared access, a lock operation, a switch, a call or its return."""

    model_config = ConfigDict(extra="forbid")
    thread: str
    event: str
    line: int = 0
    function: str = ""
    code: str = ""
    locks: list[str] = []


class RaceTrace(BaseModel):
    """The race check's failing interleaving (or, when none fails, its last one), replayed step by step."""

    model_config = ConfigDict(extra="forbid")
    scenario: str
    problem: str
    start: dict[str, str]
    steps: list[RaceStep]
    steps_cut: int = 0
    conflicts: list[str] = []


class TraceReport(BaseModel):
    model_config = ConfigDict(extra="forbid")
    test: str
    exit_code: int
    calls: list[TraceCall]
    calls_made: int
    cut: int
    pytest: str
    race: RaceTrace | None = None


class TracedOutcome(BaseModel):
    """What the trusted run says of the traced test: pytest's exit code for it, and its failure as the view allows."""

    exit_code: int
    text: str
