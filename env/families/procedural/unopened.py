"""The last gate of a partial view: no line of a file the agent has not opened leaves in an observation.

    gate = UnopenedLines.of(task.files, opened={"svc/orders.py"}, workspace=workspace.files())
    gate.scrub("E   ValueError: return total * rate  # ...")   # "E   ValueError: [a line of a file you have not opened]  # ..."

The tools already show no unopened file's text (``env.families.procedural.tools``; ``trace_report`` renders a
traceback's frames as ``path:line in function``). What the project's code computes is another matter: an exception
message, a returned value or an argument can hold any text the code read, and code the agent wrote can read any file
of the workspace. So every text an observation carries from a tool (its output, error and data) is scrubbed here of
each line (stripped, ``MIN_CHARS`` or longer) of the task's unopened files, as written, in a ``repr`` or in JSON,
unless the same line is in a file the agent has opened or written itself. It is a check on verbatim text: code that
encodes what it read (base64, one character at a time) passes it, and a line replaced by the placeholder tells the
agent that some unopened file holds it; docs/procedural-tasks.md states both.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from env.patches import Files

MIN_CHARS = 12  # shorter lines ("return x", "else:") are in every program: hiding them would say nothing of a file
PLACEHOLDER = "[a line of a file you have not opened]"
JSONValue = str | int | float | bool | None | list["JSONValue"] | dict[str, "JSONValue"]


def _lines(text: str) -> set[str]:
    return {line.strip() for line in text.splitlines() if len(line.strip()) >= MIN_CHARS}


def hidden_lines(task_files: Files, opened: set[str], workspace: Files) -> tuple[str, ...]:
    """The lines to hide: the unopened files', less those of opened files (as the task gave them and as they are
    now) and of the agent's own files; longest first, so a line that holds another is replaced whole."""
    seen: set[str] = set()
    for path in opened:
        seen |= _lines(task_files.get(path, "")) | _lines(workspace.get(path, ""))
    for path, text in workspace.items():
        if path not in task_files:  # a file the agent created: its own text
            seen |= _lines(text)
    hidden = set().union(*(_lines(text) for path, text in task_files.items() if path not in opened)) - seen
    return tuple(sorted(hidden, key=lambda line: (-len(line), line)))


@dataclass(frozen=True)
class UnopenedLines:
    hidden: tuple[str, ...]
    pattern: re.Pattern[str] | None

    @classmethod
    def of(cls, task_files: Files, opened: set[str], workspace: Files) -> UnopenedLines:
        return cls.compiled(hidden_lines(task_files, opened, workspace))

    @classmethod
    def compiled(cls, hidden: tuple[str, ...]) -> UnopenedLines:
        forms = dict.fromkeys(form for line in hidden for form in (line, repr(line)[1:-1], json.dumps(line)[1:-1]))
        ordered = sorted(forms, key=len, reverse=True)
        return cls(hidden, re.compile("|".join(map(re.escape, ordered))) if ordered else None)

    def scrub(self, text: str) -> str:
        return text if self.pattern is None else self.pattern.sub(PLACEHOLDER, text)

    def scrub_data(self, value: JSONValue) -> JSONValue:
        """``scrub`` on every string of a tool's data (keys included)."""
        if isinstance(value, str):
            return self.scrub(value)
        if isinstance(value, list):
            return [self.scrub_data(item) for item in value]
        if isinstance(value, dict):
            return {self.scrub(str(k)): self.scrub_data(v) for k, v in value.items()}
        return value
