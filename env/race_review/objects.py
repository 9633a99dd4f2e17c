"""Attributes, items and iteration, and the one place every access to shared state is judged (``access``).

An access is judged on each path by itself: some lock that protects the state must be held there (an instance's
lock guards that instance's state; a class or module lock is needed for state every instance shares), the same lock
on every access to the same state (checked once the walk is over), and within one call every access that belongs to
one update in one acquisition of it (a read, then a write under a later acquisition, is a lost update).
"""

from __future__ import annotations

import ast
from dataclasses import replace

from env.race_review.engine import Args, EngineBase, Frame, Results
from env.race_review.findings import CannotFollow
from env.race_review.values import (
    EXT,
    NONE,
    NOTHING,
    PEER,
    PLAIN,
    SELF,
    Atom,
    Bound,
    ClassRef,
    Func,
    GenObj,
    Imm,
    Library,
    LockRef,
    ModuleRef,
    ObjId,
    Packed,
    Prop,
    Ref,
    Scope,
    SuperRef,
    Value,
    deeper,
    new,
    peers,
    unconst,
    with_scope,
)
from env.race_review.world import Touch, World, join

LOCK_METHODS = frozenset({"acquire", "release", "locked", "wait", "wait_for", "notify", "notify_all", "notifyAll", "__enter__", "__exit__"})
READS = frozenset(
    "get keys values items copy count index __contains__ __len__ __getitem__ __iter__ isdisjoint issubset issuperset "
    "union intersection difference symmetric_difference most_common".split()
)
WRITES = frozenset(
    "append extend insert pop popleft popitem appendleft extendleft remove clear update setdefault add discard sort "
    "reverse rotate __setitem__ __delitem__ intersection_update difference_update symmetric_difference_update "
    "move_to_end subtract".split()
)
CONTAINERS = frozenset({"list", "dict", "set", "deque", "frozenset", "tuple", "copy"})
MUTABLE = frozenset({"list", "dict", "set", "deque", "copy", "counter"})
QUIET = frozenset({"event", "local", "outside", "object", "exception"})  # objects whose use is no access to our state


class ObjectsMixin(EngineBase):
    # -- shared or not -------------------------------------------------------------------------

    def scope_of(self, atom: Atom, world: World) -> Scope | None:
        if isinstance(atom, Ref):
            if atom.obj == SELF:
                return None if SELF in self.under_construction() else "instance"
            if atom.scope is not None:
                return atom.scope
            if atom.fresh:  # this call's own object: shared once this call published it
                for obj, scope in world.locks.published:
                    if obj == atom.obj:
                        return scope
                return None
            if atom.obj[0] in ("class", "module"):
                return "global"
            return self.heap.shared.get(atom.obj)  # kept somewhere: shared if any call ever published it
        if isinstance(atom, ClassRef):
            return None if self.module_level else "global"
        return None

    def under_construction(self) -> list[ObjId]:
        return self.building

    def kind_of(self, atom: Atom) -> str:
        if not isinstance(atom, Ref):
            return ""
        if atom.obj == SELF:
            return f"instance:{self.cls}"
        if atom.obj[0] in ("param", "ext"):
            return "ext"
        return self.heap.kind(atom.obj)

    def publish(self, value: Value, scope: Scope | None, world: World, node: ast.AST) -> World:
        """``value`` stored into shared state of ``scope``: the call's own objects in it, and theirs, are shared now."""
        if scope is None:
            return world
        if SELF in self.building and not self.self_published and any(isinstance(a, Ref) and a.obj == SELF for a in value):
            self.self_published = getattr(node, "lineno", 0)  # other threads can reach the instance from now on
        published = set(world.locks.published)
        todo = list(value)
        seen: set[Atom] = set()
        while todo:
            atom = todo.pop()
            if atom in seen:
                continue
            seen.add(atom)
            if isinstance(atom, Func | Bound | GenObj) and self.reaches_state(atom, world):
                raise CannotFollow(node, "a function or generator kept in shared state that reaches shared state: it can run later, without the lock")
            if self.handed_at(atom, world):
                self.report(node, f"`{self.program.text(node)}` keeps an object this call put into a queue at line {self.handed_at(atom, world)}: the thread that gets it may be using it", "escape")
            if isinstance(atom, Ref) and atom.obj != SELF and atom.scope is None and atom.obj[0] in ("site", "param"):
                self.heap.mark_shared(atom.obj, scope)
                if (atom.obj, scope) not in published:
                    published.add((atom.obj, scope))
                    if self.heap.kind(atom.obj) != "queue" or "#shared" in self.heap.fields.get(atom.obj, {}):
                        todo += list(self.heap.items(atom.obj))  # (what a queue hands off is the getter's, not shared)
                    for stored in self.heap.fields.get(atom.obj, {}).values():
                        todo += list(stored)
        return world.with_locks(world.locks._replace(published=frozenset(published)))

    def reaches_state(self, atom: Atom, world: World) -> bool:
        """A function value that can reach objects (the state, the call's own objects, a lock) when it runs."""
        if isinstance(atom, Bound):
            return not isinstance(atom.recv, Imm | Library | ModuleRef | ClassRef)
        if isinstance(atom, Func):
            if self.program.functions[atom.key].nonlocals:
                return True  # it rebinds its maker's locals: shared, they are state no lock guards
            return any(
                isinstance(a, Ref | LockRef | GenObj | Packed) or (isinstance(a, Func | Bound) and self.reaches_state(a, world))
                for _, value in atom.closure for a in value
            )
        return isinstance(atom, GenObj)

    # -- the judgment ---------------------------------------------------------------------------

    def access(self, atom: Atom, field: str, write: bool, world: World, frame: Frame, node: ast.AST, what: str) -> World:
        """A read or write of ``field`` ("[]": the items) of the object ``atom``, judged on this path."""
        handed = self.handed_at(atom, world)
        if handed:
            verb = "writes" if write else "reads"
            self.report(node, f"{self.who(frame)} {verb} {what} after putting it into a queue at line {handed}: the thread that gets it may be using it", "escape")
            return world
        scope = self.scope_of(atom, world)
        if scope is None or self.kind_of(atom) in QUIET:
            return world
        line = getattr(node, "lineno", 0)
        if isinstance(atom, Ref) and atom.obj[0] in ("site", "param", "ext"):
            # what nothing of this module changes once it is shared can be read without a lock (an object from
            # outside, what a caller passed in, a container filled once): only our own writes make reads races
            if write:
                self.heap.mark_mutated(atom.obj if field == "[]" else (*atom.obj, field), line)
            elif (atom.obj if field == "[]" else (*atom.obj, field)) not in self.heap.mutated:
                return world
        held = [key for key, count in world.locks.held if count > 0]
        protecting = [key for key in held if self.heap.locks[key].protects(scope)]
        verb = "writes" if write else "reads"
        if not protecting:
            if world.locks.failed_at and not held:
                self.report(world.locks.failed_at, f"{world.locks.gone}, and on that path {self.who(frame)} {verb} {what} at line {line} without holding it", "lock")
            else:
                self.report(node, f"{self.who(frame)} {verb} {what} {self.unheld(world, held, scope)}")
            return world
        obj = atom.obj if isinstance(atom, Ref) else ("class", atom.name) if isinstance(atom, ClassRef) else EXT
        if self.reporting:
            self.locksets.setdefault((obj, field), []).append((frozenset(protecting), line, what))
        touch = Touch(frozenset((key, world.locks.epoch(key)) for key in protecting), write, line, what)
        return self.touch(touch, world, frame, node, pending=bool(self.deferring))

    def touch(self, touch: Touch, world: World, frame: Frame, node: ast.AST, pending: bool = False) -> World:
        """Record an access of this call; one that belongs to an update begun under an earlier acquisition of the
        same lock is a race, reported where the lock is taken again (or waited on) between the two. (``pending``: a
        predicate loop's round, kept apart until the loop is left; checked against the round so far.)"""
        now = dict(touch.sig)
        earlier_ones = world.locks.pending if pending else world.locks.touched
        for earlier in sorted(earlier_ones, key=lambda t: (t.what != touch.what, t.line, t.what, t.write, sorted(t.sig))):
            if not (touch.write or earlier.write) or touch.what in self.write_only or earlier.what in self.write_only:
                continue  # (a field nothing reads: its updates are never seen half done)
            # the same lock held at both, in two epochs: let go (or waited on) in between (state under another lock,
            # or under a lock held all along, is not split by it)
            split = sorted(k for k, e in earlier.sig if k in now and now[k] != e and not self.round_again(earlier, k, now[k], world))
            if not split:
                continue
            lock = split[0]
            kind, again = self.epoch_start(now[lock])
            if kind == "wait" and earlier.write:
                continue  # what it wrote before waiting was one step; a blocking call's next step comes after the wait
            verb, before = ("write" if touch.write else "read"), ("write" if earlier.write else "read")
            label = self.heap.locks[lock].path or "the lock"
            between = (
                f"waits on `{label}` at line {again} (the lock is let go while it waits)" if kind == "wait"
                else f"takes `{label}` again at line {again}"
            )
            self.report(
                again or node,
                f"{self.who(frame)} {between} between its {before} of {earlier.what} at line {earlier.line} and its {verb} of "
                f"{touch.what} at line {touch.line}: another thread can run in between, so the call is two steps, not one (another "
                f"thread can see the state halfway, or change it so that an update is lost)",
                "atomicity",
            )
            break
        if pending:
            return world.with_locks(world.locks._replace(pending=world.locks.pending | {touch}))
        return world.with_locks(world.locks._replace(touched=world.locks.touched | {touch}))

    def round_again(self, earlier: Touch, lock: str, epoch: str, world: World) -> bool:
        """``earlier``, a read under an earlier round of a polling loop of the method walked (retries.py), whose rounds
        that went round again wrote nothing under that lock: the rounds are one step."""
        before = dict(earlier.sig)[lock]
        if earlier.write or before != "old:" + epoch or not epoch.startswith("take:"):
            return False
        site = epoch.split(":", 2)[2]
        if site not in self.retry_sites:  # (as reached: a helper's loop, its caller may run again on other inputs)
            return False
        return not any(t.write and (lock, before) in t.sig for t in world.locks.touched | world.locks.pending)

    def epoch_start(self, epoch: str) -> tuple[str, int]:
        kind, _, rest = epoch.partition(":")
        line = rest.partition(":")[0]
        return kind, int(line) if line.isdigit() else 0

    def unheld(self, world: World, held: list[str], scope: str) -> str:
        if held:
            info = self.heap.locks[held[0]]
            name = f"`{info.path}`" if info.path else f"the lock made at line {info.line}"
            if info.scope == "fresh":
                return f"holding only {name}, made by this call: no other thread can ever hold it, so it keeps none away"
            if info.scope == "many":
                return f"holding {name}, one of several locks made at line {info.line}: the review cannot tell which"
            if info.kind == "counting":
                return f"holding only {name}, a semaphore that lets more than one thread in"
            return f"holding only {name}, the lock of one instance, while the state is shared by every instance"
        return f"without holding a lock ({world.locks.gone or 'no lock is taken on this path'})"

    def read(self, value: Value, world: World, frame: Frame, node: ast.AST, what: str = "", write: bool = False) -> World:
        """Code that reads (or changes) every shared object in ``value`` as a whole: a builtin given it, a comparison."""
        for atom in sorted(value, key=repr):
            if isinstance(atom, Ref) and atom.obj != SELF and self.kind_of(atom) not in ("tuple", "frozenset"):
                world = self.access(atom, "[]", write, world, frame, node, what or self.name(atom, node))
        return world

    def name(self, atom: Atom, node: ast.AST) -> str:
        if not isinstance(node, ast.Name | ast.Attribute | ast.Subscript | ast.Call):
            path = atom.path if isinstance(atom, Ref) else ""
            return f"`{path}`" if path else f"a value `{self.program.text(node)}` holds"
        text = f"`{self.program.text(node)}`"
        if isinstance(atom, Ref) and atom.path and atom.path != self.program.text(node):
            return f"{text} (which holds `{atom.path}`)"
        return text

    # -- classes ---------------------------------------------------------------------------------

    def class_attr(self, cls: str, name: str, after: str | None = None) -> tuple[str, Value] | None:
        """The class attribute ``name`` as ``cls``'s instances see it (after ``after`` in the chain, for super())."""
        chain = self.program.mro(cls)
        if after is not None:
            chain = chain[chain.index(after) + 1 :]
        for owner in chain:
            if self.heap.has_field(("class", owner), name):
                return owner, self.heap.field(("class", owner), name)
        return None

    def class_of(self, atom: Atom) -> str | None:
        kind = self.kind_of(atom)
        return kind.partition(":")[2] if kind.startswith("instance:") else None

    # -- attributes -------------------------------------------------------------------------------

    def load_attr(self, atom: Atom, name: str, world: World, frame: Frame, node: ast.AST) -> Results:
        self.check_peer(atom, name, node)
        cls = self.class_of(atom)
        if cls is not None:
            return self.instance_attr(atom, cls, name, world, frame, node)
        if isinstance(atom, ClassRef):
            return self.class_value(atom, name, world, frame, node)
        if isinstance(atom, SuperRef):
            found = self.class_attr(atom.cls, name, after=atom.cls) if atom.cls in self.program.classes else None
            if found is None:
                if name == "__init__":
                    return [(world, frozenset({Library("object.__init__")}))]
                raise CannotFollow(node, f"`super().{name}`: no class of this module before `{atom.cls}` defines it")
            return self.bind(atom.recv, found[0], name, found[1], world, frame, node)
        if isinstance(atom, ModuleRef):
            if name.startswith("_"):
                raise CannotFollow(node, f"`{atom.name}.{name}`, a private name of the module `{atom.name}`")
            return [(world, frozenset({Library(f"{atom.name}.{name}")}))]
        if isinstance(atom, LockRef):
            if name not in LOCK_METHODS:
                raise CannotFollow(node, f"`{self.program.text(node)}`: of a lock it follows only acquire, release, locked, wait, wait_for and notify")
            return [(world, frozenset({Bound(atom, name)}))]
        if isinstance(atom, Prop) and name in ("setter", "getter", "deleter"):
            return [(world, frozenset({Library(f"property.{name}", (frozenset({atom}),))}))]
        if name in ("__name__", "__doc__", "__qualname__", "__module__") and isinstance(atom, Imm | Library | Func | Bound | ClassRef):
            return [(world, PLAIN)]
        if name.startswith("__") and not isinstance(atom, Ref):
            raise CannotFollow(node, f"`{self.program.text(node)}`: a special attribute")
        if isinstance(atom, Library):  # a name inside a module's name (datetime.datetime.now): the library says what it is
            return [(world, frozenset({Library(f"{atom.name}.{name}")}))]
        if isinstance(atom, Imm):
            return [(world, frozenset({Bound(atom, name)}))]
        kind = self.kind_of(atom)
        if isinstance(atom, Ref) and kind in ("ext", "outside", "object", "exception"):
            if kind == "ext":
                world = self.access(atom, name, False, world, frame, node, f"`{self.program.text(node)}`")
                scope = self.scope_of(atom, world)
                held = self.heap.field(atom.obj, name) | {Ref(EXT, path=deeper(atom.path, f".{name}"))}
                self.raised(world, node)
                return [(world, with_scope(held, scope, "") if scope else held)]
            return [(world, frozenset({new(EXT)}))]  # a thread's name, an exception's args: outside our state
        if isinstance(atom, Ref) and kind == "local":
            return [(world, self.heap.field(atom.obj, name))]
        if isinstance(atom, Ref) and kind == "tuple" and self.heap.has_field(atom.obj, name):
            scope = self.scope_of(atom, world)  # a NamedTuple's field
            found_value = self.heap.field(atom.obj, name)
            return [(world, with_scope(found_value, scope, atom.path) if scope else found_value)]
        if isinstance(atom, Ref) and (kind in CONTAINERS or kind in ("counter", "event", "queue")):
            if name.startswith("__") and name not in READS | WRITES:
                raise CannotFollow(node, f"`{self.program.text(node)}`")
            return [(world, frozenset({Bound(atom, name)}))]
        raise CannotFollow(node, f"`{self.program.text(node)}`: an attribute of {self.program.text(node.value) if isinstance(node, ast.Attribute) else 'a value'} it cannot follow")

    def check_peer(self, atom: Atom, name: str, node: ast.AST) -> None:
        """State of what may be another instance of the class (one kept in shared state, or an argument) is guarded
        by that instance's lock, which the review does not follow."""
        if not isinstance(atom, Ref):
            return
        peer = atom.obj == PEER
        argument = atom.obj[0] in ("param", "ext") and self.heap.has_field(SELF, name) and not name.startswith("__")
        if peer or argument:
            what = "another instance of the class, kept in shared state" if peer else "an argument that may be another instance of the class"
            raise CannotFollow(node, f"`{self.program.text(node)}`: the state of {what}; its own lock guards it, and the review follows only this instance's")

    def instance_attr(self, atom: Atom, cls: str, name: str, world: World, frame: Frame, node: ast.AST) -> Results:
        assert isinstance(atom, Ref)
        if name == "__class__":
            return [(world, frozenset({ClassRef(cls)}))]
        found = self.class_attr(cls, name)
        own = self.heap.has_field(atom.obj, name)
        if found is not None and not own:
            return self.bind(atom, found[0], name, found[1], world, frame, node)
        if name.startswith("__") and name.endswith("__"):
            raise CannotFollow(node, f"`{self.program.text(node)}`: a special attribute")
        scope = self.scope_of(atom, world)
        own_value = self.heap.field(atom.obj, name)
        if scope is None and self.made_here(atom):
            own_value = self.fields_made_here(own_value)
        value = own_value | (found[1] if found is not None else NOTHING)
        if (atom.obj, name) in self.heap.nonfinal and atom.obj == SELF and any(isinstance(a, LockRef) for a in value):
            rebound = self.heap.nonfinal[(atom.obj, name)]  # the lock itself replaced: that is what to report
            self.report(rebound, f"`self.{name}` is rebound here after `__init__`: a thread holding the old lock and one holding "
                        f"the new one keep nothing apart (it is used as a lock at line {getattr(node, 'lineno', 0)})", "lock")
        elif (atom.obj, name) in self.heap.nonfinal or (found is not None and (("class", found[0]), name) in self.heap.nonfinal):
            world = self.access(atom, name, False, world, frame, node, self.field_name(atom, name, node))
        base = atom.path or ("self" if atom.obj == SELF else "")
        path = deeper(base, f".{name}")
        value = frozenset(LockRef(a.key, a.cond, a.path or path) if isinstance(a, LockRef) else a for a in value)
        value = unconst(value)  # a caller can set any attribute: what __init__ wrote is one value of many
        return [(world, with_scope(value, scope, path) if scope else value)]

    def field_name(self, atom: Atom, name: str, node: ast.AST) -> str:
        return self.attr_text(atom, name, node) if isinstance(node, ast.Attribute) else f"`{name}`"

    def attr_text(self, atom: Atom, name: str, node: ast.Attribute) -> str:
        base = self.program.text(node.value)
        text = f"`{base}.{name}`"
        if isinstance(atom, Ref) and atom.path and atom.path != base:
            return f"{text} (`{base}` holds `{atom.path}`)"
        return text

    def bind(self, recv: Atom, owner: str, name: str, found: Value, world: World, frame: Frame, node: ast.AST) -> Results:
        """A class attribute read through an instance (or super()): methods bound, properties called, data as is."""
        out: Results = []
        data: set[Atom] = set()
        for attr in found:
            if isinstance(attr, Prop):
                if attr.fget is None:
                    raise CannotFollow(node, f"the property `{name}` without a getter")
                out += self.call_function(attr.fget, Args([frozenset({recv})]), world, frame, node)
            elif isinstance(attr, Func) and attr.kind in ("function", "contextmanager"):
                data.add(Bound(recv, name, attr))
            elif isinstance(attr, Func) and attr.kind == "classmethod":
                data.add(Bound(ClassRef(owner), name, attr))
            else:
                data.add(attr)
        if data:
            if (("class", owner), name) in self.heap.nonfinal:
                world = self.access(ClassRef(owner), name, False, world, frame, node, f"`{owner}.{name}`")
            # a class attribute is shared by every instance (and a caller can set it): what it holds is global state
            # (a method bound to the instance is the instance's: no state of the class)
            bound = frozenset(a for a in data if isinstance(a, Bound) and a.func is not None)
            rest = frozenset(data) - bound
            out.append((world, bound | (with_scope(unconst(rest), "global", f"{owner}.{name}") if not self.module_level else rest)))
        return out

    def class_value(self, atom: ClassRef, name: str, world: World, frame: Frame, node: ast.AST) -> Results:
        if name == "__name__" or atom.name in self.program.constants:  # an Enum's members are constants
            return [(world, PLAIN)]
        found = self.class_attr(atom.name, name)
        if found is None:
            return [(world, NOTHING)]
        value = frozenset(replace(a, kind="static") if isinstance(a, Func) and a.kind == "function" else a for a in found[1])
        value = frozenset(Bound(atom, name, a) if isinstance(a, Func) and a.kind == "classmethod" else a for a in value)
        if (("class", found[0]), name) in self.heap.nonfinal:
            world = self.access(ClassRef(found[0]), name, False, world, frame, node, f"`{found[0]}.{name}`")
        if self.module_level:
            return [(world, value)]
        return [(world, with_scope(unconst(value), "global", f"{atom.name}.{name}"))]

    def store_attr(self, atom: Atom, name: str, value: Value, world: World, frame: Frame, node: ast.AST) -> list[World]:
        self.check_peer(atom, name, node)
        line = getattr(node, "lineno", 0)
        cls = self.class_of(atom)
        if cls is not None and isinstance(atom, Ref):
            if name.startswith("__") and name.endswith("__"):
                raise CannotFollow(node, f"`{self.program.text(node)}`: it sets a special attribute")
            found = self.class_attr(cls, name)
            props = [a for a in (found[1] if found else ()) if isinstance(a, Prop)]
            if props:
                out: list[World] = []
                for prop in props:
                    if prop.fset is None:
                        self.raised(world, node)  # AttributeError: a property without a setter
                        continue
                    out += [w for w, _ in self.call_function(prop.fset, Args([frozenset({atom}), value]), world, frame, node)]
                return out
            return [self.store_field(atom, atom.obj, name, value, world, frame, node, line)]
        if isinstance(atom, ClassRef):
            return [self.store_field(atom, ("class", atom.name), name, value, world, frame, node, line)]
        kind = self.kind_of(atom)
        if isinstance(atom, Ref) and kind in ("ext", "local", "object"):
            if kind == "ext":
                self.check_escape(atom, value, world, node)
                world = self.access(atom, name, True, world, frame, node, f"`{self.program.text(node)}`")
                world = self.publish(value, self.scope_of(atom, world), world, node)
            self.heap.store(atom.obj, name, peers(value) if self.scope_of(atom, world) else value)
            return [world]
        if isinstance(atom, Func | Bound) and not self.shared_within(value, world) and not any(isinstance(a, Ref) and a.obj == SELF for a in value):
            return [world]  # a function's own attribute (wrapper.__name__ = ...): no state of the class
        if isinstance(atom, ModuleRef):
            raise CannotFollow(node, f"`{self.program.text(node)} = ...`: it changes the module `{atom.name}` for everyone")
        raise CannotFollow(node, f"`{self.program.text(node)} = ...`: it sets an attribute of {self.program.text(node.value) if isinstance(node, ast.Attribute) else 'a value'}")

    def store_field(self, atom: Atom, obj: ObjId, name: str, value: Value, world: World, frame: Frame, node: ast.AST, line: int) -> World:
        text = f"`{self.program.text(node)}`"
        if obj == SELF and SELF in self.building and self.self_published:
            self.report(
                self.self_published,
                f"`__init__` makes the instance reachable by other threads here, before it sets {text} (line {line}): "
                f"another thread can use it half built",
                "escape",
            )
        if obj[0] in ("self", "class", "module") and any(isinstance(a, Func | Bound | GenObj) and self.reaches_state(a, world) for a in value):
            raise CannotFollow(node, f"{text} keeps a function that reaches objects of its own (a closure, a bound method): it can run later, from anywhere, without the lock")
        world = self.access(atom, name, True, world, frame, node, text)
        published_before = world.locks.published
        world = self.publish(value, self.scope_of(atom, world), world, node)
        scope = self.scope_of(atom, world)
        held = [key for key, count in world.locks.held if count > 0]
        protecting = [key for key in held if scope is not None and self.heap.locks[key].protects(scope)]
        world = self.swap_out(obj, name, self.program.text(node), value, published_before, protecting, world)
        if obj not in self.under_construction() and not (self.module_level and obj[0] == "class"):
            self.heap.mark_nonfinal(obj, name, line)
        seen = self.heap.bound_at.setdefault((obj, name), {})
        if obj != SELF and self.scope_of(atom, world) is not None:
            value = peers(value)  # the instance kept in shared state: read back, it may be another instance
        for stored in value:
            seen[stored] = min(seen.get(stored, line), line)
            if isinstance(stored, LockRef):
                self.heap.name_lock(stored.key, f"self.{name}" if obj == SELF else f"{obj[1]}.{name}" if obj[0] == "class" else name)
        self.heap.store(obj, name, value)
        return world

    def check_escape(self, target: Atom, value: Value, world: World, node: ast.AST) -> None:
        """Shared state stored into an object of the caller's: the caller can change it later, without the lock."""
        if self.scope_of(target, world) is not None or not (isinstance(target, Ref) and target.obj[0] == "param"):
            return
        for atom in self.shared_within(value, world):
            self.report(node, f"{self.who(Frame(None))} hands {self.describe_ref(atom)}, shared state, to an object of its caller's, who can change it later without the lock", "escape")

    def safe_class(self, cls: str) -> bool:
        """Whether the module's class ``cls`` guards its own state: the class under review does if this review
        passes (what it finds is reported anyway); another class if a review of its own passes."""
        if cls == self.cls:
            return True
        if cls not in self.safe:
            self.safe[cls] = False  # (while its own review runs: a class reaching back to this one is not assumed safe)
            self.safe[cls] = self.__class__(self.program, cls).run() is None  # type: ignore[attr-defined]
        return self.safe[cls]

    def shared_within(self, value: Value, world: World) -> list[Ref]:
        """The shared, changeable objects ``value`` holds or reaches through objects of the call's own (a fresh list
        holding a shared dict hands that dict out)."""
        found: list[Ref] = []
        todo, seen = list(value), set()
        while todo:
            atom = todo.pop()
            if atom in seen or not isinstance(atom, Ref) or atom.obj == SELF:
                continue
            seen.add(atom)
            kind = self.kind_of(atom)
            if self.scope_of(atom, world) is not None:
                if kind.startswith("instance:") and self.safe_class(kind.partition(":")[2]):
                    continue  # an object that guards its own state (its class passes this review): safe to hand out
                if kind in MUTABLE or kind.startswith(("instance:", "view:")) or (kind == "ext" and atom.obj[0] == "site"):
                    found.append(atom)
                    continue
                if kind not in ("tuple", "frozenset"):
                    continue
                # a shared tuple: what it holds may be changeable (and read back through it, it is shared)
                todo += list(with_scope(self.heap.items(atom.obj), self.scope_of(atom, world) or "instance", atom.path))
                continue
            if atom.obj[0] == "site":  # the call's own object: what it holds leaves with it
                todo += list(self.heap.items(atom.obj))
                for stored in self.heap.fields.get(atom.obj, {}).values():
                    todo += list(stored)
        return sorted(found, key=repr)

    def describe_ref(self, atom: Ref) -> str:
        return f"`{atom.path}`" if atom.path else "an object kept in shared state"

    # -- items ------------------------------------------------------------------------------------

    def load_item(self, atom: Atom, index: Value, world: World, frame: Frame, node: ast.AST) -> Results:
        if isinstance(atom, Packed):
            packed = atom.items or ()
            return [(world, frozenset().union(*packed, atom.rest) if packed else atom.rest)]
        if isinstance(atom, Imm):
            self.raised(world, node)
            return [(world, PLAIN)]
        if isinstance(atom, Library | ClassRef | ModuleRef):  # a generic type in a type alias: Callable[..., Any]
            return [(world, PLAIN)]
        kind = self.kind_of(atom)
        if isinstance(atom, Ref) and kind == "tuple" and len(index) == 1 and isinstance(next(iter(index)), Imm):
            position = next(iter(index)).const  # type: ignore[union-attr]
            if isinstance(position, int) and self.heap.has_field(atom.obj, f"#{position}"):
                scope = self.scope_of(atom, world)
                found_value = self.heap.field(atom.obj, f"#{position}")
                return [(world, with_scope(found_value, scope, atom.path) if scope else found_value)]
        if self.class_of(atom) is not None:
            found = self.dunder(atom, "__getitem__", Args([index]), world, frame, node)
            if found is None:
                raise CannotFollow(node, f"`{self.program.text(node)}`: the class defines no __getitem__")
            return found
        if isinstance(atom, Ref) and (kind in CONTAINERS or kind == "ext"):
            target = node.value if isinstance(node, ast.Subscript) else node
            world = self.access(atom, "[]", False, world, frame, node, self.name(atom, target) if kind != "tuple" else "")
            scope = self.scope_of(atom, world)
            items = self.heap.values(atom.obj) | ({Ref(EXT)} if kind == "ext" else set())
            self.raised(world, node)
            return [(world, with_scope(items, scope, deeper(atom.path, "[...]")) if scope else items)]
        if isinstance(atom, Ref) and kind in ("outside", "object", "exception"):
            return [(world, PLAIN)]
        raise CannotFollow(node, f"`{self.program.text(node)}`: an item of a value it cannot follow (a lock or a function kept in a container?)")

    def store_item(self, atom: Atom, value: Value | None, world: World, frame: Frame, node: ast.AST, index: Value = NOTHING) -> list[World]:
        kind = self.kind_of(atom)
        if self.class_of(atom) is not None:
            name = "__setitem__" if value is not None else "__delitem__"
            args = Args([PLAIN, value]) if value is not None else Args([PLAIN])
            found = self.dunder(atom, name, args, world, frame, node)
            if found is None:
                raise CannotFollow(node, f"`{self.program.text(node)}`: the class defines no {name}")
            return [w for w, _ in found]
        if isinstance(atom, Imm) or (isinstance(atom, Ref) and kind in ("tuple", "frozenset")):
            self.raised(world, node)  # TypeError: on this path there is nothing to change
            return []
        if isinstance(atom, Ref) and (kind in CONTAINERS or kind == "ext"):
            target = node.value if isinstance(node, ast.Subscript) else node
            world = self.access(atom, "[]", True, world, frame, node, self.name(atom, target))
            if value is not None:
                self.check_escape(atom, value | index, world, node)
                scope = self.scope_of(atom, world)
                world = self.publish(value | index, scope, world, node)  # the key is kept too
                self.heap.store_value(atom.obj, peers(value) if scope else value)
                self.heap.store_item(atom.obj, peers(index) if scope else index)
            self.raised(world, node)
            return [world]
        raise CannotFollow(node, f"`{self.program.text(node)}`: it changes an item of a value it cannot follow")

    def iterate(self, value: Value, world: World, frame: Frame, node: ast.AST) -> tuple[World, Value]:
        """One step of iterating ``value``: the read it makes, and what the step yields."""
        out: set[Atom] = set()
        for atom in sorted(value, key=repr):
            kind = self.kind_of(atom)
            if isinstance(atom, Packed):
                out |= frozenset().union(*(atom.items or ()), atom.rest)
            elif isinstance(atom, Ref) and (kind in CONTAINERS or kind == "ext"):
                if kind not in ("tuple", "frozenset"):
                    world = self.access(atom, "[]", False, world, frame, node, self.name(atom, node))
                scope = self.scope_of(atom, world)
                items = self.heap.items(atom.obj) | ({Ref(EXT)} if kind == "ext" else set())
                out |= with_scope(items, scope, deeper(atom.path, "[...]")) if scope else items
            elif isinstance(atom, Ref) and kind.startswith("view:"):
                for source in sorted(self.heap.field(atom.obj, "#of"), key=repr):
                    if not isinstance(source, Ref):
                        continue
                    world, keys = self.iterate(frozenset({source}), world, frame, node)  # reads the dict now
                    scope = self.scope_of(source, world)
                    values = self.heap.values(source.obj)
                    values = with_scope(values, scope, source.path) if scope else values
                    if kind == "view:values":
                        out |= values
                    else:
                        pair = ("site", f"pair@{atom.obj[1]}")
                        self.heap.set_kind(pair, "tuple")
                        self.heap.store(pair, "#0", keys)
                        self.heap.store(pair, "#1", values)
                        self.heap.store(pair, "#len", frozenset({Imm(2)}))
                        self.heap.store_item(pair, keys | values)
                        out.add(Ref(pair))
            elif isinstance(atom, Ref) and kind == "counter":
                world = self.access(atom, "[]", True, world, frame, node, self.name(atom, node))
                out |= PLAIN
            elif isinstance(atom, Imm | Library) or (isinstance(atom, Ref) and kind in ("outside", "object")):
                out |= PLAIN
            elif isinstance(atom, GenObj) or self.class_of(atom) is not None:
                if isinstance(atom, GenObj):
                    ran = self.run_generator(atom, world, frame, node)
                else:
                    ran = []
                    for w, iterator in self.dunder(atom, "__iter__", Args(), world, frame, node) or []:
                        w, items = self.iterate(iterator, w, frame, node)
                        ran.append((w, items))
                    if not ran:
                        raise CannotFollow(node, f"iterating over `{self.program.text(node)}`: its class defines no __iter__")
                worlds = join([w for w, _ in ran])
                if len(worlds) != 1:
                    raise CannotFollow(node, f"iterating over `{self.program.text(node)}`, whose iterator leaves different locks held on different paths")
                world = worlds[0]
                out |= frozenset().union(*(v for _, v in ran))
            else:
                raise CannotFollow(node, f"iterating over `{self.program.text(node)}`")
        return world, frozenset(out)

    # -- the methods of containers ------------------------------------------------------------

    def fill_dict(self, atom: Ref, args: Args, scope: Scope | None, world: World, frame: Frame, node: ast.AST) -> World:
        """``d[k] = v``, ``d.setdefault(k, v)``, ``d.update(m, **kw)``: keys among its items, values among its values."""
        keys, values = self.mapping_parts(args, world, frame, node)
        both = keys | values
        self.check_escape(atom, both, world, node)
        world = self.publish(both, scope, world, node)
        self.heap.store_item(atom.obj, peers(keys) if scope else keys)
        self.heap.store(atom.obj, "#values", peers(values) if scope else values)
        return world

    def mapping_parts(self, args: Args, world: World, frame: Frame, node: ast.AST) -> tuple[Value, Value]:
        """(keys, values) of what ``setdefault``/``__setitem__`` (key, value) or ``update`` (mappings, pairs,
        keywords) is given; what cannot be split goes to both."""
        positional = list(args.positional)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("setdefault", "__setitem__"):
            return (positional[0] if positional else NOTHING), (positional[1] if len(positional) > 1 else NONE)
        keys: Value = PLAIN if args.keywords else NOTHING
        values: Value = frozenset().union(NOTHING, *args.keywords.values())
        for source in positional + ([args.rest] if args.rest else []) + ([args.kwrest] if args.kwrest else []):
            k, v = self.split_mapping(source, world)
            keys, values = keys | k, values | v
        return keys, values

    def split_mapping(self, source: Value, world: World) -> tuple[Value, Value]:
        keys: Value = NOTHING
        values: Value = NOTHING
        for atom in source:
            if isinstance(atom, Ref) and self.kind_of(atom) == "dict":
                scope = self.scope_of(atom, world)
                k, v = self.heap.items(atom.obj), self.heap.values(atom.obj)
                keys |= with_scope(k, scope, atom.path) if scope else k
                values |= with_scope(v, scope, atom.path) if scope else v
            elif isinstance(atom, Ref):  # pairs, or a mapping from outside: anything in it may be either
                inner = self.heap.items(atom.obj) | (frozenset({new(EXT)}) if self.kind_of(atom) == "ext" else NOTHING)
                for each in inner:
                    more = self.heap.items(each.obj) if isinstance(each, Ref) else NOTHING
                    keys |= frozenset({each}) | more
                    values |= frozenset({each}) | more
        return keys, values

    def view(self, atom: Ref, name: str, node: ast.AST) -> Ref:
        """``d.values()`` / ``d.items()``: iterating it reads ``d`` (whenever that happens) and yields its values, or
        (key, value) pairs."""
        site: ObjId = ("site", f"{name}-view@{getattr(node, 'lineno', 0)}:{getattr(node, 'col_offset', 0)}")
        self.heap.set_kind(site, f"view:{name}")
        self.heap.store(site, "#of", frozenset({atom}))
        return new(site)

    def container_call(self, atom: Ref, name: str, args: Args, world: World, frame: Frame, node: ast.AST) -> Results:
        kind = self.kind_of(atom)
        target = node.func.value if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) else node
        what = self.name(atom, target)
        if kind == "event":
            if name == "wait":
                self.blocking_wait(world, frame, node, f"waits on the event {what}")
            return [(world, PLAIN)]
        if kind == "counter" and name == "__next__":
            return [(self.access(atom, "[]", True, world, frame, node, what), PLAIN)]
        if name not in READS | WRITES:
            raise CannotFollow(node, f"`{self.program.text(node)}`: the method `{name}` of a {kind or 'container'}")
        write = name in WRITES
        if kind not in ("tuple", "frozenset"):
            world = self.access(atom, "[]", write, world, frame, node, what)
        for value in args.every():
            world = self.read(value, world, frame, node)
        scope = self.scope_of(atom, world)
        if kind == "dict" and name in ("setdefault", "__setitem__", "update"):
            world = self.fill_dict(atom, args, scope, world, frame, node)
        elif name in ("append", "insert", "add", "appendleft", "extend", "extendleft", "update"):
            flat: set[Atom] = set()
            for value in args.every():
                if name in ("extend", "extendleft", "update"):
                    world, inner = self.iterate(value, world, frame, node)
                    flat |= inner
                else:
                    flat |= value
            self.check_escape(atom, frozenset(flat), world, node)
            world = self.publish(frozenset(flat), scope, world, node)
            self.heap.store_item(atom.obj, peers(frozenset(flat)) if scope else frozenset(flat))
        items = self.heap.values(atom.obj)
        shared = with_scope(items, scope, deeper(atom.path, "[...]")) if scope else items
        keys = self.heap.items(atom.obj)
        if name in ("get", "pop", "popleft", "setdefault", "__getitem__", "popitem"):
            self.raised(world, node)
            extra = args.positional[1] if len(args.positional) > 1 else NONE
            if name == "popitem" and kind == "dict":  # a (key, value) pair
                extra |= with_scope(keys, scope, atom.path) if scope else keys
            return [(world, shared | extra)]
        if kind == "dict" and name in ("values", "items"):  # a view: iterated later, it reads the dict then
            return [(world, frozenset({self.view(atom, name, node)}))]
        if name in ("keys", "values", "items", "__iter__"):
            return [(world, frozenset({atom}))]
        if name in ("copy", "union", "intersection", "difference", "symmetric_difference"):
            site: ObjId = ("site", f"{name}@{getattr(node, 'lineno', 0)}:{getattr(node, 'col_offset', 0)}")
            self.heap.set_kind(site, kind)
            # a shallow copy: the same items, shared ones still shared
            self.heap.store_item(site, with_scope(keys, scope, atom.path) if scope else keys)
            if kind == "dict":
                self.heap.store(site, "#values", shared)
            return [(world, frozenset({new(site)}))]
        if name in ("remove", "index"):
            self.raised(world, node)
        return [(world, PLAIN if name in READS else NONE)]
