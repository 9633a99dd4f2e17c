"""The mutation operators that remove, insert or move whole statements: a dropped statement, guard or branch, an early
``return`` or ``break``, a mutable default shared between calls.

Each generator takes a node of a function (the function itself first, see ``env.authoring.mutate``) and yields the
:class:`~env.authoring.splice.Edit` s planting one bug there; each edit is one contiguous span of whole lines.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from env.authoring.mutate_expressions import defaults, first_statement, none_guard
from env.authoring.splice import Edit, Splicer

_DROPPABLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Raise, ast.Delete)
_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
_SIMPLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign)  # what a moved `break` may jump ahead of
GUARD_STATEMENTS = 3  # a guard clause's body: at most this many statements, the last one leaving
EARLY_RETURN_POSITIONS = 3  # an early return goes before one of the body's last this many statements
# Calls that change a list, dict, set or deque in place: a shared default mutated so leaks into the next call.
_MUTATORS = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "pop", "popitem", "remove", "clear", "discard",
                       "sort", "reverse", "appendleft", "extendleft"})  # fmt: skip
_MUTABLE_CALLS = frozenset({"list", "dict", "set"})


def _blocks(node: ast.AST) -> Iterator[list[ast.stmt]]:
    for field in ("body", "orelse", "finalbody"):
        block = getattr(node, field, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            yield block


def _remove(s: Splicer, block: list[ast.stmt], statement: ast.stmt, description: str) -> Iterator[Edit]:
    """Remove a statement's whole lines; the block's only statement becomes ``pass``."""
    span = s.line_block(statement)
    if span is None:
        return
    if len(block) > 1:
        yield Edit(span[0], span[1], "", description)
    else:
        yield Edit(span[0], span[1], f"{s.indent(statement)}pass\n", description)


def drop_statements(s: Splicer, node: ast.AST, returns: bool) -> Iterator[Edit]:
    for block in _blocks(node):
        for statement in block:
            if not isinstance(statement, ast.Return if returns else _DROPPABLE) or (isinstance(statement, ast.Return) and not returns):
                continue
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                continue  # a docstring or a bare constant: dropping it changes nothing
            what = "the return statement" if returns else "the statement"
            yield from _remove(s, block, statement, f"{what} `{s.node_text(statement).splitlines()[0]}` was dropped")


def _starts_with(s: Splicer, node: ast.AST, word: str) -> bool:
    start = s.at(node.lineno, node.col_offset)  # type: ignore[attr-defined]
    return s.data[start : start + len(word) + 1].decode("utf-8", "replace") in (word + " ", word + "(")


def drop_guard(s: Splicer, node: ast.AST) -> Iterator[Edit]:
    """A guard clause gone: the whole ``if ...: return/raise/continue/break`` statement."""
    for block in _blocks(node):
        for statement in block:
            if (
                isinstance(statement, ast.If) and not statement.orelse and len(statement.body) <= GUARD_STATEMENTS
                and isinstance(statement.body[-1], _EXITS) and _starts_with(s, statement, "if")
            ):  # fmt: skip
                yield from _remove(s, block, statement, f"the guard `{s.node_text(statement.test)}` was dropped")


def _else_line(s: Splicer, node: ast.If) -> int | None:
    """The line of an ``if``'s ``else:`` when it stands alone on its line (the branch's statements below it)."""
    for line in range(node.orelse[0].lineno - 1, node.body[-1].end_lineno or node.body[-1].lineno, -1):
        text = s.lines[line - 1].decode("utf-8", "replace").split("#")[0].strip()
        if text:
            return line if text.replace(" ", "") == "else:" else None
    return None


def drop_branch(s: Splicer, node: ast.AST) -> Iterator[Edit]:
    """An ``elif`` clause or an ``else`` branch gone (its lines; the clauses after an ``elif`` move up to its ``if``)."""
    if not isinstance(node, ast.If) or not node.orelse:
        return
    last = node.orelse[-1]
    if not s.rest_is_blank(last.end_lineno or last.lineno, last.end_col_offset or 0):
        return
    first = node.orelse[0]
    if len(node.orelse) == 1 and isinstance(first, ast.If) and _starts_with(s, first, "elif"):
        if s.lines[first.lineno - 1][: first.col_offset].strip():
            return
        if not first.orelse:
            stop = s.line_end(first.end_lineno or first.lineno)
        elif len(first.orelse) == 1 and isinstance(first.orelse[0], ast.If) and _starts_with(s, first.orelse[0], "elif"):
            stop = s.line_start(first.orelse[0].lineno)
        else:
            line = _else_line(s, first)
            if line is None:
                return
            stop = s.line_start(line)
        yield Edit(s.line_start(first.lineno), stop, "", f"the branch `elif {s.node_text(first.test)}:` was dropped")
    else:
        line = _else_line(s, node)
        if line is not None:
            yield Edit(s.line_start(line), s.line_end(last.end_lineno or last.lineno), "", "the `else` branch was dropped", (first.lineno,))


def _binds(statements: list[ast.stmt], name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for st in statements for n in ast.walk(st))


def _is_generator(function: ast.AST) -> bool:
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
    return False


def _returns_value(function: ast.AST) -> bool:
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return) and node.value is not None:
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
    return False


def early_return(s: Splicer, node: ast.AST) -> Iterator[Edit]:
    """A ``return`` of the value being built (the name the function ends returning), or a bare one in a function that
    returns nothing, inserted before one of the body's last statements: the work after it is skipped."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or _is_generator(node) or first_statement(node) is None:
        return
    body = node.body[node.body.index(first_statement(node)) :]  # type: ignore[arg-type]
    final = body[-1]
    if isinstance(final, ast.Return) and isinstance(final.value, ast.Name):
        name = final.value.id
        parameters = {a.arg for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]}
        positions = [i for i in range(1, len(body) - 1) if name in parameters or _binds(body[:i], name)]
        text = f"return {name}"
    elif not _returns_value(node):
        positions, text = list(range(1, len(body))), "return"
    else:
        return
    for i in positions[-EARLY_RETURN_POSITIONS:]:
        before, skipped = body[i - 1], body[i]
        if isinstance(before, _EXITS) or s.line_block(skipped) is None:
            continue
        at = s.line_start(skipped.lineno)
        yield Edit(at, at, f"{s.indent(skipped)}{text}\n", f"`{text}` came before `{s.node_text(skipped).splitlines()[0]}`")


def _is_break(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Break) or (
        isinstance(statement, ast.If) and not statement.orelse and len(statement.body) == 1 and isinstance(statement.body[0], ast.Break)
    )


def early_break(s: Splicer, node: ast.AST) -> Iterator[Edit]:
    """A ``break`` (or an ``if ...: break``) moved above the simple statement before it."""
    for block in _blocks(node):
        for before, moved in zip(block, block[1:], strict=False):
            if (
                not _is_break(moved)
                or not isinstance(before, _SIMPLE)
                or isinstance(before, ast.Expr)
                and isinstance(before.value, ast.Constant)
            ):
                continue
            first, second = s.line_block(before), s.line_block(moved)
            if first is None or second is None or not s.data[first[0] : second[1]].endswith(b"\n"):
                continue
            between = s.text(first[1], second[0])  # blank lines or comments stay where they are
            text = s.text(*second) + between + s.text(*first)
            yield Edit(
                first[0], second[1], text, f"`{s.node_text(moved).splitlines()[0]}` moved above `{s.node_text(before).splitlines()[0]}`"
            )


def _empty_mutable(node: ast.AST | None) -> bool:
    if isinstance(node, (ast.List, ast.Set)):
        return not node.elts
    if isinstance(node, ast.Dict):
        return not node.keys
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _MUTABLE_CALLS
        and not node.args
        and not node.keywords
    )


def _mutates(function: ast.AST, name: str) -> bool:
    """Whether the function changes the object ``name`` holds in place (a call like ``name.append``, an item set)."""
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS:
            if isinstance(node.func.value, ast.Name) and node.func.value.id == name:
                return True
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, (ast.Store, ast.Del))
            and isinstance(node.value, ast.Name)
            and node.value.id == name
        ):
            return True
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            return True
    return False


def shared_mutable_default(s: Splicer, node: ast.AST, owner: ast.ClassDef | None) -> Iterator[Edit]:
    """``def f(x=None): if x is None: x = []`` become ``def f(x=[])`` (where f changes x: the next call sees it), or an
    ``__init__`` no longer giving the instance its own ``self.items = []`` where the class has ``items = []``."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return
    for arg, default in defaults(node):
        guard = none_guard(node, arg.arg) if isinstance(default, ast.Constant) and default.value is None else None
        if guard is None or not _empty_mutable(guard.body[0].value) or not _mutates(node, arg.arg):  # type: ignore[attr-defined]
            continue
        if sum(_binds([st], arg.arg) for st in node.body) != 1:
            continue  # rebound elsewhere (a copy, say): the shared object would not be the one changed
        span = s.line_block(guard)
        if span is None:
            continue
        start, end = s.span(default)
        literal = s.node_text(guard.body[0].value)  # type: ignore[attr-defined]
        yield Edit(start, span[1], literal + s.text(end, span[0]), f"the default of `{arg.arg}` became `{literal}` (one object shared by every call)",
                   (guard.lineno,))  # fmt: skip
    if node.name == "__init__" and owner is not None:
        shared = {t.id for st in owner.body if isinstance(st, (ast.Assign, ast.AnnAssign)) and _empty_mutable(st.value)
                  for t in (st.targets if isinstance(st, ast.Assign) else [st.target]) if isinstance(t, ast.Name)}  # fmt: skip
        for statement in node.body:
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and _empty_mutable(statement.value):
                target = statement.targets[0]
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "self"
                    and target.attr in shared
                ):
                    yield from _remove(
                        s,
                        node.body,
                        statement,
                        f"`{s.node_text(statement)}` was dropped: every instance shares the class's `{target.attr}`",
                    )
