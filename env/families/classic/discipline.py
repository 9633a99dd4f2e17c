"""The lock discipline of a submitted class, reviewed from its source on the trusted side.

    why = review(source, "ConnectionCounter")   # "" when the discipline holds, else what it expects and where

The in-process explorer can in principle be noticed by the code it checks; this review cannot. It passes a
class only when every read and write of its shared state, in every method and on every path, happens inside
one acquisition of one lock that all methods share, and nothing lets the state or the lock be reached another
way. What it accepts:

- the lock: ``self.<name> = threading.Lock()`` (or ``RLock()``, ``Condition()``, ``Semaphore(1)``,
  ``BoundedSemaphore(1)``) in ``__init__``, or a module-level ``NAME = threading.Lock()``; never rebound;
- a held region: ``with <lock>:``, or ``<lock>.acquire()`` (or a ``while not <lock>.acquire(...)`` spin)
  followed at once by ``try: ... finally: <lock>.release()``;
- shared state: every ``self.<attribute>`` other than the lock and constants set only in ``__init__``, every
  module-level name a function rebinds with ``global``, and every module-level mutable value;
- per method: all of its shared accesses, including calls to methods that touch shared state, inside one held
  region; a private helper (``self._name(...)``) whose every call is inside a held region counts as held.

Anything it cannot follow (``self`` passed or stored elsewhere, attributes set on other objects, nested
functions, decorators, metaclasses, attribute hooks, code at import time, reaching into a module's private
names) is refused with a message naming the line and what the review expects, never judged racy. A correct
design outside these shapes is refused, not credited: the message says what to write instead.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from env.pyparse import parse

LOCK_FACTORIES = frozenset({"Lock", "RLock", "Condition", "Semaphore", "BoundedSemaphore"})
ALLOWED_DUNDER_METHODS = frozenset({"__init__", "__repr__", "__str__"})
CONTEXT_METHODS = ("__enter__", "__exit__")  # accepted only when they take and release the shared lock, nothing else
EXPECTED = (
    "The concurrency review expects every read and write of the counter's state, in every method, inside one "
    "`with self._lock:` block (one lock, created in __init__ with threading.Lock() and shared by all methods)."
)


class Refused(Exception):
    def __init__(self, node: ast.AST | None, text: str):
        line = getattr(node, "lineno", 0)
        super().__init__(f"line {line}: {text}" if line else text)


@dataclass
class _Module:
    threading: set[str] = field(default_factory=set)  # names bound to the threading module
    factories: dict[str, str] = field(default_factory=dict)  # name -> Lock/RLock/... imported from threading
    imports: set[str] = field(default_factory=set)  # every imported name
    lock_globals: set[str] = field(default_factory=set)
    constant_globals: set[str] = field(default_factory=set)
    shared_globals: set[str] = field(default_factory=set)
    functions: set[str] = field(default_factory=set)


def review(source: str, cls_name: str) -> str:
    """"" when ``cls_name``'s lock discipline holds; otherwise the reason, ending with what the review expects."""
    try:
        tree = parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return "the code does not parse"
    try:
        if not isinstance(tree, ast.Module):
            return "the code is not a module"
        _Review(tree, cls_name).run()
    except Refused as exc:
        return f"{exc} {EXPECTED}"
    return ""


def _is_super_init(node: ast.AST) -> bool:
    """``super().__init__()`` as a statement."""
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and not node.value.args and not node.value.keywords):
        return False
    func = node.value.func
    return (
        isinstance(func, ast.Attribute) and func.attr == "__init__" and isinstance(func.value, ast.Call)
        and isinstance(func.value.func, ast.Name) and func.value.func.id == "super" and not func.value.args and not func.value.keywords
    )


def _only_call(body: list[ast.stmt], method: str) -> ast.expr | None:
    """The object of ``<x>.<method>()`` when ``body`` is that one call (an ``__exit__``'s ``return False`` aside)."""
    calls = [s for s in body if not (isinstance(s, ast.Return) and (s.value is None or (isinstance(s.value, ast.Constant) and s.value.value in (False, None))))]
    if len(calls) != 1 or not isinstance(calls[0], ast.Expr):
        return None
    call = calls[0].value
    if isinstance(call, ast.Call) and not call.args and not call.keywords and isinstance(call.func, ast.Attribute) and call.func.attr == method:
        return call.func.value
    return None


def _constant(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Tuple):
        return all(_constant(e) for e in node.elts)
    if isinstance(node, ast.UnaryOp):
        return _constant(node.operand)
    return False


class _Review:
    def __init__(self, tree: ast.Module, cls_name: str):
        self.tree, self.cls_name = tree, cls_name
        self.mod = _Module()
        self.cls: ast.ClassDef | None = None
        self.classes: dict[str, ast.ClassDef] = {}
        self.self_lock = ""  # the lock `with self:` holds, when the class is its own context manager
        self.lock_attrs: set[str] = set()
        self.methods: dict[str, ast.FunctionDef] = {}
        self.constant_attrs: set[str] = set()

    # -- the module's top level ---------------------------------------------------------------

    def run(self) -> None:
        bound: dict[str, ast.AST] = {}

        def bind(name: str, node: ast.AST) -> None:
            if name in bound:
                raise Refused(node, f"`{name}` is bound twice at module level")
            bound[name] = node

        for node in self.tree.body:
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                continue
            if isinstance(node, ast.Import):
                for alias in node.names:
                    name = alias.asname or alias.name.split(".")[0]
                    bind(name, node)
                    self.mod.imports.add(name)
                    if alias.name == "threading":
                        self.mod.threading.add(name)
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    name = alias.asname or alias.name
                    bind(name, node)
                    self.mod.imports.add(name)
                    if node.module == "threading" and alias.name in LOCK_FACTORIES:
                        self.mod.factories[name] = alias.name
            elif isinstance(node, ast.ClassDef):
                bind(node.name, node)
                self.classes[node.name] = node
                if node.name == self.cls_name:
                    self.cls = node
            elif isinstance(node, ast.FunctionDef):
                bind(node.name, node)
                if node.decorator_list:
                    raise Refused(node, f"`{node.name}` is decorated")
                self.mod.functions.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if not isinstance(target, ast.Name):
                        raise Refused(node, "the module assigns to something other than a plain name at import time")
                    bind(target.id, node)
                    if self._lock_factory(node.value):
                        self.mod.lock_globals.add(target.id)
                    elif _constant(node.value):
                        self.mod.constant_globals.add(target.id)
                    else:
                        self.mod.shared_globals.add(target.id)
            else:
                raise Refused(node, "the module runs code at import time the review cannot follow")
        if self.cls is None:
            raise Refused(None, f"there is no class `{self.cls_name}` at the module's top level")
        for glob in ast.walk(self.tree):
            if isinstance(glob, ast.Global):
                for name in glob.names:
                    if name in self.mod.lock_globals or name in self.mod.imports or name == self.cls_name:
                        raise Refused(glob, f"`{name}` is rebound inside a function")
                    self.mod.shared_globals.add(name)
                    self.mod.constant_globals.discard(name)
        self._everywhere()
        for node in self.tree.body:
            if isinstance(node, ast.FunctionDef):
                self._function_touches_nothing(node)
        chain = self._chain(self.cls)
        for name, other in self.classes.items():
            if other not in chain:
                raise Refused(other, f"the module defines another class, `{name}`, the review cannot follow")
        self._class(chain)

    def _lock_factory(self, node: ast.expr) -> bool:
        """``threading.Lock()``-style calls (a semaphore only with one permit)."""
        if not isinstance(node, ast.Call):
            return False
        func = node.func
        name = ""
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in self.mod.threading:
            name = func.attr
        elif isinstance(func, ast.Name) and func.id in self.mod.factories:
            name = self.mod.factories[func.id]
        if name not in LOCK_FACTORIES or node.keywords:
            return False
        if name in ("Semaphore", "BoundedSemaphore"):
            return len(node.args) == 1 and isinstance(node.args[0], ast.Constant) and node.args[0].value == 1
        if name == "Condition":
            return not node.args or (len(node.args) == 1 and self._lock_factory(node.args[0]))
        return not node.args

    def _everywhere(self) -> None:
        """Rules for every node of the module: no stores on other objects, no module as a value, no private reach."""
        annotations: set[int] = set()
        for node in ast.walk(self.tree):
            notes = [getattr(node, "annotation", None), getattr(node, "returns", None)]
            annotations |= {id(n) for note in notes if note is not None for n in ast.walk(note)}
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.Attribute,)) and isinstance(node.ctx, (ast.Store, ast.Del)):
                if not (isinstance(node.value, ast.Name) and node.value.id == "self"):
                    raise Refused(node, f"assigns to the attribute `{node.attr}` of something other than `self`")
            if isinstance(node, ast.Attribute):
                base = node.value
                while isinstance(base, ast.Attribute):
                    base = base.value
                if isinstance(base, ast.Name) and base.id in self.mod.imports and node.attr.startswith("_"):
                    raise Refused(node, f"reaches into a module's private name `{node.attr}`")
                if node.attr.startswith("__") and node.attr.endswith("__") and node.attr != "__init__":
                    raise Refused(node, f"uses the special attribute `{node.attr}`")
            if isinstance(node, ast.Name) and node.id in self.mod.imports and isinstance(node.ctx, ast.Load) and id(node) not in annotations:
                parent = self._parents().get(node)
                if not (isinstance(parent, ast.Attribute) or (isinstance(parent, ast.Call) and parent.func is node)):
                    raise Refused(node, f"uses the imported name `{node.id}` as a value")
            if isinstance(node, ast.Name) and node.id in ("getattr", "setattr", "delattr", "vars", "globals", "locals", "eval", "exec", "type", "super", "__import__"):
                if not (node.id == "super" and node in self._super_inits()):
                    raise Refused(node, f"uses `{node.id}`")
            if isinstance(node, (ast.Lambda, ast.Yield, ast.YieldFrom, ast.Await, ast.AsyncFunctionDef, ast.AsyncWith, ast.AsyncFor)):
                raise Refused(node, "uses a lambda, a generator or async code the review cannot follow")

    _parent_map: dict[ast.AST, ast.AST] | None = None

    def _super_inits(self) -> set[ast.AST]:
        """The ``super`` names of ``super().__init__()`` statements (the one use of ``super`` the review follows);
        AST nodes compare by identity, so the nodes themselves are the keys."""
        found: set[ast.AST] = set()
        for node in ast.walk(self.tree):
            if _is_super_init(node):
                found.add(node.value.func.value.func)  # type: ignore[attr-defined]
        return found

    def _parents(self) -> dict[ast.AST, ast.AST]:
        if self._parent_map is None:
            self._parent_map = {child: node for node in ast.walk(self.tree) for child in ast.iter_child_nodes(node)}
        return self._parent_map

    def _function_touches_nothing(self, func: ast.FunctionDef) -> None:
        """A module-level function may compute, but not touch the shared state (it holds no lock)."""
        for node in ast.walk(func):
            if isinstance(node, ast.Name) and node.id in self.mod.shared_globals:
                raise Refused(node, f"the function `{func.name}` touches the module-level state `{node.id}` outside the class's lock")

    # -- the class ------------------------------------------------------------------------------

    def _chain(self, cls: ast.ClassDef) -> list[ast.ClassDef]:
        """``cls`` and the classes of this module it inherits from, base first (one base each, no metaclass)."""
        chain = [cls]
        while True:
            top = chain[0]
            if top.decorator_list or top.keywords or len(top.bases) > 1:
                raise Refused(top, f"`{top.name}` has several bases, a decorator or a metaclass the review cannot follow")
            if not top.bases or (isinstance(top.bases[0], ast.Name) and top.bases[0].id == "object"):
                return chain
            base = top.bases[0]
            if not (isinstance(base, ast.Name) and base.id in self.classes) or self.classes[base.id] in chain:
                raise Refused(top, f"`{top.name}` inherits from a class the review cannot follow (only classes of this module)")
            chain.insert(0, self.classes[base.id])

    def _class(self, chain: list[ast.ClassDef]) -> None:
        """The methods the class ends up with (a subclass's override wins), then the discipline of each."""
        inits: list[ast.FunctionDef] = []
        for cls in chain:
            own: set[str] = set()
            for node in cls.body:
                if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                    continue
                if isinstance(node, ast.FunctionDef):
                    if node.decorator_list:
                        raise Refused(node, f"the method `{node.name}` is decorated")
                    if node.name.startswith("__") and node.name.endswith("__") and node.name not in ALLOWED_DUNDER_METHODS.union(CONTEXT_METHODS):
                        raise Refused(node, f"the class defines `{node.name}`, which changes how its attributes or instances behave")
                    if node.name in own:
                        raise Refused(node, f"the method `{node.name}` is defined twice")
                    own.add(node.name)
                    self.methods[node.name] = node
                    if node.name == "__init__":
                        inits.append(node)
                    continue
                if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets) and _constant(node.value):
                    self.constant_attrs |= {t.id for t in node.targets if isinstance(t, ast.Name)}
                    continue
                raise Refused(node, f"the class body of `{cls.name}` holds something other than methods and constants")
        self._init(self._constructor(inits))
        self._context_methods()
        for name, method in self.methods.items():
            if name in CONTEXT_METHODS:
                continue
            self._self_uses(method)
            if name != "__init__":
                for inner in ast.walk(method):
                    if isinstance(inner, (ast.FunctionDef, ast.ClassDef)) and inner is not method:
                        raise Refused(inner, f"`{name}` defines a nested function or class")
        touching = self._touching()
        regions = {name: self._regions(method, touching) for name, method in self.methods.items() if name not in ("__init__", *CONTEXT_METHODS)}
        self._check_helpers(regions, touching)
        locks = {lock for per in regions.values() for lock, _ in per[1]}
        if len(locks) > 1:
            raise Refused(self.cls, "the methods hold different locks (" + ", ".join(sorted(f"`{lock}`" for lock in locks)) + "): one lock must guard the state")

    def _constructor(self, inits: list[ast.FunctionDef]) -> list[ast.stmt]:
        """The statements construction runs: each ``__init__`` from the most derived, following ``super().__init__()``
        where it stands first; a base's ``__init__`` that no subclass calls is not run."""
        if not inits:
            return []
        body: list[ast.stmt] = []
        for init in reversed(inits):
            calls_base = bool(init.body) and _is_super_init(init.body[0])
            body = list(init.body[1:] if calls_base else init.body) + body
            if not calls_base:
                break
        for node in ast.walk(ast.Module(body=body, type_ignores=[])):
            if _is_super_init(node):
                raise Refused(node, "`super().__init__()` is not the first statement of __init__")
        return body

    def _context_methods(self) -> None:
        """``__enter__``/``__exit__`` that only take and release one shared lock make ``with self:`` a held region."""
        enter, exit_ = self.methods.get("__enter__"), self.methods.get("__exit__")
        if enter is None and exit_ is None:
            return
        taken = _only_call(enter.body[:-1], "acquire") if enter is not None and enter.body else None
        released = _only_call(exit_.body, "release") if exit_ is not None else None
        returns_self = enter is not None and isinstance(enter.body[-1], ast.Return) and isinstance(enter.body[-1].value, ast.Name) and enter.body[-1].value.id == "self"
        lock = self._is_lock(taken) if taken is not None else ""
        if not (lock and released is not None and self._is_lock(released) == lock and returns_self):
            raise Refused(enter or exit_, "__enter__/__exit__ do more than take one shared lock (returning self) and release it")
        self.self_lock = lock

    def _init(self, body: list[ast.stmt]) -> None:
        assigned: dict[str, int] = {}
        for node in body:
            target: ast.expr
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                continue
            if isinstance(node, ast.AnnAssign) and node.value is not None:
                target, value = node.target, node.value
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
            else:
                raise Refused(node, "__init__ does something other than set `self.<name> = <value>`")
            if not isinstance(target, ast.Attribute):
                raise Refused(node, "__init__ does something other than set `self.<name> = <value>`")
            if not (isinstance(target.value, ast.Name) and target.value.id == "self"):
                raise Refused(node, "__init__ sets an attribute of something other than `self`")
            if any(isinstance(n, ast.Name) and n.id == "self" for n in ast.walk(value)):
                raise Refused(node, "__init__ builds a value from `self`")
            assigned[target.attr] = assigned.get(target.attr, 0) + 1
            if self._lock_factory(value):
                self.lock_attrs.add(target.attr)
            elif _constant(value):
                self.constant_attrs.add(target.attr)
            else:
                self.constant_attrs.discard(target.attr)
        for name, method in self.methods.items():
            if name == "__init__":
                continue
            for sub in ast.walk(method):
                if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, (ast.Store, ast.Del)):
                    if sub.attr in self.lock_attrs:
                        raise Refused(sub, f"the lock `self.{sub.attr}` is replaced outside __init__")
                    self.constant_attrs.discard(sub.attr)
        if any(count > 1 for count in assigned.values()):
            raise Refused(self.cls, "__init__ sets an attribute twice")

    def _self_uses(self, method: ast.FunctionDef) -> None:
        """``self`` only as ``self.<attr>``; a method only called, never handed on; the first parameter named self."""
        args = method.args
        if not args.args or args.args[0].arg != "self" or args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            raise Refused(method, f"the method `{method.name}` does not take plain `self` first")
        module_names = self.mod.imports | self.mod.lock_globals | self.mod.shared_globals | self.mod.constant_globals | self.mod.functions
        for arg in args.args[1:]:
            if arg.arg in module_names or arg.arg == "self":
                raise Refused(arg, f"the parameter `{arg.arg}` of `{method.name}` hides a name of the module")
        parents = self._parents()
        for node in ast.walk(method):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id in module_names:
                raise Refused(node, f"`{method.name}` hides the module's name `{node.id}` with a local one")
            if _is_super_init(node) and method.name != "__init__":
                raise Refused(node, f"`{method.name}` runs __init__ again (it would replace the lock)")
            if isinstance(node, ast.Attribute) and node.attr not in ("acquire", "release") and self._is_lock(node.value):
                if not (isinstance(node.value, ast.Name) and node.value.id == "self"):  # (`self.x` is state, not the lock's)
                    raise Refused(node, f"`{method.name}` uses `{node.attr}` of the lock; only acquire and release are followed")
            if isinstance(node, ast.Name) and node.id == "self":
                parent = parents.get(node)
                if self.self_lock and isinstance(parent, ast.withitem) and parent.context_expr is node and parent.optional_vars is None:
                    continue  # `with self:` holds the class's own lock
                if isinstance(node.ctx, ast.Store) or not isinstance(parent, ast.Attribute):
                    raise Refused(node, f"`{method.name}` uses `self` other than as `self.<name>`")
                caller = parents.get(parent)
                if parent.attr in self.methods and not (isinstance(caller, ast.Call) and caller.func is parent):
                    raise Refused(node, f"`{method.name}` hands the method `{parent.attr}` on instead of calling it")
                if parent.attr == "__init__":
                    raise Refused(node, f"`{method.name}` runs __init__ again (it would replace the lock)")
            if isinstance(node, ast.Name) and node.id in self.mod.lock_globals:
                parent = parents.get(node)
                if isinstance(node.ctx, ast.Store) or not (isinstance(parent, (ast.withitem, ast.Attribute))):
                    raise Refused(node, f"`{method.name}` uses the lock `{node.id}` other than to hold it")

    def _is_lock(self, node: ast.expr) -> str:
        """The lock's name when ``node`` is one of the shared locks ("" otherwise)."""
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" and node.attr in self.lock_attrs:
            return "self." + node.attr
        if isinstance(node, ast.Name) and node.id in self.mod.lock_globals:
            return node.id
        if isinstance(node, ast.Name) and node.id == "self" and self.self_lock:
            return self.self_lock
        return ""

    def _accesses(self, node: ast.AST, touching: set[str]) -> list[ast.AST]:
        """The shared accesses in ``node``: state attributes, shared globals, calls of methods that touch state."""
        found: list[ast.AST] = []
        for sub in ast.walk(node):
            if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == "self":
                if sub.attr in self.methods:
                    if sub.attr in touching:
                        found.append(sub)
                elif sub.attr not in self.lock_attrs and sub.attr not in self.constant_attrs:
                    found.append(sub)
            elif isinstance(sub, ast.Name) and sub.id in self.mod.shared_globals:
                found.append(sub)
        return found

    def _touching(self) -> set[str]:
        """Methods that (directly or through other methods) read or write shared state."""
        touching = {name for name, m in self.methods.items() if name != "__init__" and self._accesses(m, set())}
        while True:
            more = {
                name for name, m in self.methods.items()
                if name != "__init__" and name not in touching and any(
                    isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self" and n.attr in touching for n in ast.walk(m)
                )
            }
            if not more:
                return touching
            touching |= more

    def _held(self, method: ast.FunctionDef) -> list[tuple[str, list[ast.stmt], ast.stmt]]:
        """The held regions of ``method``: (lock, body, the statement that takes it)."""
        regions: list[tuple[str, list[ast.stmt], ast.stmt]] = []

        def visit(body: list[ast.stmt]) -> None:
            for i, stmt in enumerate(body):
                if isinstance(stmt, ast.With):
                    locks = [self._is_lock(item.context_expr) for item in stmt.items]
                    if any(locks):
                        if len(stmt.items) != 1 or stmt.items[0].optional_vars is not None:
                            raise Refused(stmt, "a `with` holds the lock together with something else")
                        regions.append((locks[0], stmt.body, stmt))
                        continue
                    raise Refused(stmt, "a `with` enters something other than the shared lock")
                taken = self._taken_by(stmt)
                if taken:
                    follower = body[i + 1] if i + 1 < len(body) else None
                    if not (isinstance(follower, ast.Try) and not follower.handlers and self._released_by(follower.finalbody, taken)):
                        raise Refused(stmt, "the lock is acquired without `try: ... finally: <lock>.release()` right after")
                    regions.append((taken, follower.body, stmt))
                    continue
                if isinstance(stmt, ast.Try) and i > 0 and self._taken_by(body[i - 1]):
                    continue  # the region of the acquire just before
                for name in ("body", "orelse", "finalbody"):
                    visit(getattr(stmt, name, []) or [])
                for handler in getattr(stmt, "handlers", []) or []:
                    visit(handler.body)

        visit(method.body)
        return regions

    def _taken_by(self, stmt: ast.stmt) -> str:
        """``<lock>.acquire()`` as a statement, or ``while not <lock>.acquire(...): <nothing shared>``."""
        call: ast.expr | None = None
        if isinstance(stmt, ast.Expr):
            call = stmt.value
        elif isinstance(stmt, ast.While) and isinstance(stmt.test, ast.UnaryOp) and isinstance(stmt.test.op, ast.Not) and not stmt.orelse:
            call = stmt.test.operand
            if self._accesses(ast.Module(body=stmt.body, type_ignores=[]), set(self.methods)):
                raise Refused(stmt, "the spin loop touches shared state before it holds the lock")
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "acquire":
            return self._is_lock(call.func.value)
        return ""

    def _released_by(self, final: list[ast.stmt], lock: str) -> bool:
        return any(
            isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute)
            and s.value.func.attr == "release" and self._is_lock(s.value.func.value) == lock
            for s in final
        )

    def _regions(self, method: ast.FunctionDef, touching: set[str]) -> tuple[list[ast.AST], list[tuple[str, ast.stmt]]]:
        """(accesses outside any held region, [(lock, region statement)]); every access of the method must be in one region."""
        regions = self._held(method)
        inside: set[int] = set()
        used: list[tuple[str, ast.stmt]] = []
        for lock, body, stmt in regions:
            found = self._accesses(ast.Module(body=body, type_ignores=[]), touching)
            for node in ast.walk(ast.Module(body=body, type_ignores=[])):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("release", "wait", "wait_for", "notify", "notify_all") and self._is_lock(node.func.value):
                    raise Refused(node, f"`{method.name}` releases or waits on the lock inside the region that holds it")
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "acquire" and self._is_lock(node.func.value):
                    raise Refused(node, f"`{method.name}` acquires the lock again inside the region that holds it")
            if found:
                inside |= {id(n) for n in found}
                used.append((lock, stmt))
        outside = [n for n in self._accesses(method, touching) if id(n) not in inside]
        if len(used) > 1:
            lines = ", ".join(str(stmt.lineno) for _, stmt in used)
            raise Refused(method, f"`{method.name}` touches the shared state under separate acquisitions of the lock (lines {lines}): another thread can change it in between")
        return outside, used

    def _check_helpers(self, regions: dict[str, tuple[list[ast.AST], list[tuple[str, ast.stmt]]]], touching: set[str]) -> None:
        """Accesses outside a held region are allowed only in private helpers every caller calls while holding the lock."""
        held_calls: dict[str, int] = {}
        all_calls: dict[str, int] = {}
        for name, method in self.methods.items():
            if name in ("__init__", *CONTEXT_METHODS):
                continue
            held_nodes: set[int] = set()
            for _, body, _ in self._held(method):
                held_nodes |= {id(n) for n in ast.walk(ast.Module(body=body, type_ignores=[]))}
            for node in ast.walk(method):
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" and node.attr in self.methods:
                    all_calls[node.attr] = all_calls.get(node.attr, 0) + 1
                    if id(node) in held_nodes:
                        held_calls[node.attr] = held_calls.get(node.attr, 0) + 1
        for name, (outside, _) in regions.items():
            if not outside:
                continue
            helper = name.startswith("_") and not name.startswith("__") and all_calls.get(name) and all_calls[name] == held_calls.get(name)
            if not helper:
                node = outside[0]
                what = f"`self.{node.attr}`" if isinstance(node, ast.Attribute) else f"`{getattr(node, 'id', '?')}`"
                raise Refused(node, f"`{name}` touches the shared state ({what}) without holding the lock")
