"""The plain text a human would see for each debugger reply (pure functions of the reply's data).

    render_stop(state, output="", breakpoints=[])    # "> shop/cart.py(12)total()\\n-> return ..."
    render_answer("inspect", answer)                 # "locals of total() at shop/cart.py:12: ..."
    render_ended("the test ... PASSED", output)
"""

from __future__ import annotations

from typing import Any

from env.debugger.breakpoints import Breakpoint

EVENTS = {"entry": "", "step": "", "breakpoint": "Breakpoint reached", "return": "--Return--"}


def _place(frame: dict[str, Any]) -> str:
    return f"{frame['file']}({frame['line']}){frame['function']}()"


def _variables(variables: dict[str, Any]) -> str:
    values = variables.get("values", {})
    if not values:
        return "  (none)"
    lines = [f"  {name} = {v['repr']}  ({v['type']})" for name, v in values.items()]
    if variables.get("more"):
        lines.append(f"  ... {variables['more']} more not shown")
    return "\n".join(lines)


def _source(lines: list[list[Any]], current: int, marks: set[int]) -> str:
    out = []
    for number, text in lines:
        arrow = "->" if number == current else "  "
        mark = "B" if number in marks else " "
        out.append(f"{number:>4} {mark}{arrow} {text}".rstrip())
    return "\n".join(out)


def render_stop(state: dict[str, Any], output: str = "", breakpoints: list[Breakpoint] | None = None) -> str:
    frame = state["frame"]
    marks = {b.line for b in breakpoints or [] if b.path == frame["file"]}
    head = EVENTS.get(state.get("event", ""), "")
    parts = [head] if head else []
    if state.get("note"):
        parts.append(f"Note: {state['note']}")
    parts.append(f"> {_place(frame)}")
    parts.append(_source(state.get("source", []), frame["line"], marks))
    if "return_value" in state:
        value = state["return_value"]
        parts.append(f"return value: {value['repr']}  ({value['type']})")
    parts.append("locals:\n" + _variables(state.get("locals", {})))
    if output:
        parts.append("--- program output ---\n" + output.rstrip("\n"))
    return "\n".join(parts)


def render_answer(name: str, answer: dict[str, Any]) -> str:
    if name == "where":
        stack = answer["stack"]
        return "\n".join(
            f"{'>' if i == len(stack) - 1 else ' '} [{len(stack) - 1 - i}] {_place(f)}" for i, f in enumerate(stack)
        ) + "\n(frame 0 is the current one; pass frame=N to debug_inspect or debug_eval for its callers)"
    if name == "inspect":
        frame = answer["frame"]
        return f"{answer['scope']} of {frame['function']}() at {frame['file']}:{frame['line']}:\n" + _variables(answer["variables"])
    if name == "eval":
        if answer.get("executed"):
            return "(statement executed)"
        value = answer["value"]
        return f"{value['repr']}  ({value['type']})"
    if name == "list":
        return f"{answer['file']}:\n" + _source(answer["lines"], answer["current"], set(answer["breakpoints"]))
    return str(answer)


def render_ended(reason: str, output: str = "") -> str:
    text = f"The debugging session ended: {reason}."
    if output:
        text += "\n--- program output ---\n" + output.rstrip("\n")
    return text + "\n(debug_restart runs the same target again; your breakpoints are kept)"
