"""Polling rounds: ``while True: with lock: if ready: take; return`` then ``time.sleep(...)``.

A loop that enters one ``with <lock>:`` block round after round takes the lock many times in one call, which the
review otherwise holds to be several steps. It is one step when every round that does not leave the loop leaves no
trace: it writes nothing (judged by the walk: no write under that acquisition), binds no name, hands no local of
the function to any call, and the loop around it does nothing but sleep. Then the next round runs on exactly the
same inputs as the last, and the rounds that went round again could as well not have run: the call is the round
that left (or, when the loop runs out, the last one), which is one step.

This module finds, by the shape of the code alone, the ``with`` blocks that are such rounds (the walk checks the
writes); ``retry_sites`` gives the places where their locks are taken.
"""

from __future__ import annotations

import ast

from env.race_review.program import key

_LOOPS = (ast.While, ast.For, ast.AsyncFor, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_SLEEPS = frozenset({"time.sleep", "sleep"})
_BINDING = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.With, ast.NamedExpr, ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.Lambda, ast.Delete)


def retry_sites(tree: ast.Module) -> frozenset[str]:
    """The ``key`` of the lock expression of every ``with`` block of ``tree`` that is a polling round, in a loop that
    no other loop of its function runs again (with other inputs, which the rounds would not show)."""
    found: set[str] = set()
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        params = {a.arg for a in function.args.posonlyargs + function.args.args + function.args.kwonlyargs}
        params |= {a.arg for a in (function.args.vararg, function.args.kwarg) if a is not None}
        local_names = params | {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        local_names.discard("self")
        nested = {id(inner) for outer in ast.walk(function) if isinstance(outer, _LOOPS) for inner in ast.walk(outer) if inner is not outer}
        for loop in ast.walk(function):
            if isinstance(loop, ast.While | ast.For) and not loop.orelse and id(loop) not in nested:
                rounds = [s for s in loop.body if isinstance(s, ast.With)]
                if len(rounds) == 1 and _round(loop, rounds[0], local_names):
                    found |= {key(item.context_expr) for item in rounds[0].items}
    return frozenset(found)


def _round(loop: ast.While | ast.For, block: ast.With, local_names: set[str]) -> bool:
    if any(item.optional_vars is not None for item in block.items):
        return False
    if isinstance(loop, ast.For):
        target = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
        if not all(isinstance(n, ast.Name) for n in ast.walk(loop.target) if not isinstance(n, ast.Tuple | ast.List | ast.Store)):
            return False
        if any(isinstance(n, ast.Name) and n.id in target for s in loop.body for n in ast.walk(s)):
            return False  # each round would differ by the loop's own name
    for statement in loop.body:
        if statement is block:
            continue
        if not (isinstance(statement, ast.Pass | ast.Continue) or _sleeps(statement)):
            return False  # between rounds: only waiting
    return _leaves_no_trace(block.body, local_names)


def _sleeps(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) and ast.unparse(statement.value.func) in _SLEEPS and not any(
        isinstance(n, ast.Call) for arg in statement.value.args for n in ast.walk(arg)
    )


def _exits(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], ast.Return | ast.Raise | ast.Break)


def _leaves_no_trace(body: list[ast.stmt], local_names: set[str]) -> bool:
    """Nothing in ``body`` binds a name or hands a local to a call, but in a block that leaves the loop."""
    if _exits(body):
        return True  # this way out leaves the loop: what it does is the round that counts
    for statement in body:
        if isinstance(statement, ast.If):
            if not (_quiet(statement.test, local_names) and _leaves_no_trace(statement.body, local_names) and _leaves_no_trace(statement.orelse, local_names)):
                return False
        elif isinstance(statement, ast.Expr | ast.Assert):
            if not _quiet(statement, local_names):
                return False
        elif not isinstance(statement, ast.Pass):
            return False  # an assignment, a loop, a try, a nested with ...: more than a round that looks
    return True


def _quiet(node: ast.AST, local_names: set[str]) -> bool:
    """No name bound, and no call handed a local of the function (which it could change: a trace of the round)."""
    for inner in ast.walk(node):
        if isinstance(inner, _BINDING):
            return False
        if isinstance(inner, ast.Call) and any(isinstance(n, ast.Name) and n.id in local_names for n in ast.walk(inner)):
            return False
    return True
