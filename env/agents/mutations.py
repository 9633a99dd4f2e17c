"""Small source edits a debugger would try first: flipped comparisons, constants off by one, swapped
arithmetic, and conversions unwrapped; with ``extended`` also the next guesses (a condition negated, `and`
for `or`, `is` and `in` flipped, two arguments swapped, a flag inverted, a computed value never returned).
Each is spliced into the text at the node's position, so the rest of the file keeps its formatting and its
line count.

    for m in mutations(source): m.line, m.description, m.source
    for m in mutations(source, extended=True): ...   # the repository heuristic's wider set
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from env.pyparse import parse

_FLIPS = {ast.Lt: "<=", ast.LtE: "<", ast.Gt: ">=", ast.GtE: ">", ast.Eq: "!=", ast.NotEq: "=="}
_SYMBOL = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_ARITH = {ast.Add: ("+", "-"), ast.Sub: ("-", "+")}
_CONVERSIONS = {"str", "bytes", "int", "float", "list", "tuple", "set", "sorted", "round", "abs"}


@dataclass(frozen=True)
class Mutation:
    line: int
    function: str
    description: str
    source: str
    kind: int = 0  # 0 comparison, 1 conversion, 2 arithmetic, 3 constant, 4 logic, 5 arguments, 6 return: the order worth trying


def _offsets(source: str) -> list[int]:
    # Lines as the parser counts them: str.splitlines would also split at a form feed or U+2028.
    starts, total = [0], 0
    for line in source.encode("utf-8").splitlines(keepends=True):
        total += len(line)
        starts.append(total)
    return starts


def mutations(source: str, extended: bool = False) -> list[Mutation]:
    try:
        tree = parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    data = source.encode("utf-8")
    starts = _offsets(source)
    found: list[Mutation] = []
    functions = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                functions.setdefault(line, node.name)

    def at(line: int, col: int) -> int:
        return starts[line - 1] + col

    def splice(start: int, end: int, text: str, line: int, what: str, kind: int) -> None:
        new = (data[:start] + text.encode("utf-8") + data[end:]).decode("utf-8", "replace")
        if new != source:
            found.append(Mutation(line, functions.get(line, ""), what, new, kind))

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _FLIPS:
            left_end = at(node.left.end_lineno, node.left.end_col_offset)
            right_start = at(node.comparators[0].lineno, node.comparators[0].col_offset)
            old = _SYMBOL[type(node.ops[0])]
            new = _FLIPS[type(node.ops[0])]
            between = data[left_end:right_start].decode("utf-8", "replace")
            if old in between:
                segment = between.replace(old, new, 1)
                splice(left_end, right_start, segment, node.lineno, f"comparison `{old}` should be `{new}` (off by one at the boundary)", 0)
        elif isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
            left_end = at(node.left.end_lineno, node.left.end_col_offset)
            right_start = at(node.right.lineno, node.right.col_offset)
            old, new = _ARITH[type(node.op)]
            between = data[left_end:right_start].decode("utf-8", "replace")
            if old in between:
                splice(left_end, right_start, between.replace(old, new, 1), node.lineno, f"`{old}` should be `{new}`", 2)
        elif isinstance(node, ast.Constant) and type(node.value) is int and node.end_lineno == node.lineno:
            start, end = at(node.lineno, node.col_offset), at(node.end_lineno, node.end_col_offset)
            for delta in (1, -1):
                splice(start, end, str(node.value + delta), node.lineno, f"the constant {node.value} is off by one (should be {node.value + delta})", 3)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range" and len(node.args) >= 2:
            end = node.args[1]
            start, stop = at(end.lineno, end.col_offset), at(end.end_lineno, end.end_col_offset)
            text = data[start:stop].decode("utf-8", "replace")
            splice(start, stop, f"{text} + 1", node.lineno, "the range stops one short: its end should be one higher", 2)
        elif isinstance(node, ast.Slice):
            for bound in (node.lower, node.upper):
                if bound is not None and not isinstance(bound, ast.Constant):
                    start, stop = at(bound.lineno, bound.col_offset), at(bound.end_lineno, bound.end_col_offset)
                    text = data[start:stop].decode("utf-8", "replace")
                    for sign in ("+", "-"):
                        splice(start, stop, f"({text}) {sign} 1", node.lower.lineno if node.lower else bound.lineno, f"the slice bound `{text}` is off by one", 2)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
            left = data[at(node.left.lineno, node.left.col_offset) : at(node.left.end_lineno, node.left.end_col_offset)].decode("utf-8", "replace")
            right = data[at(node.right.lineno, node.right.col_offset) : at(node.right.end_lineno, node.right.end_col_offset)].decode("utf-8", "replace")
            start, stop = at(node.lineno, node.col_offset), at(node.end_lineno, node.end_col_offset)
            splice(start, stop, f"-(-({left}) // ({right}))", node.lineno, "the division rounds down where it must round up (a partial last group is lost)", 2)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _CONVERSIONS and node.args:
            start, end = at(node.lineno, node.col_offset), at(node.end_lineno, node.end_col_offset)
            arg = node.args[0]
            inner = data[at(arg.lineno, arg.col_offset) : at(arg.end_lineno, arg.end_col_offset)].decode("utf-8", "replace")
            splice(start, end, inner, node.lineno, f"the `{node.func.id}(...)` conversion corrupts the value; use its argument as is", 1)
    if extended:
        found.extend(_extended(tree, data, at, functions))
    found.sort(key=lambda m: (m.kind, m.line))
    return found


# operators confused with one another (+ and - are in the first set)
_CONFUSED = {ast.Mod: ("%", "//"), ast.FloorDiv: ("//", "%"), ast.Mult: ("*", "/"), ast.Div: ("/", "*"), ast.BitAnd: ("&", "|"), ast.BitOr: ("|", "&"), ast.LShift: ("<<", ">>"), ast.RShift: (">>", "<<")}
_LOGIC = {ast.Is: ("is not", "is"), ast.IsNot: ("is not", "is"), ast.In: ("not in", "in"), ast.NotIn: ("not in", "in")}


def _extended(tree: ast.AST, data: bytes, at: Callable[[int, int], int], functions: dict[int, str]) -> list[Mutation]:
    """The wider guesses, each keeping the line count (the heuristic rewrites whole files by their line count)."""
    source = data.decode("utf-8", "replace")
    found: list[Mutation] = []

    def text(node: ast.AST) -> str:
        return data[at(node.lineno, node.col_offset) : at(node.end_lineno, node.end_col_offset)].decode("utf-8", "replace")  # type: ignore[attr-defined]

    def splice(start: int, end: int, new: str, line: int, what: str, kind: int) -> None:
        changed = (data[:start] + new.encode("utf-8") + data[end:]).decode("utf-8", "replace")
        if changed != source and changed.count("\n") == source.count("\n"):
            found.append(Mutation(line, functions.get(line, ""), what, changed, kind))

    def whole(node: ast.AST, new: str, what: str, kind: int) -> None:
        splice(at(node.lineno, node.col_offset), at(node.end_lineno, node.end_col_offset), new, node.lineno, what, kind)  # type: ignore[attr-defined]

    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and type(node.op) in _CONFUSED:
            left_end = at(node.left.end_lineno, node.left.end_col_offset)  # type: ignore[arg-type]
            right_start = at(node.right.lineno, node.right.col_offset)
            old, new = _CONFUSED[type(node.op)]
            between = data[left_end:right_start].decode("utf-8", "replace")
            if old in between:
                splice(left_end, right_start, between.replace(old, new, 1), node.lineno, f"`{old}` should be `{new}`", 4)
        if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            test = node.test
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                whole(test, text(test.operand), f"the condition `{_short(text(test))}` is negated: drop the `not`", 4)
            else:
                whole(test, f"not ({text(test)})", f"the condition `{_short(text(test))}` is the wrong way round", 4)
        elif isinstance(node, ast.BoolOp) and len(node.values) == 2:
            old, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
            left_end = at(node.values[0].end_lineno, node.values[0].end_col_offset)  # type: ignore[arg-type]
            right_start = at(node.values[1].lineno, node.values[1].col_offset)
            between = data[left_end:right_start].decode("utf-8", "replace")
            if f" {old} " in f" {between} ":
                splice(left_end, right_start, between.replace(old, new, 1), node.lineno, f"`{old}` should be `{new}`", 4)
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _LOGIC:
            negated, plain = _LOGIC[type(node.ops[0])]
            old, new = (negated, plain) if isinstance(node.ops[0], (ast.IsNot, ast.NotIn)) else (plain, negated)
            left_end = at(node.left.end_lineno, node.left.end_col_offset)  # type: ignore[arg-type]
            right_start = at(node.comparators[0].lineno, node.comparators[0].col_offset)
            between = data[left_end:right_start].decode("utf-8", "replace")
            if old in between:
                splice(left_end, right_start, between.replace(old, new, 1), node.lineno, f"`{old}` should be `{new}`", 4)
        elif isinstance(node, ast.Constant) and type(node.value) is bool:
            whole(node, str(not node.value), f"the flag {node.value} should be {not node.value}", 5)
        elif isinstance(node, ast.Call) and len(node.args) == 2 and not any(isinstance(a, ast.Starred) for a in node.args):
            first, second = node.args
            if text(first) != text(second):
                start = at(first.lineno, first.col_offset)
                stop = at(second.end_lineno, second.end_col_offset)  # type: ignore[arg-type]
                middle = data[at(first.end_lineno, first.end_col_offset) : at(second.lineno, second.col_offset)].decode("utf-8", "replace")  # type: ignore[arg-type]
                splice(start, stop, text(second) + middle + text(first), node.lineno, f"the arguments `{_short(text(first))}` and `{_short(text(second))}` are swapped", 5)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (unreturned := _unreturned(node)):
            last, name = unreturned  # returned after a `;` on the statement's own line: no line is added
            end = at(last.end_lineno or last.lineno, last.end_col_offset or 0)
            splice(end, end, f"; return {name}", last.end_lineno or last.lineno, f"{node.name} computes {name} but never returns it", 6)
    return found


def _unreturned(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[ast.stmt, str] | None:
    """A function that returns values elsewhere but ends by computing one into a name: that statement and the name."""
    last = node.body[-1]
    returns = [n for n in ast.walk(node) if isinstance(n, ast.Return) and n.value is not None]
    if not returns or not isinstance(last, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        return None
    targets = last.targets if isinstance(last, ast.Assign) else [last.target]
    if len(targets) != 1 or not isinstance(targets[0], ast.Name):
        return None
    return last, targets[0].id


def _short(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= 40 else line[:37] + "..."
