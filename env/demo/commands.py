"""pdb-like debugger commands typed in the demo, turned into the environment's ``debug_*`` tool calls.

    parse("b src/cart.py:12 if qty > 3")  ->  {"action_type": "debug_break", "path": "src/cart.py", "line": 12, "condition": "qty > 3"}
    parse("p total")                       ->  {"action_type": "debug_eval", "expression": "total"}

A command that cannot be understood raises ``CommandError`` with the usage, which the UI shows.
"""

from __future__ import annotations

import re
from typing import Any

USAGE = (
    "debugger commands: start <test id or script path> | b <path>:<line> [if <condition>] | cl [<path>[:<line>]] | "
    "c | s | n | r | until [<line>] | w | l [<start> [<end>]] | p <expression> | locals [<frame>] | globals [<frame>] | restart"
)

# Commands without arguments, with pdb's short and long spellings.
_PLAIN = {
    "debug_continue": ("c", "cont", "continue"),
    "debug_step": ("s", "step"),
    "debug_next": ("n", "next"),
    "debug_return": ("r", "return"),
    "debug_where": ("w", "where", "bt"),
    "debug_restart": ("restart", "run"),
}
_BY_WORD = {word: tool for tool, words in _PLAIN.items() for word in words}
_PLACE = re.compile(r"^(?P<path>[^\s:]+):(?P<line>\d+)$")


class CommandError(ValueError):
    pass


def _int(text: str, what: str) -> int:
    if not text.isdigit():
        raise CommandError(f"{what} must be a line or frame number, not {text!r}")
    return int(text)


def parse(text: str) -> dict[str, Any]:
    """One command line to one action."""
    line = text.strip()
    if not line:
        raise CommandError("type a debugger command; " + USAGE)
    word, _, rest = line.partition(" ")
    rest = rest.strip()
    word = word.lower()
    if word in _BY_WORD and not rest:
        return {"action_type": _BY_WORD[word]}
    if word == "start":
        if not rest:
            raise CommandError("start needs a test id (tests/test_x.py::test_y) or a script path")
        target = "script" if rest.endswith(".py") and "::" not in rest and not rest.split("/")[-1].startswith("test_") else "test"
        return {"action_type": "debug_start", target: rest}
    if word in ("b", "break"):
        place, _, condition = rest.partition(" if ")
        match = _PLACE.match(place.strip())
        if not match:
            raise CommandError("break needs <path>:<line>, for example b src/app.py:12")
        action: dict[str, Any] = {"action_type": "debug_break", "path": match["path"], "line": int(match["line"])}
        if condition.strip():
            action["condition"] = condition.strip()
        return action
    if word in ("cl", "clear"):
        if not rest:
            return {"action_type": "debug_clear"}
        match = _PLACE.match(rest)
        return {"action_type": "debug_clear", "path": match["path"], "line": int(match["line"])} if match else {"action_type": "debug_clear", "path": rest}
    if word in ("unt", "until"):
        return {"action_type": "debug_until", "line": _int(rest, "until's argument")} if rest else {"action_type": "debug_until"}
    if word in ("l", "list"):
        bounds = rest.split()
        if len(bounds) > 2:
            raise CommandError("list takes at most a start and an end line")
        action = {"action_type": "debug_list"}
        for key, value in zip(("start", "end"), bounds, strict=False):
            action[key] = _int(value, f"list's {key}")
        return action
    if word in ("p", "pp", "print", "eval", "!"):
        if not rest:
            raise CommandError(f"{word} needs an expression")
        return {"action_type": "debug_eval", "expression": rest}
    if word in ("locals", "globals"):
        action = {"action_type": "debug_inspect", "scope": word}
        if rest:
            action["frame"] = _int(rest, "the frame")
        return action
    raise CommandError(f"unknown debugger command {word!r}; " + USAGE)
