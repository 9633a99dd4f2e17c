"""Breakpoints as data, and how an edit moves them (pure functions).

    bps = [Breakpoint(path="shop/cart.py", line=40), Breakpoint(path="shop/cart.py", line=12)]
    kept, dropped = shift_for_edit(bps, "shop/cart.py", old_start=20, old_end=22, new_count=5)
    # line 40 -> 42 (the edit added 2 lines above it); line 12 is untouched

A breakpoint inside the replaced range is dropped (its line no longer exists as it was); one
below it moves by the edit's line delta; one above it, or in another file, stays.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class Breakpoint(BaseModel):
    path: str
    line: int = Field(ge=1)
    condition: str | None = None
    log_message: str | None = None  # a logpoint: the message is written to the program's output, no stop

    def label(self) -> str:
        return f"{self.path}:{self.line}" + (f" if {self.condition}" if self.condition else "") + (
            f" log {self.log_message!r}" if self.log_message else ""
        )


def shift_for_edit(
    breakpoints: list[Breakpoint], path: str, old_start: int, old_end: int, new_count: int
) -> tuple[list[Breakpoint], list[Breakpoint]]:
    """Lines ``old_start..old_end`` of ``path`` became ``new_count`` lines (old_end = old_start - 1: an insertion)."""
    delta = new_count - (old_end - old_start + 1)
    kept: list[Breakpoint] = []
    dropped: list[Breakpoint] = []
    for bp in breakpoints:
        if bp.path != path or bp.line < old_start:
            kept.append(bp)
        elif bp.line <= old_end:
            dropped.append(bp)
        else:
            kept.append(bp.model_copy(update={"line": bp.line + delta}))
    return kept, dropped
