"""What the review knows of the objects the code makes, over every path and every call (flow-insensitive).

Each object (the instance, a class, the module, what a site allocates, what a caller passes) has the values ever
stored in its attributes and its items. Which fields are written after construction (so reading them is an access to
shared state) and which locks exist, made where and held how, are kept here too. The review reruns until nothing
here grows, then judges in one last pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from env.race_review.values import NOTHING, ObjId, Scope, Value, stale, unconst

LockKind = Literal["Lock", "RLock", "Semaphore", "BoundedSemaphore", "counting"]
LockScope = Literal["instance", "global", "fresh", "many"]


@dataclass
class LockInfo:
    kind: LockKind
    scope: LockScope  # instance: one per instance (made while constructing it); global: module or class level;
    # fresh: made by a call (no other thread can hold it); many: one site making several (in a loop)
    line: int
    path: str = ""  # where it is kept, for messages ("self._lock")

    @property
    def reentrant(self) -> bool:
        return self.kind == "RLock"

    def protects(self, scope: str) -> bool:
        """Whether holding this lock keeps other threads away from state of ``scope`` ("instance" or "global")."""
        if self.scope in ("fresh", "many") or self.kind == "counting":
            return False
        return self.scope == "global" or scope == "instance"


@dataclass
class Heap:
    fields: dict[ObjId, dict[str, Value]] = field(default_factory=dict)
    elems: dict[ObjId, Value] = field(default_factory=dict)
    kinds: dict[ObjId, str] = field(default_factory=dict)  # "list", "dict", "set", "deque", "tuple", "instance:Name", ...
    nonfinal: dict[tuple[ObjId, str], int] = field(default_factory=dict)  # (object, field) -> a line that rebinds it
    locks: dict[str, LockInfo] = field(default_factory=dict)
    shared: dict[ObjId, Scope] = field(default_factory=dict)  # objects stored into shared state on some path, by some call
    local_values: dict[tuple[str, str], Value] = field(default_factory=dict)  # (function, local) -> all it is ever bound to
    mutated: dict[ObjId, int] = field(default_factory=dict)  # containers changed once shared -> a line that changes it
    bound_at: dict[tuple[ObjId, str], dict[object, int]] = field(default_factory=dict)  # (object, field) -> atom -> first line storing it
    grew: bool = False

    def field(self, obj: ObjId, name: str) -> Value:
        return self.fields.get(obj, {}).get(name, NOTHING)

    def has_field(self, obj: ObjId, name: str) -> bool:
        return name in self.fields.get(obj, {})

    def store(self, obj: ObjId, name: str, value: Value) -> None:
        value = stale(value) if name.startswith("#len") else unconst(stale(value))  # (a caller can change what it holds)
        own = self.fields.setdefault(obj, {})
        old = own.get(name)
        new = value if old is None else old | value
        if old is None or new != old:
            own[name] = new
            self.grew = True

    def items(self, obj: ObjId) -> Value:
        return self.elems.get(obj, NOTHING)

    def store_item(self, obj: ObjId, value: Value) -> None:
        value = unconst(stale(value))
        old = self.elems.get(obj, NOTHING)
        if not value <= old:
            self.elems[obj] = old | value
            self.grew = True

    def values(self, obj: ObjId) -> Value:
        """What subscripting ``obj`` gives: a dict's values (its items are its keys), else its items."""
        own = self.fields.get(obj, {})
        if self.kinds.get(obj) == "dict":
            return own.get("#values", NOTHING) | (self.items(obj) if "#mixed" in own else NOTHING)
        return self.items(obj)

    def store_value(self, obj: ObjId, value: Value) -> None:
        """``obj[key] = value``: a dict's value, another container's item."""
        if self.kinds.get(obj) == "dict":
            self.store(obj, "#values", value)
        else:
            self.store_item(obj, value)

    def mixed(self, obj: ObjId) -> None:
        """A dict filled from what the review cannot split into keys and values: any item may be a value."""
        self.store(obj, "#mixed", NOTHING)

    def mark_nonfinal(self, obj: ObjId, name: str, line: int) -> None:
        if (obj, name) not in self.nonfinal:
            self.nonfinal[(obj, name)] = line
            self.grew = True

    def mark_shared(self, obj: ObjId, scope: Scope) -> None:
        seen = self.shared.get(obj)
        if seen is None or (seen == "instance" and scope == "global"):
            self.shared[obj] = scope
            self.grew = True

    def bind_local(self, function: str, name: str, value: Value) -> None:
        """A local of ``function`` bound to ``value`` (what a closure made there may read whenever it runs)."""
        value = stale(value)
        old = self.local_values.get((function, name), NOTHING)
        if not value <= old:
            self.local_values[(function, name)] = old | value
            self.grew = True

    def mark_mutated(self, obj: ObjId, line: int) -> None:
        if obj not in self.mutated:
            self.mutated[obj] = line
            self.grew = True

    def kind(self, obj: ObjId) -> str:
        return self.kinds.get(obj, "")

    def set_kind(self, obj: ObjId, kind: str) -> None:
        if obj not in self.kinds:
            self.kinds[obj] = kind
            self.grew = True

    def lock(self, key: str, kind: LockKind, scope: LockScope, line: int) -> None:
        seen = self.locks.get(key)
        if seen is None:
            self.locks[key] = LockInfo(kind, scope, line)
            self.grew = True
            return
        if seen.kind != kind and seen.kind != "counting":  # one site making two kinds (Semaphore(1 if x else 4))
            seen.kind = "counting"
            self.grew = True
        elif seen.scope != scope:
            # one site seen making locks of two scopes: the weaker one decides
            order = ("global", "instance", "fresh", "many")
            weaker = max(seen.scope, scope, key=order.index)
            if weaker != seen.scope:
                seen.scope = weaker
                self.grew = True

    def name_lock(self, key: str, path: str) -> None:
        info = self.locks.get(key)
        if info is not None and not info.path:
            info.path = path
