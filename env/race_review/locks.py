"""Locks as the review follows them: where each is made, and what taking, releasing and waiting do on a path.

A lock is followed by where it is made: at module or class level (one lock every instance shares), while the
instance under review is constructed (its own lock), or elsewhere (a lock per call, which keeps nobody away).
Taking a lock starts an *epoch* of it; letting it go ends the epoch, and ``Condition.wait`` starts a new one (other
threads ran while it waited). An acquire that may fail (``acquire(False)``, ``blocking=<a caller's flag>``,
``timeout=...``) leaves two paths, one holding the lock and one not, told apart by what it returned.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from env.race_review.engine import Args, EngineBase, Frame, Results
from env.race_review.findings import CannotFollow
from env.race_review.heap import LockKind, LockScope
from env.race_review.library import Spec
from env.race_review.program import key
from env.race_review.values import (
    NONE,
    PLAIN,
    SELF,
    Acquired,
    Atom,
    Imm,
    LockCM,
    LockRef,
    NullCM,
    Ref,
    Value,
    describe,
    new,
    number,
    truthy,
)
from env.race_review.world import Locks, Touch, World


def _renamed(touches: frozenset[Touch], lock: str, epoch: str) -> frozenset[Touch]:
    """Accesses made under an earlier epoch of the same name (a loop, or a wait again): an epoch of the past now."""
    out = set()
    for touch in touches:
        if (lock, epoch) in touch.sig:
            touch = touch._replace(sig=frozenset((k, "old:" + e if (k, e) == (lock, epoch) else e) for k, e in touch.sig))
        out.add(touch)
    return frozenset(out)


class LocksMixin(EngineBase):
    def make_lock(self, spec: Spec, args: Args, world: World, node: ast.AST) -> Value:
        """A lock made by ``threading.Lock()`` (or RLock, Condition, Semaphore ...) at ``node``, reached through the
        calls being walked (a helper that makes a lock, called twice, makes two)."""
        site = self.site(node)
        line = getattr(node, "lineno", 0)
        scope: LockScope = "global" if self.module_level else "instance" if self.in_self_init else "fresh"
        if self.loop_depth and scope != "fresh":
            scope = "many"
        if spec.kind == "condition":
            given = args.positional[0] if args.positional else args.keywords.get("lock")
            if given is None:
                self.heap.lock(site, "RLock", scope, line)
                return frozenset({LockRef(site, cond=True)})
            locks = [a for a in given if isinstance(a, LockRef)]
            if len(locks) != 1 or len(given) != 1:
                raise CannotFollow(node, f"`{self.program.text(node)}`: a Condition on {', '.join(sorted(describe(a) for a in given))}")
            return frozenset({LockRef(locks[0].key, cond=True, path=locks[0].path)})
        kind: LockKind = "Lock"
        if spec.kind == "semaphore":
            permits = args.positional[0] if args.positional else args.keywords.get("value", frozenset({Imm(1)}))
            kind = "counting" if number(permits) != 1.0 else "Semaphore" if spec.detail == "Semaphore" else "BoundedSemaphore"
        elif spec.detail == "RLock":
            kind = "RLock"
        self.heap.lock(site, kind, scope, line)
        return frozenset({LockRef(site)})

    def lock_name(self, lock: LockRef) -> str:
        info = self.heap.locks.get(lock.key)
        path = lock.path or (info.path if info is not None else "")
        return f"`{path}`" if path else f"the lock made at line {info.line if info else 0}"

    # -- taking and letting go ------------------------------------------------------------------

    def acquire(self, lock: LockRef, blocking: Value | None, timeout: Value | None, world: World, frame: Frame, node: ast.AST) -> Results:
        info = self.heap.locks[lock.key]
        if info.scope == "many":
            raise CannotFollow(node, f"{self.lock_name(lock)}: one of several locks made at line {info.line}, chosen at run time")
        line = getattr(node, "lineno", 0)
        site = self.site(node)
        may_fail = blocking is not None and truthy(blocking) is not True
        if timeout is not None and not (number(timeout) is not None and (number(timeout) or 0) < 0):
            may_fail = True
        count = world.locks.times(lock.key)
        if info.kind == "counting" and not may_fail:  # it waits for a release, maybe by a thread that needs our lock
            self.blocking_wait(world, frame, node, f"waits for a permit of {self.lock_name(lock)}")
        base = world.locks._replace(facts=frozenset(f for f in world.locks.facts if f[0] != site))
        if count and not info.reentrant and not may_fail:
            self.report(
                node,
                f"{self.who(frame)} takes {self.lock_name(lock)} again while holding it (taken at line {world.locks.line_taken(lock.key)}): "
                f"a {info.kind} is not reentrant, so the thread waits for itself forever",
                "deadlock",
            )
            return []
        out: Results = []
        if not (count and not info.reentrant):
            taken = self.taken(lock, base, frame, line, site)
            if may_fail:
                taken = taken._replace(facts=taken.facts | {(site, True)})
            out.append((world.with_locks(taken), frozenset({Acquired(site)}) if may_fail else frozenset({Imm(True)})))
        if may_fail:
            why = "its timeout may run out" if timeout is not None else "it returns False when the lock is busy"
            failed = base._replace(facts=base.facts | {(site, False)}, gone=f"`{self.program.text(node)}` may fail ({why})", failed_at=line)
            out.append((world.with_locks(failed), frozenset({Acquired(site)})))
        return out

    def taken(self, lock: LockRef, locks: Locks, frame: Frame, line: int, site: str) -> Locks:
        count = locks.times(lock.key)
        if count:
            return locks.with_count(lock.key, count + 1)
        epoch = f"take:{line}:{site}"
        if self.reporting:
            for other, held in locks.held:
                if held and other != lock.key:
                    self.order.setdefault((other, lock.key), (line, self.entry))
        locks = locks._replace(touched=_renamed(locks.touched, lock.key, epoch), pending=_renamed(locks.pending, lock.key, epoch), failed_at=0)
        return locks.with_count(lock.key, 1, epoch, line)

    def release(self, lock: LockRef, world: World, frame: Frame, node: ast.AST, how: str = "") -> World:
        count = world.locks.times(lock.key)
        line = getattr(node, "lineno", 0)
        if count == 0 and (self.quiet or self.heap.locks[lock.key].kind == "counting"):
            # on the way out of an exception only an interrupt could raise; or a counting semaphore (a pool's slots,
            # taken by one method and given back by another): no finding of its own
            return world
        if count == 0:
            self.report(
                node,
                f"{self.who(frame)} releases {self.lock_name(lock)} on a path where it does not hold it "
                f"({world.locks.gone or 'it was not taken on this path'}): a Lock raises RuntimeError there, and a Semaphore lets a second thread in",
                "lock",
            )
            return world
        locks = world.locks.with_count(lock.key, count - 1)
        if count == 1:
            locks = locks._replace(gone=how or f"{self.lock_name(lock)} was let go at line {line}")
        return world.with_locks(locks)

    def wait(self, lock: LockRef, world: World, frame: Frame, node: ast.AST) -> World | None:
        """``cond.wait()``: the lock is let go while the thread waits and held again after, in a new epoch."""
        if not lock.cond:
            raise CannotFollow(node, f"`{self.program.text(node)}`: `wait` of a lock that is not a Condition")
        if not world.locks.times(lock.key):
            self.report(node, f"{self.who(frame)} waits on {self.lock_name(lock)} without holding it: wait() raises RuntimeError there", "lock")
            return None
        line = getattr(node, "lineno", 0)
        self.blocking_wait(world, frame, node, f"waits on {self.lock_name(lock)}", but=lock.key)
        if not self.retesting and not self.retest_if and not self.waiting_for:
            self.report(node, f"{self.who(frame)} waits on {self.lock_name(lock)} whatever the state: a notify sent before it waits is missed (it waits forever), and waking does not mean what it waits for holds; wait in a loop that tests it, or under a test of it", "deadlock")
        epoch = f"wait:{line}:{key(node)}"
        if self.deferring:  # a predicate loop's round: what it read before waiting decided only to wait; what it wrote stays
            world = self.commit(world.with_locks(world.locks._replace(pending=frozenset(t for t in world.locks.pending if t.write))), frame, node)
        locks = world.locks
        locks = locks._replace(touched=_renamed(locks.touched, lock.key, epoch), pending=_renamed(locks.pending, lock.key, epoch))
        return world.with_locks(locks.with_count(lock.key, locks.times(lock.key), epoch))

    def blocking_wait(self, world: World, frame: Frame, node: ast.AST, doing: str, but: str = "") -> None:
        """A thread that waits for another while holding a lock that other thread may need waits forever."""
        others = [k for k, n in world.locks.held if n and k != but and self.heap.locks[k].scope not in ("fresh",)]
        if others:
            self.report(
                node,
                f"{self.who(frame)} {doing} while holding {self.lock_name(LockRef(others[0]))}: the thread it waits for may need "
                f"that lock to wake it, and then both wait forever",
                "deadlock",
            )

    def lock_method(self, lock: LockRef, name: str, args: Args, world: World, frame: Frame, node: ast.AST) -> Results:
        if name in ("acquire", "__enter__"):
            blocking = args.positional[0] if args.positional else args.keywords.get("blocking")
            timeout = args.positional[1] if len(args.positional) > 1 else args.keywords.get("timeout")
            if args.rest is not None or args.kwrest is not None:
                blocking = timeout = PLAIN
            return self.acquire(lock, blocking if name == "acquire" else None, timeout if name == "acquire" else None, world, frame, node)
        if name in ("release", "__exit__"):
            if name == "release" and args.positional and number(args.positional[0]) not in (None, 1.0):
                raise CannotFollow(node, f"`{self.program.text(node)}`: a release of more than one permit")
            return [(self.release(lock, world, frame, node), NONE)]
        if name == "locked":
            return [(world, PLAIN)]
        if name in ("notify", "notify_all", "notifyAll"):
            if not lock.cond:
                raise CannotFollow(node, f"`{self.program.text(node)}`: `{name}` of a lock that is not a Condition")
            if not world.locks.times(lock.key):
                self.report(node, f"{self.who(frame)} calls {name}() on {self.lock_name(lock)} without holding it: it raises RuntimeError there", "lock")
                return []
            return [(world, NONE)]
        self.waiting_for += name == "wait_for"
        try:
            waited = self.wait(lock, world, frame, node)
        finally:
            self.waiting_for -= name == "wait_for"
        if waited is None:
            return []
        if name == "wait":
            return [(waited, PLAIN)]
        predicate = args.positional[0] if args.positional else args.keywords.get("predicate")
        if predicate is None:
            raise CannotFollow(node, f"`{self.program.text(node)}`: wait_for without a predicate")
        return [(w, PLAIN) for w, _ in self.call(predicate, Args(), waited, frame, node)]

    # -- `with` --------------------------------------------------------------------------------

    def enter(self, manager: Value, world: World, frame: Frame, node: ast.withitem) -> list[tuple[World, Value, Atom | None]]:
        """Entering ``with <manager>``: for each thing it may be, the path, what ``as`` binds and what to exit."""
        expr = node.context_expr
        locks = [a for a in manager if isinstance(a, LockRef | LockCM)]
        others = [a for a in manager if not isinstance(a, LockRef | LockCM)]
        if locks and others:
            self.not_a_lock(expr, others, f"`with {self.program.text(expr)}:` at line {expr.lineno}")
        if len({(a.key,) if isinstance(a, LockRef) else tuple(lock.key for lock in a.chain) for a in locks}) > 1:
            self.several_locks(expr)
            return [(world, PLAIN, None)]  # (reported: the block is walked holding none of them)
        out: list[tuple[World, Value, Atom | None]] = []
        for atom in sorted(manager, key=repr):
            if isinstance(atom, LockRef | LockCM):
                taking = [world]
                for lock in (atom,) if isinstance(atom, LockRef) else atom.chain:
                    taking = [w for current in taking for w, _ in self.acquire(lock, None, None, current, frame, expr)]
                for w in taking:
                    out += [(w2, v, atom) for w2, v in self.handed(atom, w, expr)]
            elif isinstance(atom, NullCM):
                out.append((world, PLAIN, atom))
            elif locks and not (isinstance(atom, Ref) and self.class_of(atom) is not None):
                out.append((world, PLAIN, None))  # holds nothing (a lock was expected: reported above)
            elif isinstance(atom, Ref) and self.class_of(atom) is not None:
                entered = self.dunder(atom, "__enter__", Args(), world, frame, expr)
                if entered is None:
                    raise CannotFollow(expr, f"`with {self.program.text(expr)}`: the class defines no __enter__")
                out += [(w, v, atom) for w, v in entered]
            elif isinstance(atom, Ref) and self.kind_of(atom) in ("ext", "outside"):
                if self.scope_of(atom, world) is not None:
                    raise CannotFollow(expr, f"`with {self.program.text(expr)}`: a context manager kept in shared state")
                out.append((world, frozenset({new(("ext",))}), None))
            else:
                raise CannotFollow(expr, f"`with {self.program.text(expr)}`: it enters {describe(atom)}")
        return out

    def several_locks(self, expr: ast.expr) -> None:
        """One name used as a lock that holds different locks: rebound by a method (a thread holding the old one and
        one holding the new one keep nothing apart), or chosen at run time, which the review cannot follow."""
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self" and (SELF, expr.attr) in self.heap.nonfinal:
            rebound = self.heap.nonfinal[(SELF, expr.attr)]
            self.report(
                rebound,
                f"`self.{expr.attr}` is rebound here after `__init__`: a thread holding the old lock and one holding the new one "
                f"(`{self.program.text(expr)}` at line {expr.lineno}) keep nothing apart",
                "lock",
            )
            return
        raise CannotFollow(expr, f"`{self.program.text(expr)}`: one of several locks, chosen at run time")

    def not_a_lock(self, expr: ast.expr, others: Sequence[Atom], use: str) -> None:
        """A value used as a lock that, on some path, is something else: reported where that something is bound."""
        alternatives = ", ".join(sorted({describe(a) for a in others}))
        line = getattr(expr, "lineno", 0)
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
            bound = [ln for atom, ln in self.heap.bound_at.get((SELF, expr.attr), {}).items() if atom in others or not isinstance(atom, LockRef | LockCM)]
            line = min(bound, default=line)
        self.report(line, f"`{self.program.text(expr)}` may not be a lock: on some path it holds {alternatives}, so {use} may run holding nothing", "lock")

    def handed(self, manager: LockRef | LockCM, world: World, node: ast.AST) -> Results:
        """What ``with <manager> as x`` binds once the lock is held: True for a lock, what the context manager yields."""
        if isinstance(manager, LockRef):
            return [(world, PLAIN)]
        if manager.func is None:
            return [(world, NONE)]
        info = self.program.functions[manager.func.key]
        found = [n for n in ast.walk(info.node) if isinstance(n, ast.Yield)]
        if not found or found[0].value is None:
            return [(world, NONE)]
        inner = Frame(info, dict(manager.func.closure))
        self.sinks.append([])
        try:
            out = [(World(w.locks, world.env), v) for w, v in self.eval(found[0].value, World(world.locks, manager.env), inner)]
        finally:
            raised = self.sinks.pop()
        for w in raised:  # the generator's `with` lets the locks go on the way out
            left = World(w.locks, world.env)
            for lock in reversed(manager.chain):
                left = self.release(lock, left, inner, node)
            self.sinks[-1].append(left)
        return out

    def exit(self, manager: Atom | None, world: World, frame: Frame, node: ast.AST) -> list[World]:
        return [w for w, _ in self.exits(manager, world, frame, node)]

    def exits(self, manager: Atom | None, world: World, frame: Frame, node: ast.AST, raising: bool = False) -> list[tuple[World, bool]]:
        """Leaving ``with <manager>``: each path after its exit, and whether the exit may swallow an exception."""
        if isinstance(manager, LockRef | LockCM):
            end = getattr(node, "end_lineno", 0) or getattr(node, "lineno", 0)
            for lock in reversed((manager,) if isinstance(manager, LockRef) else manager.chain):
                how = f"the `with` block of line {getattr(node, 'lineno', 0)} let go of {self.lock_name(lock)} at line {end}"
                world = self.release(lock, world, frame, node, how)
            return [(world, False)]
        if isinstance(manager, Ref) and self.class_of(manager) is not None:
            given = frozenset({new(("ext",))}) if raising else NONE  # on the way out of an exception: its type, value, traceback
            left = self.dunder(manager, "__exit__", Args([given, given, given]), world, frame, node)
            if left is None:
                raise CannotFollow(node, "a `with` whose class defines no __exit__")
            return [(w, truthy(v) is not False) for w, v in left]
        if isinstance(manager, NullCM):
            return [(world, manager.swallows)]
        return [(world, manager is not None)]  # a context manager from outside may swallow exceptions too
