"""Statements: every branch walked, loops until the locks they hold settle, ``with`` and ``finally`` on every way out.

Exceptions leave from any statement that can raise: each such path goes to the innermost ``try``, ``with`` or call
(``EngineBase.sinks``), so a lock taken without ``with`` or ``finally`` is seen still held on the path that raised.
A loop whose body waits on a condition re-tests its condition each time it wakes: what that test read counts for
the atomicity check only where the loop is left, in the epoch that follows it (``while not ready: cond.wait()``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from env.race_review.dunders import BINARY
from env.race_review.engine import MAX_WORLDS, Args, EngineBase, Frame, Results
from env.race_review.findings import CannotFollow
from env.race_review.library import KNOWN_MODULES
from env.race_review.values import (
    MODULE,
    NONE,
    NOTHING,
    PLAIN,
    Atom,
    Imm,
    Library,
    ModuleRef,
    Packed,
    Ref,
    Value,
    new,
    peers,
    plain,
    with_scope,
)
from env.race_review.world import Flow, World, join

MAX_ROUNDS = 24
CATCH_ALL = ("Exception", "BaseException")


def _calls_wait(node: ast.AST, helpers: dict[str, ast.FunctionDef], depth: int = 0) -> bool:
    """``node`` waits on a condition: a wait()/wait_for() call in it, or in a method of the class it calls (not
    counting functions defined in it)."""
    todo: list[ast.AST] = [node]
    while todo:
        each = todo.pop()
        if isinstance(each, ast.FunctionDef | ast.Lambda | ast.ClassDef) and each is not node:
            continue
        if isinstance(each, ast.Call) and isinstance(each.func, ast.Attribute):
            if each.func.attr in ("wait", "wait_for"):
                return True
            helper = helpers.get(each.func.attr) if isinstance(each.func.value, ast.Name) and each.func.value.id == "self" else None
            if helper is not None and depth < 3 and _calls_wait(helper, helpers, depth + 1):
                return True
        todo += list(ast.iter_child_nodes(each))
    return False


def _own(node: ast.AST) -> list[ast.AST]:
    """``node`` and what it holds, not entering functions or loops defined in it."""
    found, todo = [], [node]
    while todo:
        each = todo.pop()
        found.append(each)
        for child in ast.iter_child_nodes(each):
            if not isinstance(child, ast.FunctionDef | ast.Lambda | ast.ClassDef | ast.For | ast.While):
                todo.append(child)
    return found


def _assigns(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) for n in _own(node))


def _exits(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Break | ast.Return | ast.Continue) for n in _own(node))


def _ends_out(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], ast.Break | ast.Return | ast.Raise)


def _retest_shape(loop: ast.While, function: ast.AST | None) -> bool:
    """A round whose values cannot outlive the wait that ends it: the wait is its last statement, and every name the
    round binds is either bound by a plain assignment of the round before any way out of the loop (so the round that
    leaves has just bound it), or read only later in the same round, never in the test and never after the loop."""
    body = loop.body
    first_bound: dict[str, int] = {}
    plain_at: dict[str, int] = {}
    for index, stmt in enumerate(body):
        for n in _own(stmt):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                first_bound.setdefault(n.id, index)
                if isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
                    plain_at.setdefault(n.id, index)
    if not first_bound:
        return True
    first_exit = next((i for i, stmt in enumerate(body) if _exits(stmt)), len(body))
    loads_in_test = {n.id for n in ast.walk(loop.test) if isinstance(n, ast.Name)}
    after = {
        n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        and (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)) > (loop.end_lineno or 0, loop.end_col_offset or 0)
    } if function is not None else set()
    for name, index in first_bound.items():
        read_before = any(
            isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id == name
            for stmt in body[: index + (0 if name in plain_at else 1)] for n in _own(stmt)
        )
        if read_before:
            return False  # it would see the last round's value
        # (only a loop left from its body, after the round binds the name; one left by its test leaves after a wait)
        leaves_by_test = not (isinstance(loop.test, ast.Constant) and loop.test.value)
        fresh_at_exit = not leaves_by_test and name in plain_at and plain_at[name] == index and index < first_exit and name not in loads_in_test
        if not fresh_at_exit and (name in after or name in loads_in_test):
            return False
    return True


def _bare(test: ast.expr) -> ast.expr:
    """A test without its ``not``s."""
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    return test


def _waits_only(body: list[ast.stmt], helpers: dict[str, ast.FunctionDef]) -> bool:
    """``if <test>: <a wait>``: a branch that does nothing but wait (its test decides only whether to wait)."""
    return len(body) == 1 and _calls_wait(body[0], helpers) and not _assigns(body[0])


class StatementsMixin(EngineBase):
    def exec_block(self, body: list[ast.stmt], worlds: list[World], frame: Frame) -> Flow:
        flow = Flow()
        current = join(worlds)
        boundaries: list[World] = []  # every statement may raise before or after it runs (an exception handler's way in)
        for index, stmt in enumerate(body):
            if not current:
                break
            if len(current) > MAX_WORLDS:
                raise CannotFollow(stmt, f"code with more than {MAX_WORLDS} different lock states at one point")
            boundaries += [w.with_locks(w.locks._replace(raised_at=0)) for w in current]
            if isinstance(stmt, ast.If) and not stmt.orelse and _waits_only(stmt.body, self.helpers()) and index + 1 < len(body):
                again = body[index + 1]  # ``if not ready: cond.wait(t)`` then ``if not ready: return/raise``: waited once, tested again
                if isinstance(again, ast.If) and ast.dump(_bare(again.test)) == ast.dump(_bare(stmt.test)) and (_ends_out(again.body) or _ends_out(again.orelse)):
                    self.retested.add(id(stmt))
            handler: Callable[[ast.stmt, World, Frame], Flow] | None = getattr(self, "stmt_" + type(stmt).__name__, None)
            if handler is None:
                raise CannotFollow(stmt, f"the statement `{self.program.text(stmt).splitlines()[0]}`")
            step = Flow()
            for world in current:
                part = handler(stmt, world, frame)
                step.normal += part.normal
                step.absorb(part)
            flow.absorb(step)
            current = join(step.normal)
        boundaries += [w.with_locks(w.locks._replace(raised_at=0)) for w in current]
        self.sinks[-1] += join(boundaries)
        flow.normal = current
        return flow

    def worlds(self, results: Results) -> Flow:
        return Flow(normal=[w for w, _ in results])

    # -- simple statements ------------------------------------------------------------------------

    def stmt_Expr(self, stmt: ast.Expr, world: World, frame: Frame) -> Flow:
        if isinstance(stmt.value, ast.Constant):
            return Flow(normal=[world])
        return self.worlds(self.eval(stmt.value, world, frame))

    def stmt_Pass(self, stmt: ast.Pass, world: World, frame: Frame) -> Flow:
        return Flow(normal=[world])

    def stmt_Nonlocal(self, stmt: ast.Nonlocal, world: World, frame: Frame) -> Flow:
        return Flow(normal=[world])  # (a declaration: FnInfo.nonlocals)

    def stmt_Global(self, stmt: ast.Global, world: World, frame: Frame) -> Flow:
        return Flow(normal=[world])

    def stmt_Break(self, stmt: ast.Break, world: World, frame: Frame) -> Flow:
        return Flow(breaks=[world])

    def stmt_Continue(self, stmt: ast.Continue, world: World, frame: Frame) -> Flow:
        return Flow(continues=[world])

    def stmt_Return(self, stmt: ast.Return, world: World, frame: Frame) -> Flow:
        if stmt.value is None:
            return Flow(returns=[(world, NONE)])
        return Flow(returns=self.eval(stmt.value, world, frame))

    def stmt_Raise(self, stmt: ast.Raise, world: World, frame: Frame) -> Flow:
        parts = [p for p in (stmt.exc, stmt.cause) if p is not None]
        for w, _ in self.eval_many(parts, world, frame):
            self.raised(w, stmt)
        return Flow()

    def stmt_Assert(self, stmt: ast.Assert, world: World, frame: Frame) -> Flow:
        yes, no = self.split(stmt.test, world, frame)
        for w in no:
            for w2, _ in self.eval_many([stmt.msg] if stmt.msg is not None else [], w, frame):
                self.raised(w2, stmt)
        return Flow(normal=yes + [world])  # (under python -O it does not run at all: what its test does may not happen)

    def stmt_Assign(self, stmt: ast.Assign, world: World, frame: Frame) -> Flow:
        target, value = stmt.targets[0], stmt.value
        if len(stmt.targets) == 1 and isinstance(target, ast.Tuple | ast.List) and isinstance(value, ast.Tuple | ast.List) \
                and len(target.elts) == len(value.elts) and not any(isinstance(e, ast.Starred) for e in target.elts + value.elts):
            out: list[World] = []
            for w, values in self.eval_many(list(value.elts), world, frame):
                paths = [w]
                for part, part_value in self.locals_first(target.elts, values, frame):
                    paths = [p2 for p in paths for p2 in self.assign(part, part_value, p, frame)]
                out += paths
            return Flow(normal=out)
        out = []
        for w, v in self.eval(value, world, frame):
            paths = [w]
            for each in stmt.targets:
                paths = [p2 for p in paths for p2 in self.assign(each, v, p, frame)]
            out += paths
        return Flow(normal=out)

    def stmt_AnnAssign(self, stmt: ast.AnnAssign, world: World, frame: Frame) -> Flow:
        if stmt.value is None:
            return Flow(normal=[world])
        return Flow(normal=[p for w, v in self.eval(stmt.value, world, frame) for p in self.assign(stmt.target, v, w, frame)])

    def stmt_AugAssign(self, stmt: ast.AugAssign, world: World, frame: Frame) -> Flow:
        target = stmt.target
        out: list[World] = []
        if isinstance(target, ast.Name):
            for w, old in self.load_name(target.id, world, frame, target):
                for w2, operand in self.eval(stmt.value, w, frame):
                    w3, new = self.combine(old, operand, w2, frame, stmt)
                    out += self.assign(target, new, w3, frame)
            return Flow(normal=out)
        if isinstance(target, ast.Attribute):
            for w, holder in self.eval(target.value, world, frame):
                for atom in sorted(holder, key=repr):
                    for w2, old in self.load_attr(atom, target.attr, w, frame, target):
                        for w3, operand in self.eval(stmt.value, w2, frame):
                            w4, new = self.combine(old, operand, w3, frame, stmt)
                            out += self.store_attr(atom, target.attr, new, w4, frame, target)
            return Flow(normal=out)
        if isinstance(target, ast.Subscript):
            for w, holder in self.eval(target.value, world, frame):
                for w1, index in self.eval(target.slice, w, frame):
                    for atom in sorted(holder, key=repr):
                        for w2, old in self.load_item(atom, index, w1, frame, target):
                            for w3, operand in self.eval(stmt.value, w2, frame):
                                w4, new = self.combine(old, operand, w3, frame, stmt)
                                out += self.store_item(atom, new, w4, frame, target)
            return Flow(normal=out)
        raise CannotFollow(stmt, f"`{self.program.text(stmt)}`")

    def combine(self, old: Value, operand: Value, world: World, frame: Frame, stmt: ast.AugAssign) -> tuple[World, Value]:
        """``old op= operand``: a number's new value, the same container changed in place, or an object's own
        __iadd__ (or __add__ / the operand's __radd__)."""
        if self.own(old) or self.own(operand):
            names = BINARY[type(stmt.op)]
            ran = [r for atom in self.own(old) for r in self.special(atom, ("__i" + names[0][2:], names[0]), Args([operand]), world, frame, stmt) or []]
            ran += [r for atom in self.own(operand) for r in self.special(atom, (names[1],), Args([old]), world, frame, stmt) or []]
            worlds = join([w for w, _ in ran])
            if len(worlds) > 1:
                raise CannotFollow(stmt, f"`{self.program.text(stmt)}`: an operator method that leaves different locks held")
            if worlds:
                world = worlds[0]
            result = frozenset().union(NOTHING, *(v for _, v in ran))
            rest = frozenset(a for a in old if self.class_of(a) is None)
            if not rest:
                return world, result
            old = rest
            world, more = self.combine(old, frozenset(a for a in operand if self.class_of(a) is None) or PLAIN, world, frame, stmt)
            return world, result | more
        if plain(old) and plain(operand):
            if not isinstance(stmt.op, ast.Add | ast.Sub | ast.Mult | ast.BitAnd | ast.BitOr | ast.BitXor):
                self.raised(world, stmt)
            return world, PLAIN
        containers = [a for a in old if isinstance(a, Ref) and self.kind_of(a) in ("list", "set", "dict", "deque")]
        for atom in containers:
            world = self.access(atom, "[]", True, world, frame, stmt, self.name(atom, stmt.target))
            world, items = self.iterate(operand, world, frame, stmt.value)
            world = self.publish(items, self.scope_of(atom, world), world, stmt)
            self.heap.store_item(atom.obj, items)
        world = self.read(operand, world, frame, stmt.value)
        self.raised(world, stmt)
        others = frozenset(a for a in old if a not in containers)
        return world, frozenset(containers) | (PLAIN if others else NOTHING)

    def stmt_Delete(self, stmt: ast.Delete, world: World, frame: Frame) -> Flow:
        paths = [world]
        for target in stmt.targets:
            step: list[World] = []
            for w in paths:
                if isinstance(target, ast.Name):
                    step.append(w.unbind(target.id))
                elif isinstance(target, ast.Attribute):
                    step += [p for w2, v in self.eval(target.value, w, frame) for a in sorted(v, key=repr) for p in self.store_attr(a, target.attr, NOTHING, w2, frame, target)]
                elif isinstance(target, ast.Subscript):
                    step += [p for w2, v in self.eval(target.value, w, frame) for a in sorted(v, key=repr) for p in self.store_item(a, None, w2, frame, target)]
                else:
                    raise CannotFollow(stmt, f"`{self.program.text(stmt)}`")
            paths = step
        return Flow(normal=paths)

    def stmt_FunctionDef(self, stmt: ast.FunctionDef, world: World, frame: Frame) -> Flow:
        out: list[World] = []
        for w, decorators in self.eval_many(list(stmt.decorator_list), world, frame):
            for w2, fn in self.make_function(stmt, w, frame):
                results: Results = [(w2, fn)]
                for decorator in reversed(decorators):
                    results = [r for w3, v in results for r in self.call(decorator, Args([v]), w3, frame, stmt)]
                out += [p for w3, v in results for p in self.assign(ast.Name(id=stmt.name, ctx=ast.Store(), lineno=stmt.lineno, col_offset=stmt.col_offset), v, w3, frame)]
        return Flow(normal=out)

    def stmt_Import(self, stmt: ast.Import, world: World, frame: Frame) -> Flow:
        for alias in stmt.names:
            root = alias.name.split(".")[0]
            if alias.name not in KNOWN_MODULES and root not in KNOWN_MODULES:
                raise CannotFollow(stmt, f"`import {alias.name}`: the module is outside what it knows")
            world = self.bind_name(alias.asname or root, frozenset({ModuleRef(alias.name if alias.asname else root)}), world, frame)
        return Flow(normal=[world])

    def stmt_ImportFrom(self, stmt: ast.ImportFrom, world: World, frame: Frame) -> Flow:
        module = stmt.module or ""
        if stmt.level or (module not in KNOWN_MODULES and module != "__future__"):
            raise CannotFollow(stmt, f"`from {'.' * stmt.level}{module} import ...`: the module is outside what it knows")
        for alias in stmt.names:
            if alias.name == "*":
                raise CannotFollow(stmt, f"`from {module} import *`")
            value: Value = PLAIN if module == "__future__" else frozenset({Library(f"{module}.{alias.name}")})
            world = self.bind_name(alias.asname or alias.name, value, world, frame)
        return Flow(normal=[world])

    def bind_name(self, name: str, value: Value, world: World, frame: Frame) -> World:
        if frame.fn is None and frame.cls_body is None:
            self.heap.store(MODULE, name, value)  # a module or a library callable: nothing to publish
            return world
        return world.bind(name, value)

    # -- assignment targets ------------------------------------------------------------------------

    def assign(self, target: ast.expr, value: Value, world: World, frame: Frame) -> list[World]:
        if isinstance(target, ast.Name):
            return [self.assign_name(target, value, world, frame)]
        if isinstance(target, ast.Attribute):
            return [p for w, v in self.eval(target.value, world, frame) for a in sorted(v, key=repr) for p in self.store_attr(a, target.attr, value, w, frame, target)]
        if isinstance(target, ast.Subscript):
            out: list[World] = []
            for w, holder in self.eval(target.value, world, frame):
                for w2, index in self.eval(target.slice, w, frame):
                    for atom in sorted(holder, key=repr):
                        out += self.store_item(atom, value, w2, frame, target, index)
            return out
        if isinstance(target, ast.Tuple | ast.List):
            positions = self.positions(value, len(target.elts), world) if not any(isinstance(e, ast.Starred) for e in target.elts) else None
            if positions is not None:
                paths = [world]
                for part, part_value in self.locals_first(target.elts, positions, frame):
                    paths = [p2 for p in paths for p2 in self.assign(part, part_value, p, frame)]
                return paths
            world, items = self.iterate(value, world, frame, target)
            paths = [world]
            for part in target.elts:
                inner = part.value if isinstance(part, ast.Starred) else part
                part_value = items if not isinstance(part, ast.Starred) else self.starred_list(items, target)
                paths = [p2 for p in paths for p2 in self.assign(inner, part_value, p, frame)]
            return paths
        raise CannotFollow(target, f"the assignment to `{self.program.text(target)}`")

    def locals_first(self, parts: list[ast.expr], values: list[Value], frame: Frame) -> list[tuple[ast.expr, Value]]:
        """``self._jobs, jobs = [], self._jobs``: the locals bound before the attributes and items, which is the same
        unless a later target reads one of them (then: in order), so a swap-out sees the local holding the old value."""
        pairs = list(zip(parts, values, strict=True))
        names = {part.id for part in parts if isinstance(part, ast.Name)}
        others = [part for part in parts if not isinstance(part, ast.Name)]
        if frame.fn is None or frame.fn.nests or any(isinstance(n, ast.Name) and n.id in names for part in others for n in ast.walk(part)):
            return pairs
        return [pair for pair in pairs if isinstance(pair[0], ast.Name)] + [pair for pair in pairs if not isinstance(pair[0], ast.Name)]

    def positions(self, value: Value, count: int, world: World) -> list[Value] | None:
        """Each position of ``value`` when every tuple it may be is known position by position (``a, b = f()``)."""
        out: list[Value] = [NOTHING] * count
        for atom in value:
            if isinstance(atom, Packed) and atom.items is not None and len(atom.items) == count:
                out = [o | v for o, v in zip(out, atom.items, strict=True)]
            elif isinstance(atom, Ref) and self.kind_of(atom) == "tuple" and self.heap.field(atom.obj, "#len") == frozenset({Imm(count)}):
                scope = self.scope_of(atom, world)
                for index in range(count):
                    found = self.heap.field(atom.obj, f"#{index}")
                    out[index] = out[index] | (with_scope(found, scope, atom.path) if scope else found)
            else:
                return None
        return out

    def starred_list(self, items: Value, node: ast.AST) -> Value:
        obj = ("site", f"starred@{getattr(node, 'lineno', 0)}:{getattr(node, 'col_offset', 0)}")
        self.heap.set_kind(obj, "list")
        self.heap.store_item(obj, items)
        return frozenset({new(obj)})

    def assign_name(self, target: ast.Name, value: Value, world: World, frame: Frame) -> World:
        name = target.id
        if frame.cls_body is not None:
            world = self.publish(value, "global", world, target)  # what a class attribute holds, every instance shares
            self.heap.store(("class", frame.cls_body), name, value)
            return world
        if frame.fn is None or name in frame.fn.globals:
            value = peers(value)
            if self.module_level:
                world = self.publish(value, "global", world, target)  # a module global: every thread's
            else:
                world = self.access(Ref(MODULE), name, True, world, frame, target, f"the module-level `{name}`")
                world = self.publish(value, "global", world, target)
                self.heap.mark_nonfinal(MODULE, name, target.lineno)
            self.heap.store(MODULE, name, value)
            return world
        if name in frame.fn.nonlocals:  # its maker's local: the maker reads whatever it is ever bound to
            maker = self.program.functions.get(frame.parent)
            if maker is None or name not in maker.locals:
                raise CannotFollow(target, f"`nonlocal {name}`: a local of a function further out than the one that made it")
            self.heap.bind_local(frame.parent, name, value)
            return world
        if frame.fn.nests:  # a closure made here reads this local when it runs
            self.heap.bind_local(frame.fn.key, name, value)
        return world.bind(name, value)

    # -- compound statements -----------------------------------------------------------------------

    def stmt_If(self, stmt: ast.If, world: World, frame: Frame) -> Flow:
        if id(stmt) in self.retested and not any(isinstance(n, ast.NamedExpr) for n in ast.walk(stmt.test)):
            # ``if not ready: cond.wait(timeout)``: what the test reads decided only whether to wait; if it waits, the
            # code after reads again; if not, it counts as read here
            self.deferring += 1
            try:
                yes, no = self.split(stmt.test, world, frame)
            finally:
                self.deferring -= 1
            self.retest_if += 1
            try:
                flow = self.exec_block(stmt.body, yes, frame)
            finally:
                self.retest_if -= 1
            flow.normal = flow.normal + [self.commit(w, frame, stmt) for w in no]
            return flow
        yes, no = self.split(stmt.test, world, frame)
        self.conditional += 1
        try:
            flow = self.exec_block(stmt.body, yes, frame)
            other = self.exec_block(stmt.orelse, no, frame) if stmt.orelse else Flow(normal=no)
        finally:
            self.conditional -= 1
        flow.absorb(other)
        flow.normal = flow.normal + other.normal
        return flow

    def stmt_While(self, stmt: ast.While, world: World, frame: Frame) -> Flow:
        """A loop that waits on a condition and tests again each time it wakes (``while not ready: cond.wait()``,
        ``while True: if ready: return ...; cond.wait()``): what a round reads before it waits only decided to wait;
        what counts for the atomicity check is what the round that leaves the loop read and wrote, in the epoch it
        leaves in. That holds when the wait is the round's last statement (no value read before it is used after)."""
        helpers = self.helpers()
        waits = any(_calls_wait(s, helpers) for s in stmt.body)
        retests = waits and _calls_wait(stmt.body[-1], helpers) and not any(_calls_wait(s, helpers) for s in stmt.body[:-1]) \
            and _retest_shape(stmt, frame.fn.node if frame.fn is not None else None)
        self.retesting += 1
        try:
            if not retests:
                return self.loop(stmt, [world], frame, lambda w: self.loop_test(stmt.test, w, frame, waits))
            self.deferring += 1
            try:
                flow = self.loop(stmt, [world], frame, lambda w: self.loop_test(stmt.test, w, frame, True, nested=True))
            finally:
                self.deferring -= 1
        finally:
            self.retesting -= 1
        # the ways out of the loop keep what their round read and wrote: it counts now
        flow.normal = [self.commit(w, frame, stmt) for w in flow.normal]
        flow.returns = [(self.commit(w, frame, stmt), v) for w, v in flow.returns]
        return flow

    def helpers(self) -> dict[str, ast.FunctionDef]:
        """The methods of the class under review, by name (a loop may wait inside one)."""
        found: dict[str, ast.FunctionDef] = {}
        for owner in reversed(self.program.mro(self.cls)) if self.cls in self.program.classes else []:
            found.update({n.name: n for n in self.program.classes[owner].body if isinstance(n, ast.FunctionDef)})
        return found

    def commit(self, world: World, frame: Frame, node: ast.AST) -> World:
        pending = world.locks.pending
        world = world.with_locks(world.locks._replace(pending=frozenset()))
        for touch in sorted(pending, key=lambda t: (t.line, t.what, t.write, sorted(t.sig))):
            world = self.touch(touch, world, frame, node)
        return world

    def loop_test(self, test: ast.expr, world: World, frame: Frame, waits: bool, nested: bool = False) -> tuple[list[World], list[World]]:
        if not waits:
            return self.split(test, world, frame)
        self.deferring += 1
        try:
            yes, no = self.split(test, world, frame)
        finally:
            self.deferring -= 1
        if nested:  # the whole round defers (stmt_While): entering keeps what the test read, for the round
            return yes, no
        dropped = [w.with_locks(w.locks._replace(pending=frozenset())) for w in yes]
        return dropped, [self.commit(w, frame, test) for w in no]

    def stmt_For(self, stmt: ast.For, world: World, frame: Frame) -> Flow:
        flow = Flow()
        for w, source in self.eval(stmt.iter, world, frame):
            def step(head: World, source: Value = source) -> tuple[list[World], list[World]]:
                head2, item = self.iterate(source, head, frame, stmt.iter)
                return self.assign(stmt.target, item, head2, frame), [head]

            part = self.loop(stmt, [w], frame, step)
            flow.normal += part.normal
            flow.absorb(part)
        return flow

    def loop(self, stmt: ast.While | ast.For, start: list[World], frame: Frame, test: Callable[[World], tuple[list[World], list[World]]]) -> Flow:
        """A loop walked until the paths at its head stop changing; then its ``else`` on the paths that left by the test."""
        flow = Flow()
        head = join(start)
        left: list[World] = []
        broke: list[World] = []
        for _ in range(MAX_ROUNDS):
            entering: list[World] = []
            for world in head:
                yes, no = test(world)
                entering += yes
                left += no
            self.loop_depth += 1
            try:
                body = self.exec_block(stmt.body, entering, frame)
            finally:
                self.loop_depth -= 1
            flow.returns += body.returns
            broke += body.breaks
            again = join(head + body.normal + body.continues)
            if set(again) == set(head):
                break
            head = again
        else:
            raise CannotFollow(stmt, "a loop whose locks do not settle (it takes or lets go of a lock a different number of times each round)")
        left = join(left)
        if stmt.orelse:
            rest = self.exec_block(stmt.orelse, left, frame)
            flow.absorb(rest)
            left = rest.normal
        flow.normal = join(left + broke)
        return flow

    def stmt_With(self, stmt: ast.With, world: World, frame: Frame) -> Flow:
        return self.with_items(stmt, list(stmt.items), world, frame)

    def with_items(self, stmt: ast.With, items: list[ast.withitem], world: World, frame: Frame) -> Flow:
        if not items:
            return self.exec_block(stmt.body, [world], frame)
        item, flow = items[0], Flow()
        for w, manager in self.eval(item.context_expr, world, frame):
            for w2, as_value, manager_atom in self.enter(manager, w, frame, item):
                starts = self.assign(item.optional_vars, as_value, w2, frame) if item.optional_vars is not None else [w2]
                self.sinks.append([])
                inner = Flow()
                try:
                    for start in starts:
                        part = self.with_items(stmt, items[1:], start, frame)
                        inner.normal += part.normal
                        inner.absorb(part)
                finally:
                    raised = self.sinks.pop()
                self.leave(manager_atom, inner, raised, flow, frame, stmt)
        return flow

    def leave(self, manager: Atom | None, inner: Flow, raised: list[World], flow: Flow, frame: Frame, stmt: ast.AST) -> None:
        """The context manager's exit on every way out of its block."""
        for w in inner.normal:
            flow.normal += self.exit(manager, w, frame, stmt)
        for w, v in inner.returns:
            flow.returns += [(w2, v) for w2 in self.exit(manager, w, frame, stmt)]
        for w in inner.breaks:
            flow.breaks += self.exit(manager, w, frame, stmt)
        for w in inner.continues:
            flow.continues += self.exit(manager, w, frame, stmt)
        for w in raised:
            implicit = int(not w.locks.raised_at)
            self.quiet += implicit
            try:
                left = self.exits(manager, w, frame, stmt, raising=True)
            finally:
                self.quiet -= implicit
            for after, swallows in left:
                self.sinks[-1].append(after)
                if swallows:  # __exit__ returned something true: the code after the block runs
                    flow.normal.append(after)

    def stmt_Try(self, stmt: ast.Try, world: World, frame: Frame) -> Flow:
        self.sinks.append([])
        try:
            body = self.exec_block(stmt.body, [world], frame)
        finally:
            raised = self.sinks.pop()
        outcome = Flow(returns=list(body.returns), breaks=list(body.breaks), continues=list(body.continues))
        leaving: list[World] = []
        self.sinks.append([])
        try:
            if stmt.orelse:
                rest = self.exec_block(stmt.orelse, body.normal, frame)
                outcome.absorb(rest)
                outcome.normal = rest.normal
            else:
                outcome.normal = body.normal
        finally:
            leaving += self.sinks.pop()
        caught_all = False
        arriving = join(raised)
        for handler in stmt.handlers if arriving else []:
            # the exception caught: an object from outside (one made here with shared state in it was reported then)
            starts = arriving if handler.name is None else [w.bind(handler.name, frozenset({new(("ext",))})) for w in arriving]
            self.sinks.append([])
            try:
                handled = self.exec_block(handler.body, starts, frame)
            finally:
                leaving += self.sinks.pop()
            outcome.normal += handled.normal
            outcome.absorb(handled)
            names = [handler.type] if not isinstance(handler.type, ast.Tuple) else list(handler.type.elts)
            caught_all = caught_all or handler.type is None or any(isinstance(n, ast.Name) and n.id in CATCH_ALL for n in names)
        if not caught_all:
            leaving += raised
        if not stmt.finalbody:
            self.sinks[-1] += leaving
            return outcome
        return self.finally_(stmt.finalbody, outcome, leaving, frame)

    def finally_(self, final: list[ast.stmt], outcome: Flow, leaving: list[World], frame: Frame) -> Flow:
        """``finally`` on every way out, each way going on as it came (unless the finally block itself leaves)."""
        flow = Flow()

        def run(worlds: list[World]) -> list[World]:
            part = self.exec_block(final, worlds, frame)
            flow.absorb(part)
            return part.normal

        flow.normal = run(outcome.normal) if outcome.normal else []
        for w, v in outcome.returns:
            flow.returns += [(w2, v) for w2 in run([w])]
        flow.breaks += run(outcome.breaks) if outcome.breaks else []
        flow.continues += run(outcome.continues) if outcome.continues else []
        explicit = [w for w in leaving if w.locks.raised_at]
        implicit = [w for w in leaving if not w.locks.raised_at]
        if explicit:
            self.sinks[-1] += run(join(explicit))
        if implicit:
            self.quiet += 1
            try:
                self.sinks[-1] += run(join(implicit))
            finally:
                self.quiet -= 1
        return flow

    def stmt_ClassDef(self, stmt: ast.ClassDef, world: World, frame: Frame) -> Flow:
        raise CannotFollow(stmt, f"the class `{stmt.name}` defined inside a function")
