"""Objects that pass from one thread to another: shared state swapped out under the lock, and queue hand-offs.

Swapped out: ``jobs, self._jobs = self._jobs, []``.

A call that reads a field into a local and rebinds the field to another object, both under one acquisition of a lock
that guards it, holds the only reference to the old object once the field no longer does, provided nothing else ever
keeps one: the old object is one the module made (no caller holds it), stored into that one field and nowhere else
(no other field, container, closure's local or bound method, on any path of any call), and the call read it in the
same acquisition (an older read is a split update, judged by ``touch``). Then the old object is this call's own, like
one it made: it may use it and hand it to its caller without the lock. The review's objects are allocation sites, so
the swapped-out object gets a site of its own (``...@owned``) with what the site holds, and the site's other objects
(the one now in the field) stay shared.

Handed off: ``self._q.put({"name": name})`` then, in another thread, ``job = self._q.get()``. An object the putting
call made and had stored nowhere shared goes to the one thread that gets it: that thread owns it (no lock needed),
and the putting call may not touch it, store it or return it any more. A queue that is ever given anything else (a
caller's object, shared state, a function, an object put twice) is a shared queue: what it hands out is shared.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass

from env.race_review.engine import EngineBase
from env.race_review.values import Atom, Imm, ObjId, Ref, Scope, Value, new, with_scope
from env.race_review.world import World


def mentions(value: object, obj: ObjId) -> bool:
    """Whether ``value`` (an abstract value, an atom or anything an atom holds) reaches a ``Ref`` to ``obj``."""
    if isinstance(value, Ref):
        return value.obj == obj
    if isinstance(value, frozenset | tuple | list):
        return any(mentions(item, obj) for item in value)
    if is_dataclass(value) and not isinstance(value, type):
        return any(mentions(getattr(value, f.name), obj) for f in fields(value))
    return False


class OwnershipMixin(EngineBase):
    def swap_out(self, obj: ObjId, name: str, text: str, stored: Value, published_before: frozenset[tuple[ObjId, Scope]], protecting: list[str], world: World) -> World:
        """``text`` (field ``name`` of ``obj``) rebound under ``protecting``: the locals holding its old object now own it."""
        if not protecting or obj[0] not in ("self", "site", "class", "module"):
            return world
        now = {key: world.locks.epoch(key) for key in protecting}
        # every access of the field by this call so far was made in this acquisition of each lock guarding it
        for touch in world.locks.touched:
            if touch.what == f"`{text}`" and any(dict(touch.sig).get(key, "") != epoch for key, epoch in now.items()):
                return world
        # an object this call made and had not yet stored anywhere shared is not one the field held before (though the
        # review's site for both is one)
        earlier = {made for made, _ in published_before}
        kept = frozenset(atom for atom in stored if not (isinstance(atom, Ref) and atom.fresh and atom.obj[0] == "site" and atom.obj not in earlier))
        owned: dict[ObjId, ObjId] = {}
        for atom in self.heap.field(obj, name):
            if isinstance(atom, Ref) and atom.obj[0] == "site" and not mentions(kept, atom.obj) and self.kept_only_in(atom.obj, obj, name):
                owned[atom.obj] = self.owned_copy(atom.obj)
        if not owned:
            return world
        env = []
        for local, value in world.env:
            env.append((local, frozenset(self.owned_atom(atom, owned, text) for atom in value)))
        return world.with_env(tuple(env))

    def owned_atom(self, atom: Atom, owned: dict[ObjId, ObjId], text: str) -> Atom:
        if isinstance(atom, Ref) and atom.obj in owned and atom.scope is not None and atom.path == text:
            return new(owned[atom.obj], atom.path)
        return atom

    def kept_only_in(self, target: ObjId, obj: ObjId, name: str) -> bool:
        """``target`` is kept by the field ``name`` of ``obj`` and by nothing else the review has seen."""
        for holder, own in self.heap.fields.items():
            for field_name, value in own.items():
                if (holder, field_name) != (obj, name) and mentions(value, target):
                    return False
        if any(mentions(value, target) for value in self.heap.elems.values()):
            return False
        return not any(mentions(value, target) for value in self.heap.local_values.values())

    def owned_copy(self, obj: ObjId) -> ObjId:
        """The site for objects of ``obj``'s site once swapped out: the same kind, holding what the site holds."""
        if obj[-1].endswith("@owned"):
            return obj  # (one site for every object swapped out of it: the walk must settle)
        copy = (*obj[:-1], f"{obj[-1]}@owned")
        kind = self.heap.kind(obj)
        if kind:
            self.heap.set_kind(copy, kind)
        self.heap.store_item(copy, self.heap.items(obj))
        for field_name, value in self.heap.fields.get(obj, {}).items():
            self.heap.store(copy, field_name, value)
        return copy

    def hand_off(self, queue: Ref, given: Value, world: World, line: int) -> World | None:
        """``queue.put(given)``: the world after handing ``given`` to the thread that gets it, or None when it cannot
        be handed (then the queue is a shared one)."""
        earlier = {made for made, _ in world.locks.published} | {made for made, _ in world.locks.handed}
        if not given or not all(isinstance(atom, Imm) or (isinstance(atom, Ref) and atom.fresh and atom.obj[0] == "site" and atom.obj not in earlier) for atom in given):
            return None
        handed: set[ObjId] = set()
        todo: list[Atom] = list(given)
        while todo:
            atom = todo.pop()
            if isinstance(atom, Imm) or (isinstance(atom, Ref) and (atom.obj in handed or (not atom.fresh and self.scope_of(atom, world) is not None))):
                continue  # (what is shared stays shared: the thread that gets it takes the lock for it)
            if isinstance(atom, Ref) and atom.obj[0] in ("param", "ext"):
                continue  # held inside: a caller's object stays the caller's (taken as given)
            if not isinstance(atom, Ref) or atom.obj[0] != "site" or atom.obj in earlier:
                return None  # a caller's object, a function, what this call already stored somewhere shared
            handed.add(atom.obj)
            todo += list(self.heap.items(atom.obj))
            for stored in self.heap.fields.get(atom.obj, {}).values():
                todo += list(stored)
        self.heap.store_item(queue.obj, given)
        locks = world.locks
        return world.with_locks(locks._replace(
            handed=locks.handed | {(obj, line) for obj in handed},
            published=locks.published | {(obj, "instance") for obj in handed},  # (returned or stored, it is shared)
        ))

    def queue_items(self, queue: Ref, scope: Scope) -> Value:
        """What ``queue.get()`` gives: objects handed off are the getting call's own; a shared queue's items are shared."""
        items = self.heap.items(queue.obj)
        if "#shared" in self.heap.fields.get(queue.obj, {}):
            return with_scope(items, scope, queue.path)
        return frozenset(new(self.owned_copy(atom.obj), atom.path) if isinstance(atom, Ref) and atom.obj[0] == "site" else atom for atom in items)

    def handed_at(self, atom: Atom, world: World) -> int:
        """The line where this call put ``atom``, its own object, into a queue (0: it did not)."""
        if isinstance(atom, Ref) and atom.fresh:
            for obj, line in world.locks.handed:
                if obj == atom.obj:
                    return line
        return 0

    def made_here(self, atom: Atom) -> bool:
        """An object this call made (not one handed to it: a caller's, one swapped out or taken from a queue)."""
        return isinstance(atom, Ref) and atom.fresh and atom.obj[0] == "site" and not atom.obj[-1].endswith("@owned")

    def fields_made_here(self, value: Value) -> Value:
        """What a field of an object this call made and has not yet shared holds: what this call stored there. The
        objects among it that the review saw stored private are this call's own too (another instance made at the
        same place may be shared, this one is not)."""
        return frozenset(
            new(atom.obj, atom.path) if isinstance(atom, Ref) and atom.scope is None and not atom.fresh and atom.obj[0] == "site" else atom
            for atom in value
        )
