"""The review of one class: the module's top level run once, then the instance constructed and every method a caller
can reach walked from its entry, until what the objects hold settles; then one last walk that judges."""

from __future__ import annotations

import ast

from env.race_review.calls import CallsMixin
from env.race_review.dunders import DundersMixin
from env.race_review.engine import Args, Frame
from env.race_review.expressions import ExpressionsMixin
from env.race_review.findings import CannotFollow, Finding
from env.race_review.locks import LocksMixin
from env.race_review.matching import MatchingMixin
from env.race_review.objects import ObjectsMixin
from env.race_review.ownership import OwnershipMixin
from env.race_review.program import Program
from env.race_review.statements import StatementsMixin
from env.race_review.values import MODULE, NOTHING, SELF, Bound, ClassRef, Func, GenObj, LockRef, Prop, Ref, Value, describe, new
from env.race_review.world import Locks, World, join

MAX_PASSES = 12
FIRST = ("lock", "deadlock", "cannot-follow", "leak", "escape", "atomicity", "race")
NOT_ENTRIES = frozenset({"__init__", "__new__", "__init_subclass__", "__class_getitem__", "__enter__", "__exit__", "__set_name__"})


def _main_guard(node: ast.stmt) -> bool:
    """``if __name__ == "__main__":`` (never runs when the module is imported) or ``if TYPE_CHECKING:``."""
    if not isinstance(node, ast.If):
        return False
    test = node.test
    if isinstance(test, ast.Name | ast.Attribute) and ast.unparse(test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
        return True
    return (
        isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
        and {ast.unparse(test.left), ast.unparse(test.comparators[0])} in ({"__name__", "'__main__'"}, {"__name__", '"__main__"'})
    )


class Review(ExpressionsMixin, StatementsMixin, MatchingMixin, CallsMixin, DundersMixin, ObjectsMixin, OwnershipMixin, LocksMixin):
    def run(self) -> Finding | None:
        try:
            return self.judge()
        except CannotFollow as exc:
            return exc.finding()

    def judge(self) -> Finding | None:
        self.run_module()
        if self.cls not in self.program.classes:
            return Finding(0, f"there is no class `{self.cls}` at the module's top level", "cannot-follow")
        if self.cls in self.program.exceptions:
            return Finding(self.program.classes[self.cls].lineno, f"`{self.cls}` is an exception class", "cannot-follow")
        self.program.mro(self.cls)
        # Each walk judges as it goes; a walk during which nothing the objects hold grew saw the whole heap from its
        # start, so its findings are the verdict (the first walk only fills the heap, the second usually confirms it).
        self.reporting = True
        for _ in range(MAX_PASSES):
            self.heap.grew = False
            self.findings, self.locksets, self.order = [], {}, {}
            self.walk()
            if not self.heap.grew:
                break
        else:
            raise CannotFollow(None, "the module: what its objects hold keeps growing")
        self.check_locksets()
        self.check_order()
        # what the lock's shape does first (a lock that may not be held, rebound, taken in a circle ...): the races it
        # leads to follow from it; then by line
        return min(self.findings, key=lambda f: (FIRST.index(f.kind), f.line, f.text)) if self.findings else None

    # -- the module's top level ------------------------------------------------------------------

    def run_module(self) -> None:
        self.module_level = True
        frame = Frame(None)
        world = World(Locks())
        for stmt in self.program.tree.body:
            if _main_guard(stmt):  # its body never runs on import; its else always does
                assert isinstance(stmt, ast.If)
                if not stmt.orelse:
                    continue
                stmt = ast.If(test=ast.Constant(False), body=[ast.Pass()], orelse=stmt.orelse, lineno=stmt.lineno, col_offset=stmt.col_offset)
            if isinstance(stmt, ast.ClassDef):
                self.run_class(stmt, world)
                continue
            flow = self.exec_block([stmt], [world], frame)
            if not flow.normal:
                raise CannotFollow(stmt, "module code that does not run to its end")
            world = join(flow.normal)[0]
        self.module_level = False

    def run_class(self, node: ast.ClassDef, world: World) -> None:
        self.heap.store(MODULE, node.name, frozenset({ClassRef(node.name)}))
        if node.name in self.program.exceptions or node.name in self.program.records or node.name in self.program.constants:
            return
        frame = Frame(None, cls_body=node.name)
        self.heap.store(("class", node.name), "__module__", NOTHING)
        for stmt in node.body:
            if not isinstance(stmt, ast.FunctionDef | ast.Assign | ast.AnnAssign | ast.Expr | ast.Pass):
                raise CannotFollow(stmt, f"the statement `{self.program.text(stmt).splitlines()[0]}` in the body of `{node.name}`")
            if isinstance(stmt, ast.Expr) and not isinstance(stmt.value, ast.Constant):
                raise CannotFollow(stmt, f"code run in the body of `{node.name}`")
            self.exec_block([stmt], [world], frame)
            if isinstance(stmt, ast.FunctionDef) and stmt.name in ("__getattr__", "__getattribute__", "__setattr__", "__delattr__", "__new__", "__init_subclass__"):
                raise CannotFollow(stmt, f"`{stmt.name}`, which changes how the class's attributes or instances behave")

    # -- one walk: the instance constructed, then every entry ----------------------------------

    def walk(self) -> None:
        self.construct()
        for name, value in self.entries():
            self.entry = name
            for atom in sorted(value, key=repr):
                self.walk_entry(name, atom)
        if self.pair("__enter__") and self.pair("__exit__"):
            self.entry = "with"
            self.walk_with()
        self.walk_module_functions()
        self.entry = ""

    def construct(self) -> None:
        """The instance's construction (private until it ends: only what it shares with other instances is judged,
        and that it leaves no lock held)."""
        self.building, self.in_self_init, self.self_published = [SELF], True, 0
        self.entry = "__init__"
        try:
            found = self.class_attr(self.cls, "__init__")
            for atom in found[1] if found else ():
                if isinstance(atom, Func):
                    self.sinks = [[]]
                    node = self.program.functions[atom.key].node
                    ran = self.call_function(atom, self.entry_args(atom, Ref(SELF)), World(Locks()), Frame(None), node)
                    self.check_exits([(w, NOTHING) for w, _ in ran], self.sinks[0], node)
        finally:
            self.building, self.in_self_init = [], False
        for value in list(self.heap.fields.get(SELF, {}).values()):  # constructed: what it holds is shared from now on
            self.publish(value, "instance", World(Locks()), self.program.classes[self.cls])

    def pair(self, name: str) -> bool:
        found = self.class_attr(self.cls, name)
        return found is not None and any(isinstance(a, Func) for a in found[1])

    def entries(self) -> list[tuple[str, Value]]:
        """Every name a caller can reach: public methods, dunder methods and properties, nearest class first."""
        seen: dict[str, Value] = {}
        for owner in self.program.mro(self.cls):
            for name, value in self.heap.fields.get(("class", owner), {}).items():
                private = name.startswith("_") and not (name.startswith("__") and name.endswith("__"))
                if name in seen or private or name in NOT_ENTRIES:
                    continue
                # methods and properties; and whatever else a caller can call: a bound method kept on the class, an
                # instance of one of the module's classes (its __call__)
                seen[name] = frozenset(a for a in value if isinstance(a, Func | Prop | Bound) or (isinstance(a, Ref) and self.class_of(a)))
        return [(name, value) for name, value in seen.items() if value]

    def entry_args(self, fn: Func, first: object | None) -> Args:
        """A caller's arguments: anything at all (a parameter's default is one thing a caller may pass, not the only one)."""
        info = self.program.functions[fn.key]
        names = info.params[1:] if first is not None else info.params
        defaults = dict(zip(info.params[len(info.params) - len(fn.defaults) :], fn.defaults, strict=True))
        values: list[Value] = [frozenset({first})] if first is not None else []  # type: ignore[arg-type]
        values += [frozenset({new(("param", fn.key, n))}) | defaults.get(n, NOTHING) for n in names]
        keywords = {n: frozenset({new(("param", fn.key, n))}) | dict(fn.kwdefaults).get(n, NOTHING) for n in info.kwonly}
        return Args(values, keywords)

    def walk_entry(self, name: str, atom: object) -> None:
        if isinstance(atom, Bound | Ref):
            self.sinks = [[]]
            node = self.program.classes[self.cls]
            args = Args([frozenset({new(("param", name, "args"))})], rest=frozenset({new(("param", name, "rest"))}))
            ran = self.call(frozenset({atom}), args, World(Locks()), Frame(None), node)
            self.check_exits(ran, self.sinks[0], node)
            return
        if isinstance(atom, Prop):
            for fn, role in ((atom.fget, "getter"), (atom.fset, "setter")):
                if fn is not None:
                    self.entry = name if role == "getter" else f"{name} (setter)"
                    self.walk_call(fn, Ref(SELF))
            return
        assert isinstance(atom, Func)
        first = None if atom.kind == "static" else ClassRef(self.cls) if atom.kind == "classmethod" else Ref(SELF)
        self.walk_call(atom, first)

    def walk_call(self, fn: Func, first: object | None) -> None:
        self.sinks = [[]]
        start = World(Locks())
        node = self.program.functions[fn.key].node
        results = self.call_function(fn, self.entry_args(fn, first), start, Frame(None), node)
        raised = self.sinks[0]
        self.check_exits(results, raised, node)

    def walk_with(self) -> None:
        """``with instance: pass``: __enter__ then __exit__, on every path."""
        self.sinks = [[]]
        node = self.program.classes[self.cls]
        entered = self.dunder(Ref(SELF), "__enter__", Args(), World(Locks()), Frame(None), node) or []
        out = []
        for world, _ in entered:  # the caller's block runs between them: two operations, each judged as one
            world = world.with_locks(world.locks._replace(touched=frozenset()))
            out += self.dunder(Ref(SELF), "__exit__", Args([NOTHING | frozenset({new(("param", "with", "exc"))})] * 3), world, Frame(None), node) or []
        self.check_exits([(w, NOTHING) for w, _ in out], self.sinks[0], node)

    def check_exits(self, results: list[tuple[World, Value]], raised: list[World], node: ast.AST) -> None:
        for world, value in results:
            for held, _ in world.locks.held:
                if self.heap.locks[held].scope != "fresh" and self.heap.locks[held].kind != "counting":
                    self.report(
                        world.locks.line_taken(held) or node,
                        f"`{self.entry}` returns still holding {self.lock_label(held)} (taken at line {world.locks.line_taken(held)}): every later call waits for it forever",
                        "leak",
                    )
            for atom in value:
                if isinstance(atom, GenObj):
                    self.walk_generator(atom, node)
                    continue
                if isinstance(atom, Func | Bound) and self.reaches_shared(atom, world):
                    self.report(node, f"`{self.entry}` returns a function that reaches shared state: it can run later, without the lock", "escape")
            for leaked in self.shared_within(value, world):
                if self.handed_at(leaked, world):
                    self.report(node, f"`{self.entry}` returns an object it put into a queue at line {self.handed_at(leaked, world)}: the thread that gets it may be using it", "escape")
                    continue
                self.report(node, f"`{self.entry}` returns {describe(leaked)}, shared state, to its caller, who can then change it without the lock", "escape")
        for world in raised:
            if not world.locks.raised_at:
                continue  # a statement boundary, where only an interrupt could raise: a handler's way in, not a leak
            for held, _ in world.locks.held:
                if self.heap.locks[held].scope == "fresh" or self.heap.locks[held].kind == "counting":
                    continue
                self.report(
                    world.locks.raised_at or node,
                    f"`{self.entry}` can leave by an exception raised here while holding {self.lock_label(held)} (taken at line "
                    f"{world.locks.line_taken(held)}), and nothing lets it go: use `with`, or release it in `finally`",
                    "leak",
                )

    def reaches_shared(self, atom: Func | Bound, world: World) -> bool:
        """A function whose closure (or bound object) holds the instance, a lock or shared state."""
        held = [atom.recv] if isinstance(atom, Bound) else [a for _, value in atom.closure for a in value]
        return any(
            (isinstance(a, Ref) and (a.obj == SELF or self.scope_of(a, world) is not None)) or isinstance(a, LockRef)
            or (isinstance(a, Func | Bound) and self.reaches_shared(a, world)) for a in held
        )

    def walk_module_functions(self) -> None:
        """The module's public functions: anyone may call them (and they may change what the class relies on)."""
        for name, value in sorted(self.heap.fields.get(MODULE, {}).items()):
            if name.startswith("_"):
                continue
            for atom in sorted(value, key=repr):
                if isinstance(atom, Func) and atom.kind == "function" and not self.program.functions[atom.key].owner:
                    self.entry = name
                    self.walk_call(atom, None)

    def walk_generator(self, gen: GenObj, node: ast.AST) -> None:
        """A generator handed to the caller: its body runs whenever the caller iterates, holding none of our locks;
        what it yields leaves like a return value."""
        if gen.func.key in self.stack:
            return
        sinks, self.sinks = self.sinks, [[]]
        self.handed_out = True
        try:
            ran = self.run_generator(gen, World(Locks()), Frame(None), node)
            self.check_exits(ran, self.sinks[0], node)
        finally:
            self.sinks = sinks
            self.handed_out = False

    def lock_label(self, key: str) -> str:
        info = self.heap.locks[key]
        return f"`{info.path}`" if info.path else f"the lock made at line {info.line}"

    # -- what only the whole walk shows -------------------------------------------------------------

    def check_locksets(self) -> None:
        """One lock held at every access to the same state: accesses that share no lock keep nothing apart."""
        for _, uses in sorted(self.locksets.items(), key=lambda item: repr(item[0])):
            if frozenset.intersection(*(locks for locks, _, _ in uses)):
                continue
            pair = next(((a, b) for a in uses for b in uses if not a[0] & b[0]), None)
            (first, first_line, first_what), (then, line, what) = pair if pair is not None else (uses[0], uses[-1])
            held = f"holding {self.labels(then)} here, but holding {self.labels(first)} at line {first_line} ({first_what})"
            if pair is None:  # {A, B}, {A}, {B}: every two share one, but no lock is held at all of them
                held = "under locks no one of which is held at every access to it (" + ", ".join(
                    f"line {ln}: {self.labels(locks)}" for locks, ln, _ in uses[:4]) + ")"
            self.report(line, f"{what} is touched {held}: no one lock guards it, so two threads can change it at once")

    def labels(self, locks: frozenset[str]) -> str:
        return " and ".join(sorted(self.lock_label(k) for k in locks))

    def check_order(self) -> None:
        """Locks taken in an order that goes round (A then B, B then C, C then A): each thread can hold one and wait for
        the next, forever."""
        edges: dict[str, list[str]] = {}
        for first, second in self.order:
            edges.setdefault(first, []).append(second)
        for start in sorted(edges):
            path = self.cycle(start, edges)
            if path:
                steps = [(a, b, *self.order[(a, b)]) for a, b in zip(path, path[1:] + path[:1], strict=True)]
                told = "; ".join(f"`{m}` takes {self.lock_label(b)} while holding {self.lock_label(a)} (line {ln})" for a, b, ln, m in steps)
                self.report(max(ln for _, _, ln, _ in steps), f"{told}: taken in a circle, each thread can hold one and wait for the next forever", "deadlock")
                return

    def cycle(self, start: str, edges: dict[str, list[str]]) -> list[str]:
        """A path of locks from ``start`` back to it, if there is one."""
        todo: list[list[str]] = [[start]]
        while todo:
            path = todo.pop()
            for nxt in sorted(edges.get(path[-1], [])):
                if nxt == start:
                    return path
                if nxt not in path:
                    todo.append([*path, nxt])
        return []


def run_review(tree: ast.Module, source: str, cls: str) -> Finding | None:
    try:
        program = Program.read(tree, source)
    except CannotFollow as exc:
        return exc.finding()
    return Review(program, cls).run()

