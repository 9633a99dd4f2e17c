"""What the review computes with: abstract values, one frozen set of atoms each.

An atom says what a name or an expression may hold at run time: a plain immutable value (``Imm``), a reference to
an object (``Ref``: the instance under review, a class, a container the code made, a caller's argument), a lock, a
function, a bound method, the result of a try-acquire, a module or a library callable. A value is every atom it may
be; the review reasons about all of them at once, so a path it cannot tell apart from another is judged with it.

A ``Ref`` carries the *scope* through which it was reached: ``"instance"`` (through the instance's own state) or
``"global"`` (through a class attribute or a module global). An object reached through shared state is shared: every
read or write of it needs a lock. An object the code made itself (or a caller handed in) stays private until the code
stores it into shared state (``Locks.published``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

Scope = Literal["instance", "global"]
# An object: ("self",) the instance under review, ("class", name), ("module",), ("site", node key) something the
# code allocates there, ("param", function key, name) an argument a caller passes, ("ext",) anything else outside.
ObjId = tuple[str, ...]

SELF: ObjId = ("self",)
PEER: ObjId = ("peer",)  # the instance as kept somewhere: read back, it may be another instance of the class
MODULE: ObjId = ("module",)
EXT: ObjId = ("ext",)


class _Unknown:
    """The constant of an immutable value nobody wrote down (``a + 1``)."""

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()


@dataclass(frozen=True)
class Imm:
    """An immutable value (number, string, None, tuple of such ...); ``const`` when the source spells it."""

    const: object = UNKNOWN


@dataclass(frozen=True)
class Ref:
    obj: ObjId
    scope: Scope | None = None  # reached through shared state of this scope (None: as far as the path shows, private)
    path: str = ""  # how it was reached, for messages: "self._state"
    fresh: bool = False  # made by this call (or handed in by its caller): private until this call publishes it


@dataclass(frozen=True)
class LockRef:
    key: str  # one lock: the place it is made (see Heap.locks)
    cond: bool = False  # a Condition on that lock
    path: str = ""


@dataclass(frozen=True)
class Func:
    """A function of the module (def or lambda), with what it closed over and its defaults."""

    key: str
    closure: tuple[tuple[str, Value], ...] = ()
    parent: str = ""  # the function whose call made it (its locals may be rebound after: closures read them late)
    defaults: tuple[Value, ...] = ()
    kwdefaults: tuple[tuple[str, Value], ...] = ()
    kind: Literal["function", "static", "classmethod", "contextmanager"] = "function"


@dataclass(frozen=True)
class Bound:
    """``recv.name`` as a value: a method of the module's own classes (``func``), of a lock, a container or a string."""

    recv: Atom
    name: str
    func: Func | None = None


@dataclass(frozen=True)
class Acquired:
    """What ``lock.acquire(...)`` returned when it may fail: true exactly on the paths where it took the lock."""

    site: str


@dataclass(frozen=True)
class ModuleRef:
    name: str


@dataclass(frozen=True)
class Library:
    """A callable of the standard library or the builtins, by its dotted name ("len", "threading.Lock")."""

    name: str
    bound: tuple[Value, ...] = ()  # arguments already given (``functools.wraps(fn)``, ``prop.setter``)


@dataclass(frozen=True)
class ClassRef:
    name: str


@dataclass(frozen=True)
class Prop:
    fget: Func | None
    fset: Func | None = None


@dataclass(frozen=True)
class SuperRef:
    cls: str  # the class whose method said super()
    recv: Atom


@dataclass(frozen=True)
class Packed:
    """``*args`` or ``**kwargs`` as passed on: the exact items when known, else the union of what they may hold."""

    items: tuple[Value, ...] | None
    rest: Value = frozenset()
    names: tuple[str, ...] = ()  # for **kwargs: the keys of ``items``


@dataclass(frozen=True)
class LockCM:
    """A context manager that holds ``lock`` while its block runs (a contextlib.contextmanager of the known shapes);
    what its ``yield`` hands the block is evaluated once the lock is held, in ``func``'s scope with ``env``. ``more``:
    the locks it takes after ``lock``, in order (``with a: with b: yield``), let go in the reverse order."""

    lock: LockRef
    func: Func | None = None
    env: tuple[tuple[str, Value], ...] = ()
    more: tuple[LockRef, ...] = ()

    @property
    def chain(self) -> tuple[LockRef, ...]:
        return (self.lock, *self.more)


@dataclass(frozen=True)
class GenObj:
    """A generator the code made by calling ``func``: its body runs when it is iterated, with ``env`` as its locals."""

    func: Func
    env: tuple[tuple[str, Value], ...]


@dataclass(frozen=True)
class NullCM:
    """A context manager that holds nothing (contextlib.nullcontext), or swallows exceptions (contextlib.suppress)."""

    swallows: bool = False


Atom = Imm | Ref | LockRef | Func | Bound | Acquired | ModuleRef | Library | ClassRef | Prop | SuperRef | Packed | LockCM | NullCM | GenObj
Value = frozenset[Atom]

NOTHING: Value = frozenset()
PLAIN: Value = frozenset({Imm()})
NONE: Value = frozenset({Imm(None)})


def const(value: object) -> Value:
    """The value of a literal: its constant when it is a number, a string or None, else a plain immutable value."""
    if value is None or isinstance(value, bool | int | float | str):
        return frozenset({Imm(value)})
    return PLAIN


def plain(value: Value) -> bool:
    """Only immutable values (nothing anyone could change in place)."""
    return all(isinstance(atom, Imm) for atom in value)


def truthy(value: Value) -> bool | None:
    """True or False when every atom says so (a literal), else None."""
    seen = set()
    for atom in value:
        if not isinstance(atom, Imm) or atom.const is UNKNOWN:
            return None
        seen.add(bool(atom.const))
    return seen.pop() if len(seen) == 1 else None


def number(value: Value) -> float | None:
    """The number ``value`` holds, when it is one literal number (True and False count as 1 and 0)."""
    if len(value) != 1:
        return None
    (atom,) = value
    if isinstance(atom, Imm) and isinstance(atom.const, int | float):
        return float(atom.const)
    return None


def unconst(value: Value) -> Value:
    """``value`` as code outside may have changed it: a literal stored in an attribute or a global is just a plain
    value when read back (``thread_safe = True`` can be set to False by any caller)."""
    return frozenset(Imm() if isinstance(atom, Imm) else atom for atom in value)


def refs(value: Value) -> list[Ref]:
    return [atom for atom in value if isinstance(atom, Ref)]


def new(obj: ObjId, path: str = "") -> Ref:
    """An object this call makes (or is handed): private until the call stores it into shared state."""
    return Ref(obj, None, path, True)


def _deep(atom: Atom, change: Callable[[Ref], Ref]) -> Atom:
    if isinstance(atom, Ref):
        return change(atom) if atom.obj != SELF else atom
    if isinstance(atom, Bound):
        return Bound(_deep(atom.recv, change), atom.name, atom.func)
    if isinstance(atom, Func) and atom.closure:
        closure = tuple((n, frozenset(_deep(a, change) for a in v)) for n, v in atom.closure)
        return Func(atom.key, closure, atom.parent, atom.defaults, atom.kwdefaults, atom.kind)
    if isinstance(atom, GenObj):
        return GenObj(_deep(atom.func, change), tuple((n, frozenset(_deep(a, change) for a in v)) for n, v in atom.env))  # type: ignore[arg-type]
    if isinstance(atom, Packed):
        items = tuple(frozenset(_deep(a, change) for a in v) for v in atom.items) if atom.items is not None else None
        return Packed(items, frozenset(_deep(a, change) for a in atom.rest), atom.names)
    return atom


def deeper(path: str, step: str) -> str:
    """``path`` one attribute or item further, for messages; kept short (and finite: a loop reading deeper and
    deeper must settle)."""
    if not path:
        return ""
    return path if path.count("[") + path.count(".") >= 3 else path + step


def with_scope(value: Value, scope: Scope, path: str) -> Value:
    """``value`` as read out of shared state of ``scope``: every object it holds or reaches is shared from now on."""
    return frozenset(_deep(atom, lambda r: Ref(r.obj, r.scope or scope, r.path or path)) for atom in value)


def stale(value: Value) -> Value:
    """``value`` as kept in an object (and read back, maybe by another call): nothing in it is this call's own, and
    what a try-acquire returned says nothing any more about a lock held then."""
    if not any(isinstance(a, Ref | Bound | Func | GenObj | Packed | Acquired) for a in value):
        return value  # (most values: nothing to change)
    return frozenset(Imm() if isinstance(atom, Acquired) else _deep(atom, lambda r: Ref(r.obj, r.scope, r.path)) for atom in value)


def peers(value: Value) -> Value:
    """``value`` as stored into shared state: the instance in it, read back from there, may be another instance."""
    if not any(isinstance(a, Ref) and a.obj == SELF for a in value):
        return value
    return frozenset(Ref(PEER, "instance", "another instance") if isinstance(a, Ref) and a.obj == SELF else a for a in value)


def describe(atom: Atom) -> str:
    """A few words for messages: what ``atom`` is."""
    if isinstance(atom, Ref):
        if atom.obj[0] == "param":
            return f"the argument `{atom.obj[2]}`"
        if atom.path:
            return f"`{atom.path}`"
        return "an object the code made" if atom.obj[0] == "site" else "an object from outside"
    if isinstance(atom, Imm):
        return "a plain value" if atom.const is UNKNOWN else f"`{atom.const!r}`"
    if isinstance(atom, LockRef):
        return f"the lock `{atom.path}`" if atom.path else "a lock"
    if isinstance(atom, Func | Bound):
        return "a function"
    return "a value the review cannot follow"
