"""The mutation operators that edit one expression in place: an operator, a bound, a constant, a name, a string.

Each generator takes a node of a function (``env.authoring.mutate`` hands it every node of the function's own
code, the function itself first) and yields the :class:`~env.authoring.splice.Edit` s that plant one bug there.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from env.authoring.splice import OFF_BY_ONE, Edit, Splicer, plain_string, string_literal

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
# String constants in these roles are separators, formats or keys: an edit there is a realistic wrong value.
_STRING_ARGUMENT_METHODS = frozenset({"split", "rsplit", "partition", "rpartition", "replace", "strip", "lstrip", "rstrip", "startswith",
                                      "endswith", "removeprefix", "removesuffix", "count", "get", "pop", "setdefault"})  # fmt: skip
_STRING_KEYWORDS = frozenset({"sep", "end", "delimiter", "separator"})
_STRING_EDITS = {
    ", ": ",", ",": ", ", ": ": ":", ":": ": ", "; ": ";", ";": "; ", " ": "", "": " ", "\n": " ", "\t": " ", ".": ",", "-": "_", "_": "-",
    "%s": "%r", "%r": "%s", "%d": "%s", "{}": "{!r}", "{!r}": "{}", "=": ":",
}  # fmt: skip
# Methods of str whose twin does the same at the other end or in the other case (a call gone to the wrong one).
# split/rsplit only on a literal separator with a maxsplit (see _splits_a_string); find/index left out: lists and
# trees have them too, and a call to a method the object lacks is no realistic bug.
_METHOD_SWAPS = {
    "strip": "rstrip", "rstrip": "strip", "lstrip": "strip", "lower": "upper", "upper": "lower", "startswith": "endswith",
    "endswith": "startswith", "partition": "rpartition", "rpartition": "partition", "ljust": "rjust", "rjust": "ljust",
    "removeprefix": "removesuffix", "removesuffix": "removeprefix", "split": "rsplit", "rsplit": "split",
}  # fmt: skip
_PLAIN_TYPES = {"bool": "False", "int": "0", "float": "0.0", "str": '""'}  # a None default's plausible value, by its annotation


def _gap_replace(s: Splicer, left: ast.AST, right: ast.AST, old: str, new: str) -> Edit | None:
    """Replace the operator token ``old`` found between two operands (outside any parentheses they carry)."""
    start, end = s.end(left), s.at(right.lineno, right.col_offset)  # type: ignore[attr-defined]
    gap = s.text(start, end)
    pattern = rf"(?<![\w=<>!]){re.escape(old)}(?![\w=<>])" if old[0].isalpha() or old in ("<", ">") else re.escape(old) + r"(?![=/<>*])"
    found = re.search(pattern, gap)
    if found is None:
        return None
    return Edit(start + len(gap[: found.start()].encode()), start + len(gap[: found.end()].encode()), new, f"`{old}` became `{new}`")


def operators(s: Splicer, node: ast.AST, boundary: bool) -> Iterator[Edit]:
    table = _BOUNDARY if boundary else _SWAPS
    pairs: list[tuple[ast.AST, ast.AST, str, str]] = []
    if isinstance(node, ast.BinOp) and not boundary and type(node.op) in table:
        pairs.append((node.left, node.right, *table[type(node.op)]))
    elif isinstance(node, ast.AugAssign) and not boundary and type(node.op) in table:
        old, new = table[type(node.op)]
        pairs.append((node.target, node.value, old + "=", new + "="))
    elif isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        pairs += [(operands[i], operands[i + 1], *table[type(op)]) for i, op in enumerate(node.ops) if type(op) in table]
    elif isinstance(node, ast.BoolOp) and not boundary:
        pairs.append((node.values[0], node.values[1], *(("and", "or") if isinstance(node.op, ast.And) else ("or", "and"))))
    for left, right, old, new in pairs:
        edit = _gap_replace(s, left, right, old, new)
        if edit:
            yield edit


def negate(s: Splicer, node: ast.AST) -> Iterator[Edit]:
    if isinstance(node, (ast.If, ast.While, ast.IfExp)):
        test = node.test
        start, end = s.span(test)
        text = s.text(start, end)
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            yield Edit(start, end, s.node_text(test.operand), "the condition lost its `not`")
        elif "\n" not in text:
            yield Edit(start, end, f"not ({text})", "the condition is negated")


def drop_condition(s: Splicer, node: ast.AST) -> Iterator[Edit]:
    if isinstance(node, ast.BoolOp) and len(node.values) >= 2:
        start, end = s.span(node)
        word = " and " if isinstance(node.op, ast.And) else " or "
        for i in range(len(node.values)):
            kept = [s.node_text(v) for j, v in enumerate(node.values) if j != i]
            if all("\n" not in k for k in kept):
                text = word.join(kept)
                yield Edit(
                    start,
                    end,
                    f"({text})" if len(kept) > 1 else text,
                    f"the operand `{s.node_text(node.values[i])}` of the condition was dropped",
                )


def swap_arguments(s: Splicer, node: ast.AST) -> Iterator[Edit]:
    if isinstance(node, ast.Call) and len(node.args) >= 2 and not any(isinstance(a, ast.Starred) for a in node.args[:2]):
        first, second = node.args[0], node.args[1]
        a, b = s.node_text(first), s.node_text(second)
        if a != b:
            start, end = s.at(first.lineno, first.col_offset), s.end(second)
            middle = s.text(s.end(first), s.at(second.lineno, second.col_offset))
            yield Edit(start, end, b + middle + a, f"the arguments `{a}` and `{b}` were swapped")


def local_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    args = function.args
    names = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs] if a.arg not in ("self", "cls")]
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id not in names:
            names.append(node.id)
    return names


def wrong_variable(s: Splicer, node: ast.AST, locals_: list[str]) -> Iterator[Edit]:
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in locals_:
        others = [n for n in locals_ if n != node.id]
        if others:
            start, end = s.span(node)
            yield Edit(start, end, others[0], f"`{node.id}` became `{others[0]}`")


def _int_value(node: ast.AST) -> int | None:
    """The value of an integer literal, ``-1`` included (never a bool)."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    return None


def _by_one(value: int) -> list[int]:
    """The integers one away, none of them negative unless the original is (a count or an index stays one)."""
    return [value + delta for delta in (1, -1) if value + delta >= 0 or value < 0]


def change_constant(s: Splicer, node: ast.AST, bounds: set[int]) -> Iterator[Edit]:
    if not isinstance(node, ast.Constant) or (node.end_lineno or node.lineno) != node.lineno or id(node) in bounds:
        return  # a slice bound is slice_off_by_one's
    start, end = s.span(node)
    if node.value is True or node.value is False:
        yield Edit(start, end, str(not node.value), f"the constant {node.value} became {not node.value}")
    elif type(node.value) is int:
        for value in _by_one(node.value):
            yield Edit(start, end, str(value), f"{OFF_BY_ONE}: the constant {node.value} became {value}")


def slice_off_by_one(s: Splicer, node: ast.AST) -> Iterator[Edit]:
    if isinstance(node, ast.Slice):
        for bound in (node.lower, node.upper):
            if bound is None:
                continue
            start, end = s.span(bound)
            text = s.text(start, end)
            if isinstance(bound, ast.Constant) and type(bound.value) is int:
                yield Edit(start, end, str(bound.value + 1), f"the slice bound {text} became {bound.value + 1}")
            elif "\n" not in text:
                atom = isinstance(bound, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))
                operand = text if atom else f"({text})"  # `n if c else m` + 1 would move only m
                for sign in ("+", "-"):
                    yield Edit(start, end, f"{operand} {sign} 1", f"the slice bound `{text}` became `{operand} {sign} 1`")


def wrong_exception(s: Splicer, node: ast.AST) -> Iterator[Edit]:
    target: ast.AST | None = None
    if isinstance(node, ast.Raise) and node.exc is not None:
        target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    elif isinstance(node, ast.ExceptHandler) and node.type is not None:
        target = node.type
    if isinstance(target, ast.Name) and target.id in _EXCEPTIONS:
        start, end = s.span(target)
        yield Edit(start, end, _EXCEPTIONS[target.id], f"`{target.id}` became `{_EXCEPTIONS[target.id]}`")


def _moved_by_one(s: Splicer, node: ast.AST) -> Iterator[tuple[str, str]]:
    """An expression one more and one less (``n + 1`` loses its ``+ 1`` instead), with the edit's description."""
    text = s.node_text(node)
    value = _int_value(node)
    if value is not None:
        yield from ((str(v), f"`{text}` became `{v}`") for v in _by_one(value))
    elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)) and _int_value(node.right) == 1:
        left = s.node_text(node.left)
        if "\n" not in left:
            yield left, f"`{text}` became `{left}`"
    elif "\n" not in text:
        operand = text if isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) else f"({text})"
        yield from ((f"{operand} {sign} 1", f"`{text}` became `{operand} {sign} 1`") for sign in ("+", "-"))


def range_off_by_one(s: Splicer, node: ast.AST) -> Iterator[Edit]:
    """``range(n)`` one longer or shorter or from 1, ``range(1, n)`` <-> ``range(0, n)``, ``enumerate`` counting from 0 or 1."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or any(isinstance(a, ast.Starred) for a in node.args):
        return
    args = node.args
    if node.func.id == "range" and not node.keywords and 1 <= len(args) <= 3:
        stop = args[0] if len(args) == 1 else args[1]
        start, end = s.span(stop)
        for text, description in _moved_by_one(s, stop):
            yield Edit(start, end, text, f"the range's end: {description}")
        if len(args) == 1:
            yield Edit(start, start, "1, ", f"`range({s.node_text(stop)})` became `range(1, {s.node_text(stop)})`")
        elif _int_value(args[0]) in (0, 1):
            first, last = s.span(args[0])
            value = 1 - (_int_value(args[0]) or 0)
            yield Edit(first, last, str(value), f"the range's start {s.node_text(args[0])} became {value}")
    elif node.func.id == "enumerate" and len(args) + len(node.keywords) <= 2 and args:
        counted = args[0]
        starts = [*args[1:], *(k.value for k in node.keywords if k.arg == "start")]
        after = s.end(counted)
        if not starts and not node.keywords:
            yield Edit(after, after, ", 1", "`enumerate` counts from 1 instead of 0")
        elif len(starts) == 1 and _int_value(starts[0]) == 1 and len(args) + len(node.keywords) == 2:
            yield Edit(after, s.end(args[1] if len(args) == 2 else node.keywords[0]), "", "`enumerate` counts from 0 instead of 1")


def edit_string(value: str) -> str | None:
    """A realistic slip in a separator, format or key: a space lost or added, ``%s`` for ``%r``, ``-`` for ``_`` or the
    first letter's case in a key (a word, a name: never a message's text)."""
    if value in _STRING_EDITS:
        return _STRING_EDITS[value]
    for old, new in (("%s", "%r"), ("{}", "{!r}"), ("%d", "%s")):
        if old in value:
            return value.replace(old, new, 1)
    if value != value.strip():
        return value.strip()
    if not re.fullmatch(r"[\w.-]+", value):
        return None  # a message: a slip in its words is no bug a test would see
    for old, new in (("-", "_"), ("_", "-")):
        if old in value:
            return value.replace(old, new, 1)
    if value[:1].isalpha() and value[0].swapcase() != value[0]:
        return value[0].swapcase() + value[1:]
    return None


def _string_roles(node: ast.AST) -> list[ast.AST]:
    """The string constants ``node`` uses as a separator, a format or a key."""
    found: list[ast.AST] = []
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr in ("join", "format"):
            found.append(node.func.value)
        elif node.func.attr in _STRING_ARGUMENT_METHODS:
            found += node.args[: 2 if node.func.attr == "replace" else 1]
    if isinstance(node, ast.Call):
        found += [k.value for k in node.keywords if k.arg in _STRING_KEYWORDS]
        if isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2:
            found.append(node.args[1])
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        found.append(node.left)
    elif isinstance(node, ast.Subscript):
        found.append(node.slice)
    elif isinstance(node, ast.Compare) and all(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops):
        found += [node.left, *node.comparators]
    return [n for n in found if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def string_edit(s: Splicer, node: ast.AST) -> Iterator[Edit]:
    for constant in _string_roles(node):
        assert isinstance(constant, ast.Constant)
        text = s.node_text(constant)
        new = edit_string(constant.value)
        if new is not None and plain_string(text):
            start, end = s.span(constant)
            literal = string_literal(new, text)
            yield Edit(start, end, literal, f"the string {text} became {literal}")


def _splits_a_string(call: ast.Call) -> bool:
    """``text.split(",", 1)``: a literal separator and a maxsplit (without one, split and rsplit give the same list);
    never ``re.split(pattern, text)``, whose module, like a compiled pattern, has no ``rsplit``."""
    if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) and call.func.value.id == "re":
        return False
    separator = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "sep"), None)
    literal = isinstance(separator, ast.Constant) and isinstance(separator.value, str)
    return literal and (len(call.args) >= 2 or any(k.arg == "maxsplit" for k in call.keywords))


def string_method(s: Splicer, node: ast.AST) -> Iterator[Edit]:
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute) or node.func.attr not in _METHOD_SWAPS:
        return
    old = node.func.attr
    if old in ("split", "rsplit") and not _splits_a_string(node):
        return
    end = s.end(node.func)
    start = end - len(old.encode())
    if s.text(start, end) == old:
        yield Edit(start, end, _METHOD_SWAPS[old], f"`.{old}(` became `.{_METHOD_SWAPS[old]}(`")


def first_statement(function: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.stmt | None:
    """The function's first statement after its docstring: every call executes its line."""
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        body = body[1:]
    return body[0] if body else None


def defaults(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[ast.arg, ast.expr]]:
    """Each parameter that has a default, with it."""
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    pairs = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True))
    return pairs + [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None]


def none_guard(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> ast.If | None:
    """A top-level ``if name is None: name = <value>`` in the function's body (one statement, no else)."""
    for statement in function.body:
        if (
            isinstance(statement, ast.If) and not statement.orelse and len(statement.body) == 1
            and isinstance(statement.test, ast.Compare) and isinstance(statement.test.left, ast.Name) and statement.test.left.id == name
            and len(statement.test.ops) == 1 and isinstance(statement.test.ops[0], ast.Is)
            and isinstance(statement.test.comparators[0], ast.Constant) and statement.test.comparators[0].value is None
            and isinstance(statement.body[0], ast.Assign) and len(statement.body[0].targets) == 1
            and isinstance(statement.body[0].targets[0], ast.Name) and statement.body[0].targets[0].id == name
        ):  # fmt: skip
            return statement
    return None


def _plausible(s: Splicer, function: ast.FunctionDef | ast.AsyncFunctionDef, arg: ast.arg) -> str | None:
    """What a ``None`` default could wrongly have been, as the code says: the value its ``is None`` guard assigns,
    edited (a default moved into the signature, wrongly), else the zero of the one plain type its annotation names."""
    guard = none_guard(function, arg.arg)
    if guard is not None:
        value = guard.body[0].value  # type: ignore[attr-defined]
        if isinstance(value, ast.Constant) and isinstance(value.value, bool):
            return str(not value.value)
        if isinstance(value, ast.Constant) and type(value.value) is int:
            return str(value.value + 1)
        if isinstance(value, ast.Constant) and isinstance(value.value, str) and plain_string(s.node_text(value)):
            edited = edit_string(value.value)
            return None if edited is None else string_literal(edited, s.node_text(value))
        return None
    if arg.annotation is None:
        return None
    text = ast.unparse(arg.annotation)
    named = [t for t in _PLAIN_TYPES if re.search(rf"\b{t}\b", text)]
    return _PLAIN_TYPES[named[0]] if len(named) == 1 else None


def wrong_default(s: Splicer, node: ast.AST) -> Iterator[Edit]:
    """A parameter's default changed: a number by one, True <-> False, a string edited, None -> a plausible value."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return
    first = first_statement(node)
    if first is None:
        return
    for arg, default in defaults(node):
        text = s.node_text(default)
        start, end = s.span(default)
        what = f"the default of `{arg.arg}`"
        value = _int_value(default)
        edits: list[tuple[str, str]] = []
        if isinstance(default, ast.Constant) and isinstance(default.value, bool):
            edits.append((str(not default.value), f"{what} {text} became {not default.value}"))
        elif value is not None:
            edits += [(str(v), f"{OFF_BY_ONE}: {what} {text} became {v}") for v in _by_one(value)]
        elif isinstance(default, ast.Constant) and isinstance(default.value, str) and plain_string(text):
            edited = edit_string(default.value)
            if edited is not None:
                literal = string_literal(edited, text)
                edits.append((literal, f"{what} {text} became {literal}"))
        elif isinstance(default, ast.Constant) and default.value is None:
            plausible = _plausible(s, node, arg)
            if plausible is not None:
                edits.append((plausible, f"{what} None became {plausible}"))
        for new, description in edits:
            yield Edit(start, end, new, description, (first.lineno,))
