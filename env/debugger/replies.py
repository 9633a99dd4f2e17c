"""The debugger's replies as typed data: what the sandbox child may send, checked before use.

    state = parse(StopState, reply)        # a dict in the shape below, or MalformedReply

The child runs the agent's code in the same process as the tracer, so a reply may be forged by
that code; it can only mislead the agent that wrote it, but it must never break the server: every
reply is validated here (types, sizes) before anything reads it.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

MAX_TEXT = 4000


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Place(_Reply):
    file: str = Field(max_length=1000)
    line: int
    function: str = Field(max_length=1000)


class Value(_Reply):
    type: str = Field(max_length=200)
    repr: str = Field(max_length=1000)


class Variables(_Reply):
    values: dict[str, Value] = Field(default_factory=dict, max_length=200)
    more: int = 0


class StopState(_Reply):
    stopped: Literal[True]
    event: Literal["entry", "step", "breakpoint", "return"]
    note: str = Field("", max_length=MAX_TEXT)
    frame: Place
    stack: list[Place] = Field(max_length=10_000)
    locals: Variables
    source: list[tuple[int, str]] = Field(default_factory=list, max_length=100)
    return_value: Value | None = None


class Ended(_Reply):
    ended: Literal[True]
    reason: str = Field(max_length=MAX_TEXT)
    status: int | None = None
    outcome: str | None = Field(None, max_length=20)


class InspectAnswer(_Reply):
    frame: Place
    scope: Literal["locals", "globals"]
    variables: Variables


class EvalAnswer(_Reply):
    value: Value | None = None
    executed: bool = False


class ListAnswer(_Reply):
    file: str = Field(max_length=1000)
    current: int
    breakpoints: list[int] = Field(max_length=1000)
    lines: list[tuple[int, str]] = Field(max_length=100)


class ErrorAnswer(_Reply):
    error: str = Field(max_length=MAX_TEXT)


class OkAnswer(_Reply):
    ok: Literal[True]


class MalformedReply(ValueError):
    pass


Model = TypeVar("Model", bound=_Reply)


def parse(model: type[Model], reply: Any) -> dict[str, Any]:
    try:
        return model.model_validate(reply).model_dump(exclude_none=True)
    except ValidationError:
        raise MalformedReply(f"the debugger's process sent a malformed reply (expected {model.__name__})") from None
