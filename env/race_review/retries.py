"""Polling rounds: ``while True: with lock: if ready: take; return`` then ``time.sleep(...)``, or a retry of a method
that takes the lock: ``for _ in range(3): if self.try_withdraw(amount): return True`` then ``time.sleep(...)``.

A loop that enters one ``with <lock>:`` block round after round takes the lock many times in one call, which the
review otherwise holds to be several steps. It is one step when every round that does not leave the loop leaves no
trace: it writes nothing (judged by the walk: no write under that acquisition), binds no name, hands no local of
the function to any call, and the loop around it does nothing but sleep. Then the next round runs on exactly the
same inputs as the last, and the rounds that went round again could as well not have run: the call is the round
that left (or, when the loop runs out, the last one), which is one step.

A retried method is such a round when its one ``with`` block returns a true constant when it succeeds and a false
constant (or nothing) when it fails, leaving no trace on the way (the loop is left on success; the arguments are the
same each round, since the loop binds no name).

This module finds, by the shape of the code alone, the ``with`` blocks that are such rounds (the walk checks the
writes); ``retry_sites`` gives the places where their locks are taken (a retried method's: as reached by that call).
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
    methods: dict[str, list[ast.FunctionDef]] = {}
    for cls in tree.body:
        if isinstance(cls, ast.ClassDef):
            for method in cls.body:
                if isinstance(method, ast.FunctionDef):
                    methods.setdefault(method.name, []).append(method)
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
                rounds = [s for s in loop.body if isinstance(s, ast.With | ast.If)]
                if len(rounds) != 1 or not _between_rounds(loop, rounds[0]):
                    continue
                if isinstance(rounds[0], ast.With) and _leaves_no_trace(rounds[0].body, local_names):
                    found |= {key(item.context_expr) for item in rounds[0].items}
                elif isinstance(rounds[0], ast.If):
                    found |= _helper_round(rounds[0], methods)
    return frozenset(found)


def _helper_round(statement: ast.If, methods: dict[str, list[ast.FunctionDef]]) -> set[str]:
    """``if self.try_take(x): return ...``: a round that is a call of a method of the module whose one ``with`` block
    either succeeds (returns a true constant: the loop is left) or fails leaving no trace (returns a false constant,
    or nothing). Where that block takes its lock, reached through this call."""
    call = statement.test
    if statement.orelse or not _exits(statement.body) or not isinstance(call, ast.Call):
        return set()
    if not (isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) and call.func.value.id == "self"):
        return set()
    if any(isinstance(n, ast.Call | ast.NamedExpr | ast.Lambda) for arg in [*call.args, *call.keywords] for n in ast.walk(arg)):
        return set()
    found = methods.get(call.func.attr, [])
    if len(found) != 1:
        return set()  # (none, or several classes define it: which one runs is the instance's)
    helper = found[0]
    body = [s for s in helper.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.With) or any(item.optional_vars is not None for item in body[0].items):
        return set()
    params = {a.arg for a in helper.args.posonlyargs + helper.args.args + helper.args.kwonlyargs} - {"self"}
    names = params | {n.id for n in ast.walk(helper) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    if helper.args.vararg or helper.args.kwarg or not _fails_without_trace(body[0].body, names):
        return set()
    return {f"{key(item.context_expr)}<{call.lineno}" for item in body[0].items}


def _fails_without_trace(body: list[ast.stmt], local_names: set[str]) -> bool:
    """A retried method's block: every way through it returns a true constant (success: anything goes), raises, or
    returns a false constant or nothing having bound no name and handed no local to a call on the way."""
    ok, falls = _ways(body, True, local_names, polling=False)
    return ok and falls is not False  # (falling off the end returns None: a failure, which must be quiet)


def _leaves_no_trace(body: list[ast.stmt], local_names: set[str]) -> bool:
    """A polling round: every way that goes round again (``continue``, or the end of the block) is quiet; a way
    that leaves the loop (``return``, ``raise``, ``break``) is the round that counts."""
    ok, falls = _ways(body, True, local_names, polling=True)
    return ok and falls is not False


def _ways(body: list[ast.stmt], quiet: bool, local_names: set[str], polling: bool) -> tuple[bool, bool | None]:
    """Whether every way out of ``body`` that fails (goes round again) is quiet, and how quiet the way that falls
    through its end is (None: none does)."""
    for statement in body:
        if isinstance(statement, ast.Return) and not polling:
            value = statement.value
            if value is not None and not isinstance(value, ast.Constant):
                return False, None  # what it returns is what it read: the round would leave that behind
            return (True if value is not None and value.value else quiet), None
        if isinstance(statement, ast.Return | ast.Raise | ast.Break):
            return True, None
        if isinstance(statement, ast.Continue):
            return quiet, None
        if isinstance(statement, ast.If):
            quiet = quiet and _quiet(statement.test, local_names)
            ok_yes, yes = _ways(statement.body, quiet, local_names, polling)
            ok_no, no = _ways(statement.orelse, quiet, local_names, polling)
            if not (ok_yes and ok_no):
                return False, None
            if yes is None and no is None:
                return True, None
            quiet = bool(yes is not False and no is not False)
        elif isinstance(statement, ast.Expr | ast.Assert):
            quiet = quiet and _quiet(statement, local_names)
        elif isinstance(statement, ast.For | ast.While | ast.Try | ast.With):
            return False, None  # (a loop, a try, a nested block: more than a round that looks)
        elif not isinstance(statement, ast.Pass):
            quiet = False  # an assignment ...: only a way out of the loop may follow
    return True, quiet


def _between_rounds(loop: ast.While | ast.For, block: ast.With | ast.If) -> bool:
    """The loop does nothing but the round and wait, and its own name (if any) is read nowhere in it."""
    if isinstance(block, ast.With) and any(item.optional_vars is not None for item in block.items):
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
    return True


def _sleeps(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) and ast.unparse(statement.value.func) in _SLEEPS and not any(
        isinstance(n, ast.Call) for arg in statement.value.args for n in ast.walk(arg)
    )


def _exits(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], ast.Return | ast.Raise | ast.Break)


def _quiet(node: ast.AST, local_names: set[str]) -> bool:
    """No name bound, and no call handed a local of the function (which it could change: a trace of the round)."""
    for inner in ast.walk(node):
        if isinstance(inner, _BINDING):
            return False
        if isinstance(inner, ast.Call) and any(isinstance(n, ast.Name) and n.id in local_names for n in ast.walk(inner)):
            return False
    return True


def write_only_fields(tree: ast.Module) -> frozenset[str]:
    """Attributes the module only ever adds to or sets (``self.served += 1``), read nowhere: not by name, not by
    ``getattr``, not through ``vars``/``__dict__``. Their updates are never seen half done, so touching them under a
    second acquisition makes no call two steps."""
    stored: set[str] = set()
    read: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            (read if isinstance(node.ctx, ast.Load) else stored).add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            read.add(node.value)  # (getattr(self, "served"), a __slots__ entry ...: named somewhere)
        elif isinstance(node, ast.Name) and node.id in ("vars", "getattr", "__dict__"):
            return frozenset()
    plain = {node.target.attr for node in ast.walk(tree) if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Attribute)}
    plain |= {t.attr for node in ast.walk(tree) if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Attribute)}
    return frozenset((stored & plain) - read)
