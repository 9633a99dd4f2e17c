"""The mechanism of a fix, read from the code it changes: what an imported task's ``mechanism`` is scored against.

    infer_mechanisms(buggy_files, fixed_files)      # e.g. ["off_by_one", "wrong_operator"] for `<` -> `<=`

The buggy and the fixed version of each changed Python file are parsed and compared node by node; each smallest
difference is named as ``env.graders.mechanisms`` names bugs (an operator changed, a constant moved by one, a
statement added by the fix, a condition negated, arguments reordered, another exception type ...). A difference the
rules do not recognise names nothing: a task whose fix reads no known way gets no mechanism rather than a guess.
The mutation operators of ``env.authoring.mutate`` are each read back as their own mechanism (tested).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from env.patches import Files
from env.pyparse import parse

_BOUNDARY_PAIRS = [{ast.Lt, ast.LtE}, {ast.Gt, ast.GtE}]
_Difference = tuple[ast.AST | list[ast.AST] | object, ast.AST | list[ast.AST] | object, tuple[ast.AST, ...], str]


def _same(a: object, b: object) -> bool:
    if isinstance(a, ast.AST) and isinstance(b, ast.AST):
        return ast.dump(a) == ast.dump(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _dump(node: object) -> str:
    return ast.dump(node) if isinstance(node, ast.AST) else repr(node)


def _differences(a: object, b: object, ancestors: tuple[ast.AST, ...] = (), field: str = "") -> Iterator[_Difference]:
    """The smallest differing pairs (buggy, fixed), each with its ancestors (in the buggy tree) and field name."""
    if _same(a, b):
        return
    if isinstance(a, ast.AST) and isinstance(b, ast.AST) and type(a) is type(b) and not _plus_minus_one(a, b):
        for name in a._fields:
            yield from _differences(getattr(a, name, None), getattr(b, name, None), (*ancestors, a), name)
        return
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        if sorted(map(_dump, a)) == sorted(map(_dump, b)):  # the same items reordered: one difference
            yield a, b, ancestors, field
            return
        for x, y in zip(a, b, strict=True):
            yield from _differences(x, y, ancestors, field)
        return
    yield a, b, ancestors, field


def _inserted(shorter: list[ast.AST], longer: list[ast.AST]) -> list[ast.AST]:
    """The items of ``longer`` that are not in ``shorter``, when ``longer`` is ``shorter`` with items added."""
    i, extra = 0, []
    for item in longer:
        if i < len(shorter) and _same(shorter[i], item):
            i += 1
        else:
            extra.append(item)
    return extra if i == len(shorter) else []


def _classify(buggy: object, fixed: object, ancestors: tuple[ast.AST, ...], field: str) -> list[str]:
    names: list[str] = []
    parent = ancestors[-1] if ancestors else None
    counted = _counts(parent)  # an argument of range() or enumerate(): a bound
    in_slice = any(isinstance(a, ast.Slice) for a in ancestors) or counted
    in_exception = _names_exception(ancestors)
    blocks = ("body", "orelse", "finalbody", "handlers")
    if isinstance(buggy, (ast.cmpop, ast.operator, ast.boolop)) and isinstance(fixed, (ast.cmpop, ast.operator, ast.boolop)):
        if {type(buggy), type(fixed)} in _BOUNDARY_PAIRS:
            names.append("off_by_one")
        names.append("wrong_operator")
    elif field == "orelse" and _elif_added(buggy, fixed, parent):
        names += ["missing_statement", "wrong_condition"]  # an `elif` clause the code lacked
    elif isinstance(buggy, list) and isinstance(fixed, list):
        if field in blocks and len(fixed) > len(buggy) and _inserted(buggy, fixed):
            names.append("missing_statement")
            added = _inserted(buggy, fixed)
            if all(isinstance(st, ast.If) for st in added):  # a check the code lacked
                names.append("wrong_condition")
            if any(_unshares(st, ancestors) for st in added):
                names.append("shared_mutable_state")
        elif field in blocks and len(buggy) > len(fixed) and _early_exit(_inserted(fixed, buggy)):
            names.append("missing_statement")  # the fix removes an early exit: the statements after it were skipped
        elif field in blocks and len(buggy) == len(fixed):
            names.append("wrong_order")  # the same statements reordered
        elif field in ("args", "keywords") and counted and len(fixed) != len(buggy):
            names.append("off_by_one")  # range(1, n) for range(n), enumerate(x, 1) for enumerate(x)
        elif field == "values" and len(fixed) > len(buggy) and isinstance(parent, ast.BoolOp):
            names.append("wrong_condition")
        elif field == "args" and len(fixed) == len(buggy):
            names.append("swapped_arguments")
    elif isinstance(buggy, ast.Pass) and isinstance(fixed, ast.stmt):
        names += ["missing_statement", "shared_mutable_state"] if _unshares(fixed, ancestors) else ["missing_statement"]
    elif field in ("id", "attr") and isinstance(buggy, str) and isinstance(fixed, str):
        names.append("wrong_exception" if in_exception else "wrong_variable")
    elif field == "value" and isinstance(parent, ast.Constant):
        if type(buggy) is int and type(fixed) is int and abs(buggy - fixed) == 1:
            names += ["off_by_one"] if in_slice else ["wrong_value", "off_by_one"]
        else:
            names.append("wrong_value")
    elif isinstance(buggy, ast.AST) and isinstance(fixed, ast.AST):
        negated = [(x, y) for x, y in ((buggy, fixed), (fixed, buggy)) if isinstance(x, ast.UnaryOp) and isinstance(x.op, ast.Not)]
        if any(_same(x.operand, y) for x, y in negated):
            names.append("wrong_condition")
        elif in_slice and _plus_minus_one(buggy, fixed):
            names.append("off_by_one")
        elif isinstance(fixed, ast.BoolOp) and any(_same(v, buggy) for v in fixed.values):
            names.append("wrong_condition")
        elif field in ("defaults", "kw_defaults") and _empty_mutable(buggy) and isinstance(fixed, ast.Constant) and fixed.value is None:
            names.append("shared_mutable_state")  # `def f(x=[])`: one list for every call
    if not names and any(isinstance(a, (ast.If, ast.While, ast.IfExp, ast.Assert)) and _within(a, "test", ancestors) for a in ancestors):
        names.append("wrong_condition")
    return names


def _names_exception(ancestors: tuple[ast.AST, ...]) -> bool:
    """Whether the innermost ancestor (a name) is what a ``raise`` raises or an ``except`` catches."""
    if not ancestors or not isinstance(ancestors[-1], ast.Name):
        return False
    name = ancestors[-1]
    for node in reversed(ancestors[:-1]):
        if isinstance(node, ast.Raise):
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            return exc is name
        if isinstance(node, ast.ExceptHandler):
            caught = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
            return any(c is name for c in caught)
    return False


def _early_exit(removed: list[ast.AST]) -> bool:
    """Whether what the fix removes is one ``return`` or ``break`` (that came too early)."""
    return len(removed) == 1 and isinstance(removed[0], (ast.Return, ast.Break))


def _elif_added(buggy: object, fixed: object, parent: ast.AST | None) -> bool:
    """Whether the fix wraps the ``else`` code in a new ``elif`` (the one ``orelse`` item it has, or the whole list)."""
    added = fixed[0] if isinstance(fixed, list) and len(fixed) == 1 else fixed
    before = buggy if isinstance(buggy, list) else getattr(parent, "orelse", None)
    return isinstance(added, ast.If) and isinstance(before, list) and _same(added.orelse, before)


def _counts(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("range", "enumerate")


def _empty_mutable(node: object) -> bool:
    """``[]``, ``{}``, ``set()``, ``list()``, ``dict()``: a new, empty mutable object."""
    if isinstance(node, (ast.List, ast.Set)):
        return not node.elts
    if isinstance(node, ast.Dict):
        return not node.keys
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("list", "dict", "set") and not node.args and not node.keywords


def _unshares(statement: ast.AST, ancestors: tuple[ast.AST, ...]) -> bool:
    """Whether an ``__init__`` statement gives the instance its own ``self.x = []`` where the class has one ``x = []``."""
    if len(ancestors) < 2 or not isinstance(ancestors[-1], ast.FunctionDef) or ancestors[-1].name != "__init__":
        return False
    owner = ancestors[-2]
    if not isinstance(owner, ast.ClassDef) or not isinstance(statement, ast.Assign) or not _empty_mutable(statement.value):
        return False
    target = statement.targets[0]
    if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"):
        return False
    return any(
        isinstance(st, (ast.Assign, ast.AnnAssign)) and _empty_mutable(st.value) and target.attr in
        [t.id for t in (st.targets if isinstance(st, ast.Assign) else [st.target]) if isinstance(t, ast.Name)]
        for st in owner.body
    )  # fmt: skip


def _plus_minus_one(a: ast.AST, b: ast.AST) -> bool:
    """One side is the other plus or minus 1."""
    for x, y in ((a, b), (b, a)):
        if isinstance(x, ast.BinOp) and isinstance(x.op, (ast.Add, ast.Sub)) and isinstance(x.right, ast.Constant) and x.right.value == 1:
            if _same(x.left, y):
                return True
    return False


def _within(node: ast.AST, field: str, ancestors: tuple[ast.AST, ...]) -> bool:
    """Whether the difference lies inside ``node.<field>`` (the next ancestor, or the difference itself, is in it)."""
    index = ancestors.index(node)
    inner = ancestors[index + 1] if index + 1 < len(ancestors) else None
    value = getattr(node, field, None)
    return inner is None or inner is value or (isinstance(value, ast.AST) and any(inner is n for n in ast.walk(value)))


def infer_mechanisms(buggy: Files, fixed: Files) -> list[str]:
    """The mechanisms the change from ``buggy`` to ``fixed`` repairs, most specific first; [] when none is recognised."""
    found: list[str] = []
    for path in sorted(set(buggy) | set(fixed)):
        if not path.endswith(".py") or buggy.get(path) == fixed.get(path) or path not in buggy or path not in fixed:
            continue
        try:
            before, after = parse(buggy[path]), parse(fixed[path])
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for a, b, ancestors, field in _differences(before, after):
            found += [name for name in _classify(a, b, ancestors, field) if name not in found]
    return found
