"""AST mutations that plant one realistic bug in a covered function, for task synthesis (SWE-smith's idea).

    for m in mutants(source, "pkg/mod.py", covered_lines):
        m.operator, m.mechanisms, m.function, m.start, m.end, m.source   # the whole mutated file

Each operator names the bug it plants as a mechanism of ``env.graders.mechanisms`` (what a submission's
``mechanism`` field is scored against). Edits are spliced into the text at the node's own position, so the rest of
the file keeps its formatting and the gold patch (the reverse edit) is as small as the bug. A mutant is kept only
when it still parses and its AST differs from the original's (no edit that changes nothing).
"""

from __future__ import annotations

import ast
import bisect
import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial

from env.pyparse import parse

OPERATORS: dict[str, tuple[str, ...]] = {  # operator -> the mechanisms its bug is an instance of; the specific ones first
    "boundary": ("off_by_one", "wrong_operator"),
    "slice_off_by_one": ("off_by_one",),
    "wrong_exception": ("wrong_exception",),
    "negate_condition": ("wrong_condition",),
    "drop_condition": ("wrong_condition",),
    "swap_arguments": ("swapped_arguments",),
    "drop_return": ("missing_statement",),
    "drop_statement": ("missing_statement",),
    "wrong_variable": ("wrong_variable",),
    "swap_operator": ("wrong_operator",),
    "change_constant": ("wrong_value",),  # an integer moved by one is an off-by-one as well (see _change_constant)
}

_SWAPS: dict[type[ast.AST], tuple[str, str]] = {
    ast.Add: ("+", "-"), ast.Sub: ("-", "+"), ast.Mult: ("*", "/"), ast.Div: ("/", "*"), ast.FloorDiv: ("//", "%"),
    ast.Mod: ("%", "//"), ast.BitAnd: ("&", "|"), ast.BitOr: ("|", "&"), ast.LShift: ("<<", ">>"), ast.RShift: (">>", "<<"),
    ast.Eq: ("==", "!="), ast.NotEq: ("!=", "=="), ast.Lt: ("<", ">"), ast.Gt: (">", "<"), ast.LtE: ("<=", ">="), ast.GtE: (">=", "<="),
    ast.Is: ("is", "is not"), ast.IsNot: ("is not", "is"), ast.In: ("in", "not in"), ast.NotIn: ("not in", "in"),
}  # fmt: skip
_BOUNDARY: dict[type[ast.AST], tuple[str, str]] = {ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"), ast.Gt: (">", ">="), ast.GtE: (">=", ">")}
_EXCEPTIONS = {
    "ValueError": "TypeError", "TypeError": "ValueError", "KeyError": "IndexError", "IndexError": "KeyError",
    "AttributeError": "KeyError", "LookupError": "ValueError", "RuntimeError": "ValueError", "ZeroDivisionError": "ValueError",
    "OverflowError": "ValueError", "StopIteration": "IndexError", "NotImplementedError": "TypeError", "Exception": "ValueError",
}  # fmt: skip
_DROPPABLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Raise, ast.Delete)


@dataclass(frozen=True)
class Mutant:
    path: str
    function: str  # dotted qualname of the innermost function holding the edit
    start: int  # first and last line of the original file the edit replaces
    end: int
    operator: str
    description: str
    source: str  # the whole mutated file
    mechanisms: tuple[str, ...]

    @property
    def digest(self) -> str:
        """What the project becomes: this file, at this path (two edits giving one file are one mutant)."""
        return hashlib.sha256(f"{self.path}\0{self.source}".encode()).hexdigest()[:16]

    @property
    def key(self) -> str:
        return f"{self.path}:{self.digest}"


class _Splicer:
    """Byte offsets of AST positions (col_offset counts UTF-8 bytes), and edits spliced there."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.data = source.encode("utf-8")
        # Lines as the parser counts them: bytes split only at \n, \r\n and \r (str.splitlines also splits at a
        # form feed or U+2028, which would shift every position after one).
        self.lines = self.data.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def at(self, line: int, col: int) -> int:
        return self.starts[line - 1] + col

    def span(self, node: ast.AST) -> tuple[int, int]:
        return self.at(node.lineno, node.col_offset), self.at(node.end_lineno or node.lineno, node.end_col_offset or 0)  # type: ignore[attr-defined]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def text(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8")

    def node_text(self, node: ast.AST) -> str:
        return self.text(*self.span(node))

    def replace(self, start: int, end: int, text: str) -> str:
        return (self.data[:start] + text.encode("utf-8") + self.data[end:]).decode("utf-8")


Edit = tuple[int, int, str, str]  # byte start, byte end, new text, description
_OFF_BY_ONE = "an integer moved by one"  # a description starting so adds off_by_one to the operator's mechanisms


def _gap_replace(s: _Splicer, left: ast.AST, right: ast.AST, old: str, new: str) -> Edit | None:
    """Replace the operator token ``old`` found between two operands (outside any parentheses they carry)."""
    start, end = s.at(left.end_lineno or left.lineno, left.end_col_offset or 0), s.at(right.lineno, right.col_offset)  # type: ignore[attr-defined]
    gap = s.text(start, end)
    pattern = rf"(?<![\w=<>!]){re.escape(old)}(?![\w=<>])" if old[0].isalpha() or old in ("<", ">") else re.escape(old) + r"(?![=/<>*])"
    found = re.search(pattern, gap)
    if found is None:
        return None
    return start + len(gap[: found.start()].encode()), start + len(gap[: found.end()].encode()), new, f"`{old}` became `{new}`"


def _operators(s: _Splicer, node: ast.AST, boundary: bool) -> Iterator[Edit]:
    table = _BOUNDARY if boundary else _SWAPS
    if isinstance(node, ast.BinOp) and not boundary and type(node.op) in table:
        old, new = table[type(node.op)]
        edit = _gap_replace(s, node.left, node.right, old, new)
        if edit:
            yield edit
    elif isinstance(node, ast.AugAssign) and not boundary and type(node.op) in table:
        old, new = table[type(node.op)]
        edit = _gap_replace(s, node.target, node.value, old + "=", new + "=")
        if edit:
            yield edit
    elif isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        for i, op in enumerate(node.ops):
            if type(op) in table:
                old, new = table[type(op)]
                edit = _gap_replace(s, operands[i], operands[i + 1], old, new)
                if edit:
                    yield edit
    elif isinstance(node, ast.BoolOp) and not boundary:
        old, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
        edit = _gap_replace(s, node.values[0], node.values[1], old, new)
        if edit:
            yield edit


def _negate(s: _Splicer, node: ast.AST) -> Iterator[Edit]:
    if isinstance(node, (ast.If, ast.While, ast.IfExp)):
        test = node.test
        start, end = s.span(test)
        text = s.text(start, end)
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            yield start, end, s.node_text(test.operand), "the condition lost its `not`"
        elif "\n" not in text:
            yield start, end, f"not ({text})", "the condition is negated"


def _drop_condition(s: _Splicer, node: ast.AST) -> Iterator[Edit]:
    if isinstance(node, ast.BoolOp) and len(node.values) >= 2:
        start, end = s.span(node)
        word = " and " if isinstance(node.op, ast.And) else " or "
        for i in range(len(node.values)):
            kept = [s.node_text(v) for j, v in enumerate(node.values) if j != i]
            if all("\n" not in k for k in kept):
                text = word.join(kept)
                yield start, end, f"({text})" if len(kept) > 1 else text, f"the operand `{s.node_text(node.values[i])}` of the condition was dropped"


def _swap_arguments(s: _Splicer, node: ast.AST) -> Iterator[Edit]:
    if isinstance(node, ast.Call) and len(node.args) >= 2 and not any(isinstance(a, ast.Starred) for a in node.args[:2]):
        first, second = node.args[0], node.args[1]
        a, b = s.node_text(first), s.node_text(second)
        if a != b:
            start, end = s.at(first.lineno, first.col_offset), s.at(second.end_lineno or second.lineno, second.end_col_offset or 0)
            middle = s.text(s.at(first.end_lineno or first.lineno, first.end_col_offset or 0), s.at(second.lineno, second.col_offset))
            yield start, end, b + middle + a, f"the arguments `{a}` and `{b}` were swapped"


def _local_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    args = function.args
    names = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs] if a.arg not in ("self", "cls")]
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id not in names:
            names.append(node.id)
    return names


def _wrong_variable(s: _Splicer, node: ast.AST, locals_: list[str]) -> Iterator[Edit]:
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in locals_:
        others = [n for n in locals_ if n != node.id]
        if others:
            start, end = s.span(node)
            yield start, end, others[0], f"`{node.id}` became `{others[0]}`"


def _line_block(s: _Splicer, statement: ast.stmt) -> tuple[int, int] | None:
    """The byte span of whole lines a statement occupies alone, or None if it shares a line."""
    first = s.lines[statement.lineno - 1]
    if first[: statement.col_offset].strip():
        return None
    last_line = statement.end_lineno or statement.lineno
    last = s.lines[last_line - 1]
    if last[statement.end_col_offset or 0 :].decode("utf-8", "replace").split("#")[0].strip():
        return None
    return s.at(statement.lineno, 0), s.at(last_line + 1, 0) if last_line < len(s.starts) - 1 else len(s.data)


def _drop_statements(s: _Splicer, node: ast.AST, returns: bool) -> Iterator[Edit]:
    for field in ("body", "orelse", "finalbody"):
        block = getattr(node, field, None)
        if not isinstance(block, list) or not block or not isinstance(block[0], ast.stmt):
            continue
        for statement in block:
            if not isinstance(statement, ast.Return if returns else _DROPPABLE) or (isinstance(statement, ast.Return) and not returns):
                continue
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                continue  # a docstring or a bare constant: dropping it changes nothing
            span = _line_block(s, statement)
            if span is None:
                continue
            what = "the return statement" if returns else "the statement"
            text = s.node_text(statement).splitlines()[0]
            if len(block) > 1:
                yield span[0], span[1], "", f"{what} `{text}` was dropped"
            else:  # the block's only statement: it becomes `pass`
                indent = s.lines[statement.lineno - 1][: statement.col_offset].decode("utf-8")  # its own spaces or tabs
                yield span[0], span[1], f"{indent}pass\n", f"{what} `{text}` was dropped"


def _change_constant(s: _Splicer, node: ast.AST, bounds: set[int]) -> Iterator[Edit]:
    if not isinstance(node, ast.Constant) or (node.end_lineno or node.lineno) != node.lineno or id(node) in bounds:
        return  # a slice bound is slice_off_by_one's
    start, end = s.span(node)
    if node.value is True or node.value is False:
        yield start, end, str(not node.value), f"the constant {node.value} became {not node.value}"
    elif type(node.value) is int:
        for delta in (1, -1):
            value = node.value + delta
            if value >= 0 or node.value < 0:
                yield start, end, str(value), f"{_OFF_BY_ONE}: the constant {node.value} became {value}"


def _slice(s: _Splicer, node: ast.AST) -> Iterator[Edit]:
    if isinstance(node, ast.Slice):
        for bound in (node.lower, node.upper):
            if bound is None:
                continue
            start, end = s.span(bound)
            text = s.text(start, end)
            if isinstance(bound, ast.Constant) and type(bound.value) is int:
                yield start, end, str(bound.value + 1), f"the slice bound {text} became {bound.value + 1}"
            elif "\n" not in text:
                atom = isinstance(bound, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))
                operand = text if atom else f"({text})"  # `n if c else m` + 1 would move only m
                for sign in ("+", "-"):
                    yield start, end, f"{operand} {sign} 1", f"the slice bound `{text}` became `{operand} {sign} 1`"


def _wrong_exception(s: _Splicer, node: ast.AST) -> Iterator[Edit]:
    target: ast.AST | None = None
    if isinstance(node, ast.Raise) and node.exc is not None:
        target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    elif isinstance(node, ast.ExceptHandler) and node.type is not None:
        target = node.type
    if isinstance(target, ast.Name) and target.id in _EXCEPTIONS:
        start, end = s.span(target)
        yield start, end, _EXCEPTIONS[target.id], f"`{target.id}` became `{_EXCEPTIONS[target.id]}`"


def _functions(tree: ast.AST) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function with its dotted qualname, outermost first."""

    def visit(node: ast.AST, prefix: str) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield prefix + child.name, child
                yield from visit(child, prefix + child.name + ".")
            elif isinstance(child, ast.ClassDef):
                yield from visit(child, prefix + child.name + ".")
            else:
                yield from visit(child, prefix)

    yield from visit(tree, "")


def _own_nodes(function: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's body, not of the functions or classes nested in it (those are mutated as themselves)."""
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)) and node is not function:
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def changes_code(new: str, original_dump: str) -> bool:
    """Whether a mutated file parses and means something else than the original (whose ``ast.dump`` is given)."""
    try:
        return ast.dump(parse(new)) != original_dump
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def mutants(
    source: str, path: str, covered: set[int] | None = None, operators: tuple[str, ...] = tuple(OPERATORS), check: bool = True
) -> list[Mutant]:
    """Every mutant of the functions in ``source`` whose edited line is in ``covered`` (all lines when None).

    ``check=False`` leaves out the parse of each mutated file (the costly part, ~20 ms a mutant in a large module):
    the caller checks the mutants it tries with :func:`changes_code`."""
    try:
        tree = parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    original = ast.dump(tree)
    s = _Splicer(source)
    found: dict[str, Mutant] = {}
    for qualname, function in _functions(tree):
        locals_ = _local_names(function)
        body = function.body[1:] if function.body and isinstance(function.body[0], ast.Expr) and isinstance(function.body[0].value, ast.Constant) else function.body
        body_lines = {line for st in body for line in range(st.lineno, (st.end_lineno or st.lineno) + 1)}
        nodes = [function, *_own_nodes(function)]
        bounds = {id(b) for n in nodes if isinstance(n, ast.Slice) for b in (n.lower, n.upper, n.step) if b is not None}
        generators: dict[str, Callable[[ast.AST], Iterator[Edit]]] = {
            "swap_operator": partial(_operators, s, boundary=False),
            "boundary": partial(_operators, s, boundary=True),
            "negate_condition": partial(_negate, s),
            "drop_condition": partial(_drop_condition, s),
            "swap_arguments": partial(_swap_arguments, s),
            "wrong_variable": partial(_wrong_variable, s, locals_=locals_),
            "drop_statement": partial(_drop_statements, s, returns=False),
            "drop_return": partial(_drop_statements, s, returns=True),
            "change_constant": partial(_change_constant, s, bounds=bounds),
            "slice_off_by_one": partial(_slice, s),
            "wrong_exception": partial(_wrong_exception, s),
        }
        for operator in operators:
            for node in nodes:
                for start, end, text, description in generators[operator](node):
                    line, last = s.line_of(start), s.line_of(max(start, end - 1))
                    if line not in body_lines or (covered is not None and line not in covered):
                        continue
                    new = s.replace(start, end, text)
                    if check and not changes_code(new, original):
                        continue
                    mechanisms = OPERATORS[operator] + (("off_by_one",) if description.startswith(_OFF_BY_ONE) else ())
                    mutant = Mutant(path, qualname, line, max(line, last), operator, description, new, mechanisms)
                    found.setdefault(mutant.key, mutant)  # the same file twice: the more specific operator (listed first) names it
    return sorted(found.values(), key=lambda m: (m.start, m.operator, m.key))
