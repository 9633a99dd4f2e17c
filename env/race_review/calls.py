"""Calls: the module's own functions and methods are walked where they are called (with the caller's locks), the
library's callables are taken from their specs, and code the review cannot read may be handed nothing shared."""

from __future__ import annotations

import ast
from dataclasses import replace

from env.race_review.dunders import BUILTIN
from env.race_review.engine import MAX_DEPTH, Args, EngineBase, Frame, Results
from env.race_review.findings import CannotFollow
from env.race_review.library import Spec, spec
from env.race_review.program import FnInfo, key
from env.race_review.values import (
    EXT,
    NONE,
    NOTHING,
    PLAIN,
    SELF,
    Atom,
    Bound,
    ClassRef,
    Func,
    GenObj,
    Imm,
    Library,
    LockCM,
    LockRef,
    NullCM,
    Packed,
    Prop,
    Ref,
    SuperRef,
    Value,
    describe,
    new,
    plain,
    truthy,
    with_scope,
)
from env.race_review.world import Locks, World, join

_NO_LOCKS = Locks()


def _only_yield(body: list[ast.stmt]) -> bool:
    return len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Yield)


def _with_chain(body: list[ast.stmt]) -> list[ast.expr]:
    """The locks of ``with a: with b: yield`` (or ``with a, b: yield``), outermost first; [] for any other shape."""
    found: list[ast.expr] = []
    while len(body) == 1 and isinstance(body[0], ast.With) and all(item.optional_vars is None for item in body[0].items):
        found += [item.context_expr for item in body[0].items]
        body = body[0].body
    return found if found and _only_yield(body) else []


def _lock_call(stmt: ast.stmt, method: str) -> ast.expr | None:
    """``<x>`` when ``stmt`` is ``<x>.<method>()``."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute):
        if stmt.value.func.attr == method and not stmt.value.args:
            return stmt.value.func.value
    return None


class CallsMixin(EngineBase):
    def call(self, func: Value, args: Args, world: World, frame: Frame, node: ast.AST) -> Results:
        out: Results = []
        for atom in sorted(func, key=repr):
            out += self.call_atom(atom, args, world, frame, node)
        return out

    def call_atom(self, atom: Atom, args: Args, world: World, frame: Frame, node: ast.AST) -> Results:
        if isinstance(atom, Func):
            return self.call_function(atom, args, world, frame, node)
        if isinstance(atom, Bound):
            return self.call_bound(atom, args, world, frame, node)
        if isinstance(atom, Library):
            return self.call_library(atom, args, world, frame, node)
        if isinstance(atom, ClassRef):
            return self.instantiate(atom.name, args, world, frame, node)
        if isinstance(atom, Ref):
            if self.class_of(atom) is not None:
                found = self.dunder(atom, "__call__", args, world, frame, node)
                if found is not None:
                    return found
            if self.kind_of(atom) in ("ext", "outside"):
                return self.external(f"`{self.program.text(node)}`", args, world, frame, node, atom)
        if isinstance(atom, Imm):  # None or a number called: a TypeError there, on that path
            self.raised(world, node)
            return []
        raise CannotFollow(node, f"the call `{self.program.text(node)}`: it calls {describe(atom)}")

    # -- the module's own code ---------------------------------------------------------------

    def call_function(self, fn: Atom, args: Args, world: World, frame: Frame, node: ast.AST) -> Results:
        assert isinstance(fn, Func)
        info = self.program.functions[fn.key]
        if fn.kind == "contextmanager":
            return [(world, frozenset({self.lock_manager(fn, info, args, world, frame, node)}))]
        if info.generator:
            if isinstance(info.node, ast.AsyncFunctionDef) or any(isinstance(n, ast.Await) for n in ast.walk(info.node)):
                raise CannotFollow(info.node, f"the coroutine `{info.name}`")
            return [(world, frozenset({GenObj(fn, tuple(sorted(self.bind_args(fn, info, args, node).items())))}))]
        if fn.key in self.stack:
            raise CannotFollow(node, f"the recursive call of `{info.name}`")
        if len(self.stack) >= MAX_DEPTH:
            raise CannotFollow(node, f"calls nested more than {MAX_DEPTH} deep")
        env = self.bind_args(fn, info, args, node)
        inner = Frame(info, dict(fn.closure), parent=fn.parent)
        start = World(world.locks, tuple(sorted(env.items())))
        self.stack.append(fn.key)
        self.calls.append(getattr(node, "lineno", 0))
        self.sinks.append([])
        try:
            flow = self.exec_block(info.body, [start], inner)
        finally:
            raised = self.sinks.pop()
            self.stack.pop()
            self.calls.pop()
        for leaving in raised:
            self.sinks[-1].append(World(leaving.locks, world.env))
        out: Results = [(World(w.locks, world.env), v) for w, v in flow.returns]
        out += [(World(w.locks, world.env), NONE) for w in flow.normal]
        return out

    def run_generator(self, gen: GenObj, world: World, frame: Frame, node: ast.AST) -> Results:
        """A generator's whole body, run where it is iterated: each path with everything it may yield. Run again at
        each place (and each lock state) it is iterated from, so what it touches is judged under every one of them."""
        info = self.program.functions[gen.func.key]
        if gen.func.key in self.stack:
            raise CannotFollow(node, f"the recursive use of the generator `{info.name}`")
        inner = Frame(info, dict(gen.func.closure), parent=gen.func.parent)
        self.stack.append(gen.func.key)
        self.calls.append(getattr(node, "lineno", 0))
        self.sinks.append([])
        self.yields.append(set())
        try:
            flow = self.exec_block(info.body, [World(world.locks, gen.env)], inner)
        finally:
            raised = self.sinks.pop()
            self.stack.pop()
            self.calls.pop()
            yielded = frozenset(self.yields.pop())
        for leaving in raised:
            self.sinks[-1].append(World(leaving.locks, world.env))
        return [(World(w.locks, world.env), yielded) for w in flow.normal + [w for w, _ in flow.returns]]

    def bind_args(self, fn: Func, info: FnInfo, args: Args, node: ast.AST) -> dict[str, Value]:
        env: dict[str, Value] = {}
        positional = list(args.positional)
        defaults = dict(zip(info.params[len(info.params) - len(fn.defaults) :], fn.defaults, strict=True))
        for index, name in enumerate(info.params):
            if index < len(positional):
                env[name] = positional[index]
            elif name in args.keywords:
                env[name] = args.keywords[name]
            else:
                env[name] = (defaults.get(name, NOTHING) | args.rest) if args.rest is not None else defaults.get(name, NOTHING)
                if args.kwrest is not None:
                    env[name] = env[name] | args.kwrest
        extra = positional[len(info.params) :]
        if info.vararg:
            exact = args.rest is None
            env[info.vararg] = frozenset({Packed(tuple(extra) if exact else None, frozenset().union(*extra, args.rest or NOTHING))})
        kwdefaults = dict(fn.kwdefaults)
        for name in info.kwonly:
            env[name] = args.keywords.get(name, kwdefaults.get(name, NOTHING)) | (args.kwrest or NOTHING)
        if info.kwarg:
            names = [k for k in args.keywords if k not in info.params and k not in info.kwonly]
            items = tuple(args.keywords[k] for k in names)
            exact = args.kwrest is None
            env[info.kwarg] = frozenset({Packed(items if exact else None, frozenset().union(*items, args.kwrest or NOTHING), tuple(names))})
        return env

    def lock_manager(self, fn: Func, info: FnInfo, args: Args, world: World, frame: Frame, node: ast.AST) -> Atom:
        """A ``contextlib.contextmanager`` of the shapes ``with <lock>: yield`` or ``<lock>.acquire()`` then
        ``try: yield`` / ``finally: <lock>.release()``: a context manager that holds that lock."""
        body = [s for s in info.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        lock_exprs = _with_chain(body)
        if not lock_exprs and len(body) == 2 and isinstance(body[1], ast.Try) and _only_yield(body[1].body) and not body[1].handlers:
            taken, released = _lock_call(body[0], "acquire"), _lock_call(body[1].finalbody[0], "release") if len(body[1].finalbody) == 1 else None
            if taken is not None and released is not None and ast.dump(taken) == ast.dump(released):
                lock_exprs = [taken]
        if not lock_exprs:
            raise CannotFollow(
                info.node,
                f"the context manager `{info.name}`: of a generator it follows only `with <lock>: yield` (with one or more locks) and "
                f"acquire/try: yield/finally: release",
            )
        env = self.bind_args(fn, info, args, node)
        bound = tuple(sorted(env.items()))
        inner = Frame(info, dict(fn.closure))
        chain: list[LockRef] = []
        for lock_expr in lock_exprs:
            found = self.eval(lock_expr, World(world.locks, bound), inner)
            locks = {a for _, value in found for a in value}
            lock = next(iter(locks)) if len(locks) == 1 else None
            if not isinstance(lock, LockRef):
                raise CannotFollow(lock_expr, f"the context manager `{info.name}`: `{self.program.text(lock_expr)}` is not one lock")
            chain.append(lock)
        return LockCM(chain[0], fn, bound, tuple(chain[1:]))

    def call_bound(self, atom: Bound, args: Args, world: World, frame: Frame, node: ast.AST) -> Results:
        recv = atom.recv
        if atom.func is not None:
            return self.call_function(atom.func, Args([frozenset({recv}), *args.positional], args.keywords, args.rest, args.kwrest), world, frame, node)
        if isinstance(recv, LockRef):
            return self.lock_method(recv, atom.name, args, world, frame, node)
        if isinstance(recv, Ref) and self.kind_of(recv) in ("list", "dict", "set", "deque", "tuple", "frozenset", "copy", "counter", "event"):
            return self.container_call(recv, atom.name, args, world, frame, node)
        if isinstance(recv, Ref) and self.kind_of(recv) == "queue":
            return self.queue_call(recv, atom.name, args, world, frame, node)
        if isinstance(recv, Imm):  # a string's or number's method; "...".format(x) formats x
            out: Results = []
            for after in self.formatted(args.every(), world, frame, node) if atom.name in ("format", "format_map", "join") else [world]:
                for value in args.every():
                    after = self.read(value, after, frame, node)
                out.append((after, PLAIN))
            return out
        if isinstance(recv, Ref) and self.kind_of(recv) in ("object", "exception"):
            raise CannotFollow(node, f"the call `{self.program.text(node)}`")
        if isinstance(recv, Ref) and self.kind_of(recv) in ("ext", "outside"):
            return self.external(f"`{self.program.text(node)}`", args, world, frame, node, recv)
        if isinstance(recv, Library) and atom.name in ("__name__",):
            return [(world, PLAIN)]
        raise CannotFollow(node, f"the call `{self.program.text(node)}`")

    def dunder(self, atom: Atom, name: str, args: Args, world: World, frame: Frame, node: ast.AST) -> Results | None:
        cls = self.class_of(atom)
        if cls is None:
            return None
        found = self.class_attr(cls, name)
        if found is None:
            return None
        out: Results = []
        for method in found[1]:
            if not isinstance(method, Func):
                raise CannotFollow(node, f"`{name}` of `{cls}`, which is not a method")
            out += self.call_function(method, Args([frozenset({atom}), *args.positional], args.keywords), world, frame, node)
        return out

    def instantiate(self, cls: str, args: Args, world: World, frame: Frame, node: ast.AST) -> Results:
        if cls in self.program.records:
            return self.make_record(cls, args, world, frame, node)
        if cls in self.program.exceptions:
            self.exception_args(args, world, frame, node)
            for value in args.every():
                world = self.read(value, world, frame, node)
            self.heap.set_kind(("site", key(node)), "exception")
            return [(world, frozenset({new(("site", key(node)))}))]
        if cls in self.program.constants:
            return [(world, PLAIN)]
        # (another instance of the class under review, made here, is an object like any other: its locks are made
        # by this call, so they guard nothing of this instance's)
        obj = ("site", key(node))
        self.heap.set_kind(obj, f"instance:{cls}")
        atom = new(obj)
        self.building.append(obj)
        try:
            made = self.dunder(atom, "__init__", args, world, frame, node)
        finally:
            self.building.pop()
        if made is None:
            made = [(world, NONE)]
        return [(w, frozenset({atom})) for w, _ in made]

    def exception_args(self, args: Args, world: World, frame: Frame, node: ast.AST) -> None:
        """An exception made with shared state in it: whoever catches it, wherever, can change that state."""
        for value in args.every():
            for atom in self.shared_within(value, world):
                self.report(node, f"{self.who(frame)} puts {self.describe_ref(atom)}, shared state, into an exception: whoever catches it can change the state without the lock", "escape")

    def queue_call(self, queue: Ref, name: str, args: Args, world: World, frame: Frame, node: ast.AST) -> Results:
        """A thread-safe queue's methods need no lock; what is put in it is shared as the queue is."""
        if name in ("put", "put_nowait"):
            given = args.positional[0] if args.positional else args.keywords.get("item", NOTHING)
            scope = self.scope_of(queue, world)
            handed = self.hand_off(queue, given, world, getattr(node, "lineno", 0)) if scope is not None else None
            if handed is not None:
                return [(handed, NONE)]
            self.heap.store(queue.obj, "#shared", NOTHING)  # (a shared queue: what it hands out is shared)
            world = self.publish(given, scope or "instance", world, node)
            self.heap.store_item(queue.obj, given)
            return [(world, NONE)]
        if name in ("get", "get_nowait"):
            blocks = name == "get" and truthy(args.positional[0] if args.positional else args.keywords.get("block", frozenset({Imm(True)}))) is not False
            if blocks:
                self.blocking_wait(world, frame, node, f"waits on the queue `{self.program.text(node)}`")
            scope = self.scope_of(queue, world)
            items = self.heap.items(queue.obj)
            self.raised(world, node)
            return [(world, self.queue_items(queue, scope) if scope else items)]
        if name in ("qsize", "empty", "full", "task_done", "join"):
            return [(world, PLAIN)]
        raise CannotFollow(node, f"`{self.program.text(node)}`: the method `{name}` of a queue")

    def make_record(self, cls: str, args: Args, world: World, frame: Frame, node: ast.AST) -> Results:
        """An instance of a NamedTuple of the module: a tuple whose positions are its fields."""
        fields = self.program.records[cls]
        values = list(args.positional) + [args.keywords.get(name, NOTHING) for name in fields[len(args.positional) :]]
        if all(plain(v) for v in values):
            return [(world, PLAIN)]
        obj = ("site", key(node))
        self.heap.set_kind(obj, "tuple")
        for index, (name, value) in enumerate(zip(fields, values, strict=False)):
            self.heap.store(obj, f"#{index}", value)
            self.heap.store(obj, name, value)
            self.heap.store_item(obj, value)
        self.heap.store(obj, "#len", frozenset({Imm(len(fields))}))
        return [(world, frozenset({new(obj)}))]

    # -- code the review cannot read ------------------------------------------------------------

    def external(self, what: str, args: Args, world: World, frame: Frame, node: ast.AST, callee: Atom | None = None) -> Results:
        """A call into code the review cannot read (a caller's callback, an object from outside): it may keep or
        change whatever it is given, so it may be given nothing shared."""
        # (calling a caller's callable kept in shared state touches none of ours: what it is handed is what counts)
        for value in args.every():
            reached = self.shared_within(value, world) + [a for a in self.reachable(value) if self.hands_over(a, world)]
            if reached:
                raise CannotFollow(node, f"{what}: it hands {describe(reached[0])} (shared state, a lock, or a function or object reaching them) to code the review cannot read")
        self.raised(world, node)
        return [(world, frozenset({new(EXT)}))]

    def run_callables(self, args: Args, worlds: list[World], frame: Frame, node: ast.AST) -> list[World]:
        """Functions of the module handed to the library (a sort key, a default factory) run there, on the items of
        what else it was given."""
        funcs = [a for v in args.every() for a in v if isinstance(a, Func) or (isinstance(a, Bound) and not isinstance(a.recv, Imm | Library))]
        if not funcs:
            return worlds
        items: Value = frozenset({new(EXT)})
        for value in args.every():
            for atom in value:
                if isinstance(atom, Ref) and self.kind_of(atom) in ("list", "dict", "set", "deque", "tuple", "frozenset", "copy", "ext"):
                    items |= self.heap.items(atom.obj) if not self.scope_of(atom, worlds[0]) else with_scope(self.heap.items(atom.obj), "instance", atom.path)
        for fn in funcs:
            worlds = join([w2 for w in worlds for w2, _ in self.call_atom(fn, Args([items]), w, frame, node)]) or worlds
        return worlds

    def hands_over(self, atom: Atom, world: World) -> bool:
        """What code the review cannot read must not be given: the instance, a lock, a function reaching state."""
        return (isinstance(atom, Ref) and atom.obj == SELF) or isinstance(atom, LockRef | GenObj) or (
            isinstance(atom, Func | Bound) and self.reaches_state(atom, world)) or self.class_of(atom) is not None

    def reachable(self, value: Value) -> list[Atom]:
        """``value``'s atoms and what the call's own containers in it hold, deep."""
        found: list[Atom] = []
        todo, seen = list(value), set()
        while todo:
            atom = todo.pop()
            if atom in seen:
                continue
            seen.add(atom)
            found.append(atom)
            if isinstance(atom, Ref) and atom.obj[0] == "site" and self.scope_of(atom, World(_NO_LOCKS)) is None:
                todo += list(self.heap.items(atom.obj))
                for stored in self.heap.fields.get(atom.obj, {}).values():
                    todo += list(stored)
            elif isinstance(atom, Packed):
                todo += [a for v in atom.items or () for a in v] + list(atom.rest)
        return found

    def get_items(self, keys: tuple[Value, ...], of: Value, world: World, frame: Frame, node: ast.AST) -> Results:
        """``operator.itemgetter(*keys)(of)``: ``of[key]``, or a tuple of them for several keys, read where it is called."""
        out: Results = []
        for atom in sorted(of, key=repr):
            paths: list[tuple[World, list[Value]]] = [(world, [])]
            for index in keys:
                paths = [(w2, got + [v]) for w, got in paths for w2, v in self.load_item(atom, index, w, frame, node)]
            out += [(w, got[0] if len(got) == 1 else self.tuple_of(got, node)) for w, got in paths]
        return out

    def tuple_of(self, positions: list[Value], node: ast.AST) -> Value:
        """A tuple the library makes here, holding ``positions``."""
        obj = ("site", self.site(node) + "#tuple")
        self.heap.set_kind(obj, "tuple")
        for index, position in enumerate(positions):
            self.heap.store(obj, f"#{index}", position)
            self.heap.store_item(obj, position)
        self.heap.store(obj, "#len", frozenset({Imm(len(positions))}))
        return frozenset({new(obj)})

    def call_library(self, lib: Library, args: Args, world: World, frame: Frame, node: ast.AST) -> Results:
        if lib.name.startswith("property."):
            return self.property_method(lib, args, world, node)
        if lib.name == "object.__init__":
            return [(world, NONE)]
        found = spec(lib.name)
        if isinstance(found, str):
            raise CannotFollow(node, found)
        return self.library(found, lib, args, world, frame, node)

    def property_method(self, lib: Library, args: Args, world: World, node: ast.AST) -> Results:
        (prop_value,) = lib.bound
        prop = next(iter(prop_value))
        assert isinstance(prop, Prop)
        funcs = [a for a in (args.positional[0] if args.positional else NOTHING) if isinstance(a, Func)]
        if len(funcs) != 1 or lib.name != "property.setter":
            raise CannotFollow(node, f"`{self.program.text(node)}`: of a property it follows the getter and `setter`")
        return [(world, frozenset({Prop(prop.fget, funcs[0])}))]

    def library(self, found: Spec, lib: Library, args: Args, world: World, frame: Frame, node: ast.AST) -> Results:
        kind = found.kind
        if kind == "attribute":
            return self.attribute_call(lib.name, args, world, frame, node)
        if kind in ("lock", "condition", "semaphore"):
            return [(world, self.make_lock(found, args, world, node))]
        if kind in ("event", "local", "outside", "object", "counter"):
            obj = ("site", key(node))
            self.heap.set_kind(obj, kind)
            return [(world, frozenset({new(obj)}))]
        if kind == "super":
            if args.positional or frame.fn is None or frame.fn.owner is None or not frame.fn.params:
                raise CannotFollow(node, "`super(...)` with arguments, or outside a method")
            recv = world.get(frame.fn.params[0]) or NOTHING
            return [(world, frozenset({SuperRef(frame.fn.owner, a) for a in recv}))]
        if kind == "type":
            if len(args.positional) != 1:
                raise CannotFollow(node, "`type` with other than one argument")
            return [(world, frozenset({ClassRef(self.class_of(a) or "") if self.class_of(a) else Library("type.of") for a in args.positional[0]}))]
        if kind == "property":
            getter = [a for a in (args.positional[0] if args.positional else NOTHING) if isinstance(a, Func)]
            setter = [a for a in (args.positional[1] if len(args.positional) > 1 else NOTHING) if isinstance(a, Func)]
            return [(world, frozenset({Prop(getter[0] if getter else None, setter[0] if setter else None)}))]
        if kind in ("staticmethod", "classmethod"):
            funcs = [a for a in (args.positional[0] if args.positional else NOTHING) if isinstance(a, Func)]
            return [(world, frozenset(replace(f, kind="static" if kind == "staticmethod" else "classmethod") for f in funcs))]
        if kind == "wraps":
            if not lib.bound:
                return [(world, frozenset({Library(lib.name, (args.positional[0] if args.positional else NOTHING,))}))]
            return [(world, args.positional[0] if args.positional else NOTHING)]
        if kind == "contextmanager":
            funcs = [a for a in (args.positional[0] if args.positional else NOTHING) if isinstance(a, Func)]
            return [(world, frozenset(replace(f, kind="contextmanager") for f in funcs))]
        if kind == "nullcontext":
            return [(world, frozenset({NullCM(swallows=found.detail == "suppress")}))]
        if kind == "queue":  # a thread-safe queue: no lock needed to use it; what is put in it, every thread may get
            obj = ("site", self.site(node))
            self.heap.set_kind(obj, "queue")
            return [(world, frozenset({new(obj)}))]
        if kind == "cast":
            return [(world, args.positional[1] if len(args.positional) > 1 else NOTHING)]
        return self.library_values(found, lib, args, world, frame, node)

    def attribute_call(self, name: str, args: Args, world: World, frame: Frame, node: ast.AST) -> Results:
        """``getattr(obj, "name")`` and its kin with a name the source spells: the attribute itself; with a computed
        name, code the review cannot follow."""
        names = args.positional[1] if len(args.positional) > 1 else NOTHING
        consts = {a.const for a in names if isinstance(a, Imm)}
        if len(names) != 1 or len(consts) != 1 or not isinstance(next(iter(consts)), str):
            raise CannotFollow(node, f"`{name}` with a name computed at run time: it reaches an attribute the source does not spell")
        attr = str(next(iter(consts)))
        out: Results = []
        for atom in sorted(args.positional[0], key=repr):
            if name == "setattr":
                value = args.positional[2] if len(args.positional) > 2 else NOTHING
                out += [(w, NONE) for w in self.store_attr(atom, attr, value, world, frame, node)]
            elif name == "delattr":
                out += [(w, NONE) for w in self.store_attr(atom, attr, NOTHING, world, frame, node)]
            else:
                found = self.load_attr(atom, attr, world, frame, node)
                out += found if name == "getattr" else [(w, PLAIN) for w, _ in found]
                if name == "getattr" and len(args.positional) > 2:
                    out += [(w, args.positional[2]) for w, _ in found]
        return out

    def library_values(self, found: Spec, lib: Library, args: Args, world: World, frame: Frame, node: ast.AST) -> Results:
        """The library's functions of values: what they read, and what they return."""
        kind = found.kind
        methods = BUILTIN.get(lib.name)
        if methods and args.positional and self.own(args.positional[0]):  # len(self), abs(helper): its own method
            out: Results = []
            for atom in self.own(args.positional[0]):
                out += self.special(atom, methods, Args(args.positional[1:]), world, frame, node) or [(world, PLAIN)]
            return out
        ran = self.run_any(args.every(), world, frame, node)  # sorted(), min(), dict keys ...: their __lt__, __hash__ ...
        ran = self.run_callables(args, ran, frame, node)  # sorted(key=...), max(key=...): the module's functions it calls
        if len(ran) > 1:
            return [r for w in ran for r in self.library_values(found, lib, args, w, frame, node)]
        world = ran[0]
        if kind == "exception":
            self.exception_args(args, world, frame, node)
        for value in args.every():
            world = self.read(value, world, frame, node, write=kind == "mutate")
        if not found.safe:
            self.raised(world, node)
        if kind in ("pure", "exception"):
            return [(world, PLAIN)]
        if kind == "getter":
            return [(world, frozenset({Library(f"{lib.name}()", tuple(args.positional))}))]
        if kind == "item":
            return self.get_items(lib.bound, args.positional[0] if args.positional else NOTHING, world, frame, node)
        if kind == "mutate" and args.positional:  # heappush(heap, item), insort(pool, x): the first keeps the rest
            target, rest = args.positional[0], frozenset().union(NOTHING, *args.positional[1:])
            for atom in target:
                if isinstance(atom, Ref) and self.kind_of(atom) in ("list", "deque", "dict", "set"):
                    world = self.publish(rest, self.scope_of(atom, world), world, node)
                    self.heap.store_item(atom.obj, rest)
            return [(world, NONE)]
        if kind in ("none", "mutate"):
            return [(world, NONE)]
        if kind == "pop":  # heapq.heappop(heap): an item of its first argument
            world, popped = self.iterate(args.positional[0], world, frame, node) if args.positional else (world, NOTHING)
            return [(world, popped)]
        if kind == "alias":  # (iter, enumerate, zip, reversed, typing's identities): what it is given, however given
            given = frozenset().union(NOTHING, *args.every())
            if lib.name in ("enumerate", "zip"):  # iterated later (reading its sources then), it yields tuples
                sources = [v for v in args.positional if v] + [v for v in args.keywords.values() if v] + ([args.rest] if args.rest else [])
                pair = ("site", self.site(node) + "#pair")
                self.heap.set_kind(pair, "tuple")
                positions = [PLAIN] + sources[:1] if lib.name == "enumerate" else sources
                for index, position in enumerate(positions):
                    _, items = self.iterate(position, world, frame, node) if index or lib.name == "zip" else (world, PLAIN)
                    self.heap.store(pair, f"#{index}", items)
                    self.heap.store_item(pair, items)
                self.heap.store(pair, "#len", frozenset({Imm(len(positions))}))
                pairs = ("site", self.site(node) + "#pairs")
                self.heap.set_kind(pairs, "list")
                self.heap.store_item(pairs, frozenset({Ref(pair)}))
                return [(world, given | {new(pairs)})]
            return [(world, given)]
        if kind == "sum":
            world, items = self.iterate(args.positional[0], world, frame, node) if args.positional else (world, NOTHING)
            start = args.positional[1] if len(args.positional) > 1 else args.keywords.get("start", PLAIN)
            ours = [a for a in items | start if isinstance(a, Ref) and a.obj[0] != "ext" and self.kind_of(a) != "ext"]
            if ours:  # sum(lists, []) builds a list of what those lists hold
                raise CannotFollow(node, f"`{self.program.text(node)}`: a sum of containers")
            return [(world, PLAIN | frozenset(a for a in items | start if isinstance(a, Ref)))]
        if kind == "select" and len(args.positional) == 1 and args.rest is None:
            world, items = self.iterate(args.positional[0], world, frame, node)
            return [(world, items | (args.keywords.get("default") or NOTHING))]
        if kind == "select":  # min(a, b), max(*lists): one of what it is given
            return [(world, frozenset().union(NOTHING, *args.positional, args.rest or NOTHING, args.keywords.get("default", NOTHING)))]
        if kind == "next":
            if not args.positional:
                raise CannotFollow(node, "`next()` without an iterator")
            world, items = self.iterate(args.positional[0], world, frame, node)
            return [(world, items | (args.positional[1] if len(args.positional) > 1 else NOTHING))]
        # a copy, or a container of the library's own (deque, defaultdict ...): its items from its first argument
        obj = ("site", f"{key(node)}:{lib.name}")  # (named too: a default factory called here makes another)
        items = NOTHING
        source = args.positional[0] if args.positional else None
        if lib.name == "copy.deepcopy":  # new objects all the way down: nothing in it is anyone else's
            world = self.read(source or NOTHING, world, frame, node)
            made = next((self.kind_of(a) for a in source or NOTHING if self.kind_of(a) in ("list", "dict", "set", "deque", "tuple")), "list")
            self.heap.set_kind(obj, made)
            self.heap.store_item(obj, PLAIN | frozenset({Ref(EXT)}))
            if made == "dict":
                self.heap.store(obj, "#values", PLAIN | frozenset({Ref(EXT)}))
            return [(world, frozenset({new(obj)}))]
        dict_like = found.detail == "dict" or (found.detail == "copy" and any(self.kind_of(a) == "dict" for a in source or NOTHING))
        if dict_like and source is not None and lib.name.endswith("defaultdict"):
            values: Value = NOTHING
            for w, v in self.call(source, Args(), world, frame, node):  # what the default factory makes
                world, values = w, values | v
            keys, more = self.split_mapping(args.positional[1], world) if len(args.positional) > 1 else (NOTHING, NOTHING)
            items, values = keys, values | more | frozenset().union(NOTHING, *args.keywords.values())
        elif dict_like:
            world = self.read(source or NOTHING, world, frame, node)
            items, values = self.split_mapping(source or NOTHING, world)
            values |= frozenset().union(NOTHING, *args.keywords.values())
            items |= PLAIN if args.keywords else NOTHING
        elif source is not None:
            world, items = self.iterate(source, world, frame, node)
        if dict_like:
            self.heap.set_kind(obj, "dict")
            self.heap.store_item(obj, items)
            self.heap.store(obj, "#values", values)
            return [(world, frozenset({new(obj)}))]
        for name, value in args.keywords.items():
            if name not in ("key", "reverse", "maxlen"):  # (sorted's key is called on the items, not one of them)
                items = items | value
        if found.detail in ("tuple", "frozenset") and plain(items):
            return [(world, PLAIN)]
        if found.detail == "copy" and not any(self.kind_of(a) in ("list", "dict", "set", "deque", "tuple", "frozenset", "copy") for a in source or NOTHING):
            raise CannotFollow(node, f"`{self.program.text(node)}`: a copy of something other than a container")
        self.heap.set_kind(obj, found.detail)
        self.heap.store_item(obj, items)
        return [(world, frozenset({new(obj)}))]
