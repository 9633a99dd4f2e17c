"""Edits a debugger tries first on a class shared by threads: a whole method under the class's lock (any inner
acquisition of that lock folded into it), the same with the lock made re-entrant (a method that calls another locked
one), two nested locks taken in the other order, and a condition's ``if ...: wait()`` made a ``while`` loop.

    for m in lock_edits(source): m.function, m.description, m.source     # env.agents.mutations.Mutation, kind 7

Each edit rewrites one method (``ast.unparse``: its comments go) and leaves the rest of the file as it was. No gold
knowledge: the edits come from the module's own text.
"""

from __future__ import annotations

import ast
import copy

from env.agents.mutations import Mutation
from env.pyparse import parse

LOCK_KIND = 7
_LOCKS = {"Lock", "RLock"}


def _locks(cls: ast.ClassDef) -> list[str]:
    """Attributes ``__init__`` sets to ``threading.Lock()`` or ``RLock()``, in order."""
    found: list[str] = []
    for node in ast.walk(cls):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            func = node.value.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            for target in node.targets:
                if name in _LOCKS and isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                    found.append(target.attr)
    return found


def _is_lock(item: ast.withitem, lock: str) -> bool:
    expr = item.context_expr
    return isinstance(expr, ast.Attribute) and expr.attr == lock and isinstance(expr.value, ast.Name) and expr.value.id == "self"


class _Unwrap(ast.NodeTransformer):
    """Every ``with self.<lock>:`` inside the method becomes its body (the method holds the lock already)."""

    def __init__(self, lock: str):
        self.lock = lock

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
                flat: list[ast.stmt] = []
                for stmt in stmts:
                    if isinstance(stmt, ast.With) and len(stmt.items) == 1 and _is_lock(stmt.items[0], self.lock):
                        flat.extend(stmt.body)
                    else:
                        flat.append(stmt)
                setattr(node, field, flat)
        return node


def _locked(method: ast.FunctionDef, lock: str) -> ast.FunctionDef:
    new = copy.deepcopy(method)
    body = _Unwrap(lock).visit(ast.Module(body=new.body, type_ignores=[])).body
    docstring = body[:1] if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str) else []
    lock_expr = ast.Attribute(value=ast.Name(id="self", ctx=ast.Load()), attr=lock, ctx=ast.Load())
    new.body = [*docstring, ast.With(items=[ast.withitem(context_expr=lock_expr)], body=body[len(docstring):] or [ast.Pass()])]
    return new


def _swapped(method: ast.FunctionDef) -> ast.FunctionDef | None:
    """The method with its first two nested ``with`` statements taken in the other order (None: it has none)."""
    new = copy.deepcopy(method)
    for node in ast.walk(new):
        if isinstance(node, ast.With) and len(node.items) == 1 and len(node.body) == 1 and isinstance(node.body[0], ast.With):
            inner = node.body[0]
            if len(inner.items) == 1:
                node.items, inner.items = inner.items, node.items
                return new
    return None


def _loops(method: ast.FunctionDef) -> ast.FunctionDef | None:
    """The method with each ``if <test>: ... .wait()`` made ``while <test>:`` (None: it has none)."""
    new = copy.deepcopy(method)
    changed = False

    class Loop(ast.NodeTransformer):
        def visit_If(self, node: ast.If) -> ast.AST:
            nonlocal changed
            self.generic_visit(node)
            waits = [c for c in ast.walk(ast.Module(body=node.body, type_ignores=[])) if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "wait"]
            if waits and not node.orelse:
                changed = True
                return ast.copy_location(ast.While(test=node.test, body=node.body, orelse=[]), node)
            return node

    Loop().visit(new)
    return new if changed else None


def _splice(source: str, method: ast.FunctionDef, new: ast.FunctionDef) -> str:
    lines = source.splitlines(keepends=True)
    first = (method.decorator_list[0].lineno if method.decorator_list else method.lineno) - 1
    indent = lines[method.lineno - 1][: len(lines[method.lineno - 1]) - len(lines[method.lineno - 1].lstrip())]
    text = "".join(indent + line + "\n" if line else "\n" for line in ast.unparse(ast.fix_missing_locations(new)).splitlines())
    return "".join(lines[:first]) + text + "".join(lines[method.end_lineno or method.lineno :])


def lock_edits(source: str) -> list[Mutation]:
    """The edits, method by method in file order: locked whole, then locked whole with re-entrant locks, then nested
    locks swapped, then waits in a loop."""
    try:
        tree = parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    plain: list[Mutation] = []
    reentrant: list[Mutation] = []
    other: list[Mutation] = []
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        locks = _locks(cls)
        methods = [m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name != "__init__"]
        for method in methods:
            locked = _locked(method, locks[0]) if locks else None
            if locked is not None and ast.dump(locked) != ast.dump(method):  # a method held whole already: nothing to try
                edited = _splice(source, method, locked)
                if edited != source:
                    what = f"{method.name} must hold self.{locks[0]} for its whole body: its steps are not atomic"
                    plain.append(Mutation(method.lineno, method.name, what, edited, LOCK_KIND))
                    rlock = edited.replace("threading.Lock()", "threading.RLock()")
                    if rlock != edited:
                        reentrant.append(Mutation(method.lineno, method.name, what + " (with a re-entrant lock, as it calls locked methods)", rlock, LOCK_KIND))
            for change, what in ((_swapped(method), "takes its two locks in the opposite order to the other methods: a deadlock"),
                                 (_loops(method), "waits once instead of re-checking its condition in a loop: a missed signal")):
                if change is not None:
                    other.append(Mutation(method.lineno, method.name, f"{method.name} {what}", _splice(source, method, change), LOCK_KIND))
    return plain + reentrant + other
