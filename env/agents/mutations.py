"""Small source edits a debugger would try first: flipped comparisons, constants off by one, swapped
arithmetic, and conversions unwrapped. Each is spliced into the text at the node's position, so the
rest of the file keeps its formatting.

    for m in mutations(source): m.line, m.description, m.source
"""

from __future__ import annotations

import ast
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
    kind: int = 0  # 0 comparison, 1 conversion, 2 arithmetic, 3 constant: the order worth trying


def _offsets(source: str) -> list[int]:
    # Lines as the parser counts them: str.splitlines would also split at a form feed or U+2028.
    starts, total = [0], 0
    for line in source.encode("utf-8").splitlines(keepends=True):
        total += len(line)
        starts.append(total)
    return starts


def mutations(source: str) -> list[Mutation]:
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
    found.sort(key=lambda m: (m.kind, m.line))
    return found
