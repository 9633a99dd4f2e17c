"""One path's state as the review walks the code: which locks it holds, since when, and what it touched.

A ``World`` is one class of paths: the locks held (``Locks``) and the local names (``env``). Paths that hold the same
locks in the same epochs with the same try-acquire outcomes are joined (their names' values united); paths that hold
different locks stay apart, so a read is judged against the locks held on *every* path that reaches it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from env.race_review.values import NOTHING, ObjId, Scope, Value


class Touch(NamedTuple):
    """One access to shared state: the lock epochs held at it, whether it wrote, where and what."""

    sig: frozenset[tuple[str, str]]  # (lock key, epoch) for each lock held that protects it
    write: bool
    line: int
    what: str


class Locks(NamedTuple):
    """(A NamedTuple, not a dataclass: the walk makes many, and tuples are made and compared fastest.)"""

    held: tuple[tuple[str, int], ...] = ()  # lock key -> times held (sorted)
    epochs: tuple[tuple[str, str], ...] = ()  # lock key -> the acquisition (or wait) it has been held since
    facts: frozenset[tuple[str, bool]] = frozenset()  # try-acquire site -> whether it took the lock on this path
    # -- united when paths join --
    touched: frozenset[Touch] = frozenset()  # this call's accesses so far (the atomicity check)
    pending: frozenset[Touch] = frozenset()  # a predicate loop's test, counted once the loop is left
    published: frozenset[tuple[ObjId, Scope]] = frozenset()  # the call's own objects stored into shared state
    handed: frozenset[tuple[ObjId, int]] = frozenset()  # the call's own objects put into a queue (and the line)
    taken: tuple[tuple[str, int], ...] = ()  # lock key -> the line that took it
    gone: str = ""  # why no lock is held here: the last release or failed acquire (for messages)
    failed_at: int = 0  # the line of a try-acquire that failed on this path (0: none since the last lock was taken)
    raised_at: int = 0  # the line an exception path left from

    def key(self) -> tuple[object, ...]:
        return (self.held, self.epochs, self.facts)

    def times(self, lock: str) -> int:
        return dict(self.held).get(lock, 0)

    def epoch(self, lock: str) -> str:
        return dict(self.epochs).get(lock, "")

    def line_taken(self, lock: str) -> int:
        return dict(self.taken).get(lock, 0)

    def with_count(self, lock: str, count: int, epoch: str = "", line: int = 0) -> Locks:
        held = dict(self.held)
        epochs = dict(self.epochs)
        taken = dict(self.taken)
        if count <= 0:
            held.pop(lock, None)
            epochs.pop(lock, None)
            taken.pop(lock, None)
        else:
            held[lock] = count
            if epoch:
                epochs[lock] = epoch
            if line:
                taken[lock] = line
        return self._replace(held=tuple(sorted(held.items())), epochs=tuple(sorted(epochs.items())), taken=tuple(sorted(taken.items())))

    def merge(self, other: Locks) -> Locks:
        return self._replace(
            touched=self.touched | other.touched,
            pending=self.pending | other.pending,
            published=self.published | other.published,
            handed=self.handed | other.handed,
            taken=tuple(sorted((dict(other.taken) | dict(self.taken)).items())),
            gone=min(filter(None, (self.gone, other.gone)), default=""),
            failed_at=min(filter(None, (self.failed_at, other.failed_at)), default=0),
            raised_at=min(filter(None, (self.raised_at, other.raised_at)), default=0),
        )


class World(NamedTuple):
    locks: Locks
    env: tuple[tuple[str, Value], ...] = ()  # local name -> value (sorted)

    def get(self, name: str) -> Value | None:
        for key, value in self.env:
            if key == name:
                return value
        return None

    def bind(self, name: str, value: Value) -> World:
        env = dict(self.env)
        env[name] = value
        return World(self.locks, tuple(sorted(env.items())))

    def unbind(self, name: str) -> World:
        return World(self.locks, tuple((k, v) for k, v in self.env if k != name))

    def with_locks(self, locks: Locks) -> World:
        return World(locks, self.env)

    def with_env(self, env: tuple[tuple[str, Value], ...]) -> World:
        return World(self.locks, env)


def _union_env(a: tuple[tuple[str, Value], ...], b: tuple[tuple[str, Value], ...]) -> tuple[tuple[str, Value], ...]:
    merged = dict(a)
    for name, value in b:
        merged[name] = merged.get(name, NOTHING) | value
    return tuple(sorted(merged.items()))


def join(worlds: list[World]) -> list[World]:
    """Paths with the same locks, epochs and try-acquire outcomes as one (in first-seen order)."""
    groups: dict[tuple[object, ...], World] = {}
    for world in worlds:
        key = world.locks.key()
        seen = groups.get(key)
        groups[key] = world if seen is None else World(seen.locks.merge(world.locks), _union_env(seen.env, world.env))
    return list(groups.values())


@dataclass
class Flow:
    """How a block can end: falling through, returning (with a value), breaking or continuing a loop."""

    normal: list[World] = field(default_factory=list)
    returns: list[tuple[World, Value]] = field(default_factory=list)
    breaks: list[World] = field(default_factory=list)
    continues: list[World] = field(default_factory=list)

    def absorb(self, other: Flow) -> None:
        """``other``'s returns, breaks and continues (not its fall-through) as this flow's."""
        self.returns += other.returns
        self.breaks += other.breaks
        self.continues += other.continues
