"""The review's walker: the state one review keeps, and the operations its parts ask of each other.

``Review`` (review.py) is this class with its parts mixed in: expressions.py (values of expressions, conditions),
statements.py (blocks, loops, ``try``, ``with``), calls.py (functions, methods, the library), objects.py
(attributes, items, accesses to shared state) and locks.py (acquire, release, wait). Each part declares here what it
offers the others, so each file reads on its own.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field

from env.race_review.findings import Finding
from env.race_review.heap import Heap
from env.race_review.library import Spec
from env.race_review.program import FnInfo, Program, key
from env.race_review.retries import retry_sites, write_only_fields
from env.race_review.values import Atom, GenObj, LockRef, ObjId, Ref, Scope, Value
from env.race_review.world import Flow, Touch, World

Results = list[tuple[World, Value]]
MAX_DEPTH = 24  # calls inlined one inside another
MAX_WORLDS = 48  # paths with different locks alive at one point


@dataclass
class Frame:
    """The function being walked: its scope (locals and globals), what it closed over, or a class body."""

    fn: FnInfo | None
    closure: dict[str, Value] = field(default_factory=dict)
    cls_body: str | None = None  # the class whose body runs (class attributes are its locals)
    parent: str = ""  # the function whose locals the closure reads (each read also sees what they are bound to later)


@dataclass
class Args:
    """A call's arguments once evaluated: positional values (``*x`` expanded when exact) and keywords."""

    positional: list[Value] = field(default_factory=list)
    keywords: dict[str, Value] = field(default_factory=dict)
    rest: Value | None = None  # what an inexact ``*x`` may add (any number of positions)
    kwrest: Value | None = None  # what an inexact ``**x`` may add

    def every(self) -> list[Value]:
        values = list(self.positional) + list(self.keywords.values())
        return values + [v for v in (self.rest, self.kwrest) if v is not None]


class EngineBase:
    def __init__(self, program: Program, cls: str):
        self.program = program
        self.cls = cls  # the class under review
        self.heap = Heap()
        self.findings: list[Finding] = []
        self.reporting = False  # findings are kept once the module's top level has run (review.py resets them each walk)
        self.building: list[ObjId] = []  # objects whose construction runs (their fields are not yet shared)
        self.in_self_init = False  # the instance under review is being constructed (a lock made now is its own)
        self.self_published = 0  # the line where __init__ made the instance reachable by other threads (0: not yet)
        self.retry_sites = retry_sites(program.tree)  # where polling rounds take their lock (retries.py)
        self.write_only = frozenset(f"`self.{name}`" for name in write_only_fields(program.tree))  # (as a Touch names them)
        self.module_level = False  # the module's top level runs (locks made here are global)
        self.sinks: list[list[World]] = [[]]  # where exception paths go: the innermost try, with or call
        self.stack: list[str] = []  # functions being walked (no recursion)
        self.calls: list[int] = []  # the lines of the calls being walked, the entry's first
        self.deferring = 0  # inside a predicate loop's test
        self.quiet = 0  # leaving by an exception only an interrupt could raise: a lock not held there is no finding
        self.retesting = 0  # inside a while loop (a wait there is re-tested by it)
        self.conditional = 0  # inside a branch of an if
        self.retest_if = 0  # inside `if not ready: wait()` that is tested again right after (a wait there is re-tested)
        self.waiting_for = 0  # inside Condition.wait_for (a predicate loop of its own)
        self.safe: dict[str, bool] = {}  # classes of the module found to guard their own state (objects.safe_class)
        self.handed_out = False
        self.retested: set[int] = set()  # `if not ready: wait()` statements tested again right after (statements.exec_block)  # running a generator the caller iterates (its yields hand control to the caller's code)
        self.yields: list[set[Atom]] = []  # what the generators being run yield
        self.loop_depth = 0  # inside a loop while constructing (a lock made here is one of several)
        self.entry = ""  # the method whose call is walked, for messages
        self.locksets: dict[tuple[ObjId, str], list[tuple[frozenset[str], int, str]]] = {}
        self.order: dict[tuple[str, str], tuple[int, str]] = {}  # (held, then taken) -> (line, method)

    # -- findings --------------------------------------------------------------------------------

    def report(self, node: ast.AST | int, text: str, kind: str = "race") -> None:
        if self.reporting:
            line = node if isinstance(node, int) else getattr(node, "lineno", 0)
            self.findings.append(Finding(line, text, kind))  # type: ignore[arg-type]

    def who(self, frame: Frame) -> str:
        """The method a message speaks of: the entry point, and the function it went through (called where)."""
        inner = frame.fn.name if frame.fn is not None else ""
        if not self.entry or not inner or inner == self.entry or len(self.calls) < 2:
            return f"`{self.entry or inner}`"
        what = "a lambda" if inner == "<lambda>" else f"`{inner}`"
        return f"`{self.entry}` (in {what}, called at line {self.calls[1]})"

    def site(self, node: ast.AST) -> str:
        """``node`` as reached through the calls being walked: one lock, one try-acquire per way of getting there."""
        return key(node) + "".join(f"<{line}" for line in self.calls[1:])

    def raised(self, world: World, node: ast.AST) -> None:
        """An exception may leave from ``node`` on this path."""
        locks = world.locks
        line = getattr(node, "lineno", 0)
        if line and not locks.raised_at:
            locks = locks._replace(raised_at=line)
        self.sinks[-1].append(world.with_locks(locks))

    # -- what the parts offer each other ---------------------------------------------------------

    def eval(self, node: ast.expr, world: World, frame: Frame) -> Results:
        raise NotImplementedError

    def split(self, test: ast.expr, world: World, frame: Frame) -> tuple[list[World], list[World]]:
        raise NotImplementedError

    def exec_block(self, body: list[ast.stmt], worlds: list[World], frame: Frame) -> Flow:
        raise NotImplementedError

    def assign(self, target: ast.expr, value: Value, world: World, frame: Frame) -> list[World]:
        raise NotImplementedError

    def starred_list(self, items: Value, node: ast.AST) -> Value:
        raise NotImplementedError

    def call(self, func: Value, args: Args, world: World, frame: Frame, node: ast.AST) -> Results:
        raise NotImplementedError

    def call_function(self, fn: Atom, args: Args, world: World, frame: Frame, node: ast.AST) -> Results:
        raise NotImplementedError

    def load_attr(self, atom: Atom, name: str, world: World, frame: Frame, node: ast.AST) -> Results:
        raise NotImplementedError

    def store_attr(self, atom: Atom, name: str, value: Value, world: World, frame: Frame, node: ast.AST) -> list[World]:
        raise NotImplementedError

    def load_item(self, atom: Atom, index: Value, world: World, frame: Frame, node: ast.AST) -> Results:
        raise NotImplementedError

    def store_item(self, atom: Atom, value: Value | None, world: World, frame: Frame, node: ast.AST, index: Value = frozenset()) -> list[World]:
        raise NotImplementedError

    def read(self, value: Value, world: World, frame: Frame, node: ast.AST, what: str = "", write: bool = False) -> World:
        raise NotImplementedError

    def scope_of(self, atom: Atom, world: World) -> Scope | None:
        raise NotImplementedError

    def publish(self, value: Value, scope: Scope | None, world: World, node: ast.AST) -> World:
        raise NotImplementedError

    def iterate(self, value: Value, world: World, frame: Frame, node: ast.AST) -> tuple[World, Value]:
        raise NotImplementedError

    def run_generator(self, gen: GenObj, world: World, frame: Frame, node: ast.AST) -> Results:
        raise NotImplementedError

    def dunder(self, atom: Atom, name: str, args: Args, world: World, frame: Frame, node: ast.AST) -> Results | None:
        raise NotImplementedError

    def class_of(self, atom: Atom) -> str | None:
        raise NotImplementedError

    def kind_of(self, atom: Atom) -> str:
        raise NotImplementedError

    def class_attr(self, cls: str, name: str, after: str | None = None) -> tuple[str, Value] | None:
        raise NotImplementedError

    def access(self, atom: Atom, field: str, write: bool, world: World, frame: Frame, node: ast.AST, what: str) -> World:
        raise NotImplementedError

    def touch(self, touch: Touch, world: World, frame: Frame, node: ast.AST) -> World:
        raise NotImplementedError

    def name(self, atom: Atom, node: ast.AST) -> str:
        raise NotImplementedError

    def reaches_state(self, atom: Atom, world: World) -> bool:
        raise NotImplementedError

    def shared_within(self, value: Value, world: World) -> list[Ref]:
        raise NotImplementedError

    def hand_off(self, queue: Ref, given: Value, world: World, line: int) -> World | None:
        raise NotImplementedError

    def queue_items(self, queue: Ref, scope: Scope) -> Value:
        raise NotImplementedError

    def handed_at(self, atom: Atom, world: World) -> int:
        raise NotImplementedError

    def made_here(self, atom: Atom) -> bool:
        raise NotImplementedError

    def fields_made_here(self, value: Value) -> Value:
        raise NotImplementedError

    def swap_out(self, obj: ObjId, name: str, text: str, stored: Value, published_before: frozenset[tuple[ObjId, Scope]], protecting: list[str], world: World) -> World:
        raise NotImplementedError

    def describe_ref(self, atom: Ref) -> str:
        raise NotImplementedError

    def split_mapping(self, source: Value, world: World) -> tuple[Value, Value]:
        raise NotImplementedError

    def container_call(self, atom: Ref, name: str, args: Args, world: World, frame: Frame, node: ast.AST) -> Results:
        raise NotImplementedError

    def load_name(self, name: str, world: World, frame: Frame, node: ast.AST) -> Results:
        raise NotImplementedError

    def eval_many(self, nodes: list[ast.expr], world: World, frame: Frame) -> list[tuple[World, list[Value]]]:
        raise NotImplementedError

    def make_function(self, node: ast.FunctionDef | ast.Lambda, world: World, frame: Frame) -> Results:
        raise NotImplementedError

    def make_lock(self, spec: Spec, args: Args, world: World, node: ast.AST) -> Value:
        raise NotImplementedError

    def own(self, value: Value) -> list[Atom]:
        raise NotImplementedError

    def special(self, atom: Atom, names: tuple[str, ...], args: Args, world: World, frame: Frame, node: ast.AST) -> Results | None:
        raise NotImplementedError

    def operator(self, left: Value, right: Value, names: tuple[str, str], world: World, frame: Frame, node: ast.AST) -> Results:
        raise NotImplementedError

    def truth_of(self, value: Value, world: World, frame: Frame, node: ast.AST) -> list[World]:
        raise NotImplementedError

    def formatted(self, values: list[Value], world: World, frame: Frame, node: ast.AST) -> list[World]:
        raise NotImplementedError

    def run_any(self, values: list[Value], world: World, frame: Frame, node: ast.AST) -> list[World]:
        raise NotImplementedError

    def commit(self, world: World, frame: Frame, node: ast.AST) -> World:
        raise NotImplementedError

    def blocking_wait(self, world: World, frame: Frame, node: ast.AST, doing: str, but: str = "") -> None:
        raise NotImplementedError

    def acquire(self, lock: LockRef, blocking: Value | None, timeout: Value | None, world: World, frame: Frame, node: ast.AST) -> Results:
        raise NotImplementedError

    def release(self, lock: LockRef, world: World, frame: Frame, node: ast.AST, how: str = "") -> World:
        raise NotImplementedError

    def lock_name(self, lock: LockRef) -> str:
        raise NotImplementedError

    def lock_method(self, lock: LockRef, name: str, args: Args, world: World, frame: Frame, node: ast.AST) -> Results:
        raise NotImplementedError

    def not_a_lock(self, expr: ast.expr, others: Sequence[Atom], use: str) -> None:
        raise NotImplementedError

    def enter(self, manager: Value, world: World, frame: Frame, node: ast.withitem) -> list[tuple[World, Value, Atom | None]]:
        raise NotImplementedError

    def exit(self, manager: Atom | None, world: World, frame: Frame, node: ast.AST) -> list[World]:
        raise NotImplementedError

    def exits(self, manager: Atom | None, world: World, frame: Frame, node: ast.AST, raising: bool = False) -> list[tuple[World, bool]]:
        raise NotImplementedError
