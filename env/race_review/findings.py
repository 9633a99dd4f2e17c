"""What the review can say against a class: a finding (a race, a lock that may not be held, a deadlock) or that it
cannot follow a construct, each at a line of the source."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Literal

Kind = Literal["race", "atomicity", "lock", "deadlock", "leak", "escape", "cannot-follow"]


@dataclass(frozen=True, order=True)
class Finding:
    line: int
    text: str
    kind: Kind = "race"

    def message(self) -> str:
        return f"line {self.line}: {self.text}" if self.line else self.text


class CannotFollow(Exception):
    """A construct the review cannot follow: the whole review stops there and says so by name."""

    def __init__(self, node: ast.AST | None, what: str):
        self.line = getattr(node, "lineno", 0) if node is not None else 0
        self.what = what
        super().__init__(what)

    def finding(self) -> Finding:
        return Finding(self.line, f"the review cannot follow {self.what}", "cannot-follow")
