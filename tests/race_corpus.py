"""Two corpora for the race verdict's static lock-discipline review: correct designs it must accept and racy ones it
must refuse (issue: "Racy code scores 1.0 ... Correct code scores 0.0").

    from tests.race_corpus import CORRECT, RACY
    for design in CORRECT: assert review(design.source, design.cls) == ""
    for design in RACY: assert review(design.source, design.cls) != ""

Each design is a whole module, as an agent would submit it. Most are the hard task's ``ConnectionCounter`` (imports:
``threading`` and ``typing`` only, what the task's static policy allows): ``increment()`` adds 1 and returns the new
count, raising the peak to it; ``decrement()`` raises ``ValueError("no active connections")`` at 0, else subtracts 1
and returns the new count; ``reset()`` sets the count to 0 (the peak stays); ``get_count()``, ``get_peak()``; every
operation atomic. The others are other classes with other shared state (a bank, a bounded job queue, an id
allocator, a cache, a rate limiter, a session store), which may import any standard-library module; the review takes
``(source, cls)``, so they exercise it beyond one class.

CORRECT designs are race-free: every access to shared state happens with one lock held, each method is one atomic
step. They are grouped by ``style``; each also carries at least one construct the review of the third build refused.

RACY designs are racy on some path: shared state can be read or written without the lock held, or a method's read
and its dependent write happen under different acquisitions. Many hide the path behind a trigger no dynamic check
starting from zero reaches (counts of 10,000 and more, 20,000 calls on one instance, a thread's identity or name, the
number of live threads, wall-clock time); ``forced`` is then the same module with the trigger always on, which the
controlled-interleavings check or the real-threads check fails (the table at the bottom of this file). ``line`` is
1-based, in ``source``:

- shared state reached outside the lock (through a local, a container, a returned value, a closure, an argument):
  the first statement on the racy path that reads or writes it without the lock held (for a closure, a bound method
  or a function handed the state, the call that runs it);
- a lock that may not be held (``acquire(False)``, a timeout whose failure is ignored, a switchable flag, a lock a
  caller can replace): the acquire or construction that makes it so;
- a lock released inside its region (a helper, a local alias, ``Condition.wait``), or a read and its dependent write
  under separate acquisitions: the statement that releases it, or the ``with``/``acquire`` that takes it again;
- a semaphore given back twice: the extra ``release()``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Design:
    name: str  # unique, descriptive
    style: str  # correct: the style group; racy: the category ("alias: local", "trigger: calls", "early release", ...)
    source: str  # a whole module, as an agent would submit it
    cls: str = "ConnectionCounter"
    line: int = 0  # racy only: where the race is (see the module's docstring)
    why: str = ""  # racy only: what makes it racy
    forced: str = ""  # racy designs with a hidden trigger: the same module with the trigger always on


def _forced(source: str, old: str, new: str) -> str:
    """``source`` with its one occurrence of ``old`` (the trigger) replaced by ``new`` (the trigger always on)."""
    assert source.count(old) == 1, (old, source.count(old))
    return source.replace(old, new)


# -- correct ConnectionCounter designs ------------------------------------------------------------------------------

CORRECT: list[Design] = [
    Design(
        name="locked properties read by get_count and get_peak",
        style="property",
        source='''\
import threading


class ConnectionCounter:
    """Counts the active connections of a web server; shared by all worker threads."""

    def __init__(self):
        self._lock = threading.Lock()
        self._count = 0
        self._peak = 0

    @property
    def count(self):
        """The active connections, read under the lock."""
        with self._lock:
            return self._count

    @property
    def peak(self):
        """The most connections ever active at once."""
        with self._lock:
            return self._peak

    def increment(self):
        with self._lock:
            self._count += 1
            if self._count > self._peak:
                self._peak = self._count
            return self._count

    def decrement(self):
        with self._lock:
            if self._count == 0:
                raise ValueError("no active connections")
            self._count -= 1
            return self._count

    def get_count(self):
        return self.count

    def get_peak(self):
        return self.peak

    def reset(self):
        with self._lock:
            self._count = 0
''',
    ),
    Design(
        name="a snapshot property returning count and peak together",
        style="property",
        source='''\
import threading
from typing import Tuple


class ConnectionCounter:
    """Active connections and their peak, guarded by one lock."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0
        self._peak = 0

    @property
    def snapshot(self) -> Tuple[int, int]:
        """(count, peak), read in one acquisition so the pair is consistent."""
        with self._lock:
            return self._count, self._peak

    def increment(self) -> int:
        with self._lock:
            self._count += 1
            self._peak = max(self._peak, self._count)
            return self._count

    def decrement(self) -> int:
        with self._lock:
            if not self._count:
                raise ValueError("no active connections")
            self._count -= 1
            return self._count

    def reset(self) -> None:
        with self._lock:
            self._count = 0

    def get_count(self) -> int:
        return self.snapshot[0]

    def get_peak(self) -> int:
        return self.snapshot[1]
''',
    ),
    Design(
        name="a property with a locked setter used by reset",
        style="property",
        source='''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.RLock()
        self._count = 0
        self._peak = 0

    @property
    def count(self) -> int:
        with self._lock:
            return self._count

    @count.setter
    def count(self, value: int) -> None:
        with self._lock:
            self._count = value

    @property
    def peak(self) -> int:
        with self._lock:
            return self._peak

    def increment(self) -> int:
        with self._lock:
            self._count += 1
            if self._count > self._peak:
                self._peak = self._count
            return self._count

    def decrement(self) -> int:
        with self._lock:
            if self._count == 0:
                raise ValueError("no active connections")
            self._count -= 1
            return self._count

    def reset(self) -> None:
        self.count = 0

    def get_count(self) -> int:
        return self.count

    def get_peak(self) -> int:
        return self.peak
''',
    ),
    Design(
        name="an is_idle property and a __bool__ that lock",
        style="property",
        source='''\
import threading


class ConnectionCounter:
    """Thread-safe connection counter."""

    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    @property
    def is_idle(self) -> bool:
        with self._lock:
            return self.count == 0

    def __bool__(self) -> bool:
        return not self.is_idle

    def increment(self):
        with self._lock:
            self.count += 1
            self.peak = max(self.peak, self.count)
            return self.count

    def decrement(self):
        with self._lock:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
''',
    ),
    Design(
        name="a module-level synchronized decorator with a with block",
        style="decorator",
        source='''\
import threading


def synchronized(method):
    """Runs ``method`` with the instance's lock held."""

    def wrapper(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)

    wrapper.__name__ = method.__name__
    wrapper.__doc__ = method.__doc__
    return wrapper


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    @synchronized
    def increment(self):
        self.count += 1
        if self.count > self.peak:
            self.peak = self.count
        return self.count

    @synchronized
    def decrement(self):
        if self.count == 0:
            raise ValueError("no active connections")
        self.count -= 1
        return self.count

    @synchronized
    def get_count(self):
        return self.count

    @synchronized
    def get_peak(self):
        return self.peak

    @synchronized
    def reset(self):
        self.count = 0
''',
    ),
    Design(
        name="a decorator that acquires and releases in try/finally",
        style="decorator",
        source='''\
import threading
from typing import Any, Callable, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def holding_lock(method: F) -> F:
    """The method, run with ``self._lock`` held from start to finish."""

    def locked(self: "ConnectionCounter", *args: Any) -> Any:
        self._lock.acquire()
        try:
            return method(self, *args)
        finally:
            self._lock.release()

    return locked  # type: ignore[return-value]


class ConnectionCounter:
    """Counts active connections."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    @holding_lock
    def increment(self) -> int:
        self.count += 1
        self.peak = max(self.peak, self.count)
        return self.count

    @holding_lock
    def decrement(self) -> int:
        if self.count == 0:
            raise ValueError("no active connections")
        self.count -= 1
        return self.count

    @holding_lock
    def get_count(self) -> int:
        return self.count

    @holding_lock
    def get_peak(self) -> int:
        return self.peak

    @holding_lock
    def reset(self) -> None:
        self.count = 0
''',
    ),
    Design(
        name="a decorator factory naming the lock attribute",
        style="decorator",
        source='''\
import threading


def guarded_by(lock_name):
    """A decorator that holds the lock stored in the attribute ``lock_name``."""

    def decorate(method):
        def wrapper(self, *args, **kwargs):
            with getattr(self, lock_name):
                return method(self, *args, **kwargs)

        return wrapper

    return decorate


class ConnectionCounter:
    def __init__(self):
        self._guard = threading.Lock()
        self._count = 0
        self._peak = 0

    @guarded_by("_guard")
    def increment(self):
        self._count += 1
        if self._count > self._peak:
            self._peak = self._count
        return self._count

    @guarded_by("_guard")
    def decrement(self):
        if self._count == 0:
            raise ValueError("no active connections")
        self._count -= 1
        return self._count

    @guarded_by("_guard")
    def get_count(self):
        return self._count

    @guarded_by("_guard")
    def get_peak(self):
        return self._peak

    @guarded_by("_guard")
    def reset(self):
        self._count = 0
''',
    ),
    Design(
        name="a decorator defined in the class body",
        style="decorator",
        source='''\
import threading


class ConnectionCounter:
    """A connection counter whose public methods each run under one lock."""

    def _locked(method):
        def wrapper(self, *args):
            with self._lock:
                return method(self, *args)

        wrapper.__doc__ = method.__doc__
        return wrapper

    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    @_locked
    def increment(self):
        """Adds a connection; returns the new count."""
        self.count += 1
        self.peak = max(self.peak, self.count)
        return self.count

    @_locked
    def decrement(self):
        """Removes a connection; returns the new count."""
        if self.count == 0:
            raise ValueError("no active connections")
        self.count -= 1
        return self.count

    @_locked
    def get_count(self):
        return self.count

    @_locked
    def get_peak(self):
        return self.peak

    @_locked
    def reset(self):
        self.count = 0
''',
    ),
    Design(
        name="the class is its own context manager, with docstrings",
        style="context manager",
        source='''\
import threading


class ConnectionCounter:
    """Counts connections; ``with counter:`` holds its lock."""

    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def __enter__(self):
        """Takes the counter's lock."""
        self._lock.acquire()
        return self

    def __exit__(self, exc_type, exc, tb):
        """Gives the lock back, letting any exception through."""
        self._lock.release()
        return False

    def increment(self):
        with self:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count

    def decrement(self):
        with self:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def get_count(self):
        with self:
            return self.count

    def get_peak(self):
        with self:
            return self.peak

    def reset(self):
        with self:
            self.count = 0
''',
    ),
    Design(
        name="__enter__ and __exit__ delegating to the lock's own",
        style="context manager",
        source='''\
import threading
from typing import Optional


class ConnectionCounter:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def __enter__(self) -> "ConnectionCounter":
        self._lock.__enter__()
        return self

    def __exit__(self, exc_type: Optional[type], exc: Optional[BaseException], tb: object) -> None:
        self._lock.__exit__(exc_type, exc, tb)

    def increment(self) -> int:
        with self:
            self.count += 1
            self.peak = max(self.peak, self.count)
            return self.count

    def decrement(self) -> int:
        with self:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def get_count(self) -> int:
        with self:
            return self.count

    def get_peak(self) -> int:
        with self:
            return self.peak

    def reset(self) -> None:
        with self:
            self.count = 0
''',
    ),
    Design(
        name="a private _locked() returning the lock",
        style="context manager",
        source='''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def _locked(self):
        """The lock every method holds (one place to swap it for an RLock)."""
        return self._lock

    def increment(self):
        with self._locked():
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count

    def decrement(self):
        with self._locked():
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def get_count(self):
        with self._locked():
            return self.count

    def get_peak(self):
        with self._locked():
            return self.peak

    def reset(self):
        with self._locked():
            self.count = 0
''',
    ),
    Design(
        name="a small guard class around the lock",
        style="context manager",
        source='''\
import threading


class _Guard:
    """Holds a lock for the length of a ``with`` block."""

    def __init__(self, lock):
        self._lock = lock

    def __enter__(self):
        self._lock.acquire()
        return self

    def __exit__(self, *exc_info):
        self._lock.release()
        return False


class ConnectionCounter:
    def __init__(self):
        self._guard = _Guard(threading.Lock())
        self.count = 0
        self.peak = 0

    def increment(self):
        with self._guard:
            self.count += 1
            self.peak = max(self.peak, self.count)
            return self.count

    def decrement(self):
        with self._guard:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def get_count(self):
        with self._guard:
            return self.count

    def get_peak(self):
        with self._guard:
            return self.peak

    def reset(self):
        with self._guard:
            self.count = 0
''',
    ),
    Design(
        name="a Condition notified by every update, waited on in a predicate loop",
        style="condition",
        source='''\
import threading


class ConnectionCounter:
    """Counts connections; wait_until_idle() blocks until none is active."""

    def __init__(self):
        self._changed = threading.Condition()
        self.count = 0
        self.peak = 0

    def increment(self):
        with self._changed:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            self._changed.notify_all()
            return self.count

    def decrement(self):
        with self._changed:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            self._changed.notify_all()
            return self.count

    def reset(self):
        with self._changed:
            self.count = 0
            self._changed.notify_all()

    def wait_until_idle(self, timeout=None):
        """True once no connection is active; False if ``timeout`` seconds pass first."""
        with self._changed:
            while self.count:
                if not self._changed.wait(timeout):
                    return False
            return True

    def get_count(self):
        with self._changed:
            return self.count

    def get_peak(self):
        with self._changed:
            return self.peak
''',
    ),
    Design(
        name="a Condition with notify on decrement and a bounded wait_below",
        style="condition",
        source='''\
import threading
from typing import Optional


class ConnectionCounter:
    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self.count = 0
        self.peak = 0

    def increment(self) -> int:
        with self._cond:
            self.count += 1
            self.peak = max(self.peak, self.count)
            return self.count

    def decrement(self) -> int:
        with self._cond:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            self._cond.notify()
            return self.count

    def wait_below(self, limit: int, timeout: Optional[float] = None) -> bool:
        """Waits until fewer than ``limit`` connections are active."""
        with self._cond:
            while self.count >= limit:
                if not self._cond.wait(timeout):
                    return self.count < limit
            return True

    def get_count(self) -> int:
        with self._cond:
            return self.count

    def get_peak(self) -> int:
        with self._cond:
            return self.peak

    def reset(self) -> None:
        with self._cond:
            self.count = 0
            self._cond.notify_all()
''',
    ),
    Design(
        name="a Condition over an RLock with wait_for",
        style="condition",
        source='''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._cond = threading.Condition(threading.RLock())
        self.count = 0
        self.peak = 0

    def increment(self):
        with self._cond:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            self._cond.notify_all()
            return self.count

    def decrement(self):
        with self._cond:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            self._cond.notify_all()
            return self.count

    def wait_for_peak(self, target, timeout=None):
        """Waits until the peak reaches ``target``."""
        with self._cond:
            return self._cond.wait_for(lambda: self.peak >= target, timeout)

    def get_count(self):
        with self._cond:
            return self.count

    def get_peak(self):
        with self._cond:
            return self.peak

    def reset(self):
        with self._cond:
            self.count = 0
            self._cond.notify_all()
''',
    ),
    Design(
        name="an RLock: increment and decrement call get_count while holding it",
        style="rlock",
        source='''\
import threading


class ConnectionCounter:
    """Connection counter; its public methods call each other under one reentrant lock."""

    LIMIT = 10**9

    def __init__(self):
        self._lock = threading.RLock()
        self.count = 0
        self.peak = 0

    def increment(self):
        with self._lock:
            self.count += 1
            self.peak = max(self.peak, self.get_count())
            return self.get_count()

    def decrement(self):
        with self._lock:
            if self.get_count() == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.get_count()

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
''',
    ),
    Design(
        name="an RLock: decrement asks is_empty() and reset is called from drain()",
        style="rlock",
        source='''\
import threading


class ConnectionCounter:
    count: int
    peak: int

    def __init__(self):
        self._lock = threading.RLock()
        self.count = 0
        self.peak = 0

    def is_empty(self):
        with self._lock:
            return self.count == 0

    def increment(self):
        with self._lock:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count

    def decrement(self):
        with self._lock:
            if self.is_empty():
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def drain(self):
        """Drops every connection; returns how many there were."""
        with self._lock:
            dropped = self.count
            self.reset()
            return dropped

    def reset(self):
        with self._lock:
            self.count = 0

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak
''',
    ),
    Design(
        name="an RLock taken twice: acquire/try/finally around a with",
        style="rlock",
        source='''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.RLock()
        self.count, self.peak = 0, 0

    def _raise_peak(self):
        with self._lock:
            if self.count > self.peak:
                self.peak = self.count

    def increment(self):
        self._lock.acquire()
        try:
            self.count += 1
            self._raise_peak()
            return self.count
        finally:
            self._lock.release()

    def decrement(self):
        with self._lock:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
''',
    ),
    Design(
        name="Semaphore(1) held with with, tuple assignment in __init__",
        style="semaphore",
        source='''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._mutex = threading.Semaphore(1)
        self.count, self.peak = 0, 0

    def increment(self):
        with self._mutex:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count

    def decrement(self):
        with self._mutex:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def get_count(self):
        with self._mutex:
            return self.count

    def get_peak(self):
        with self._mutex:
            return self.peak

    def reset(self):
        with self._mutex:
            self.count = 0
''',
    ),
    Design(
        name="BoundedSemaphore(1) with acquire/try/finally and a chained reset",
        style="semaphore",
        source='''\
import threading


class ConnectionCounter:
    """Counts active connections under a one-permit semaphore."""

    def __init__(self):
        self._permit = threading.BoundedSemaphore(1)
        self.count = self.peak = 0

    def increment(self):
        self._permit.acquire()
        try:
            self.count += 1
            self.peak = max(self.peak, self.count)
            return self.count
        finally:
            self._permit.release()

    def decrement(self):
        self._permit.acquire()
        try:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count
        finally:
            self._permit.release()

    def get_count(self):
        self._permit.acquire()
        try:
            return self.count
        finally:
            self._permit.release()

    def get_peak(self):
        self._permit.acquire()
        try:
            return self.peak
        finally:
            self._permit.release()

    def reset(self):
        self._permit.acquire()
        try:
            self.count = 0
        finally:
            self._permit.release()
''',
    ),
    Design(
        name="Semaphore(1) taken with a timeout that raises",
        style="semaphore",
        source='''\
import threading


class ConnectionCounter:
    TIMEOUT = 5.0

    def __init__(self):
        self._sem = threading.Semaphore(1)
        self.count = 0
        self.peak = 0

    def _enter(self):
        if not self._sem.acquire(timeout=self.TIMEOUT):
            raise RuntimeError("connection counter is stuck")

    def increment(self):
        self._enter()
        try:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count
        finally:
            self._sem.release()

    def decrement(self):
        self._enter()
        try:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count
        finally:
            self._sem.release()

    def get_count(self):
        with self._sem:
            return self.count

    def get_peak(self):
        with self._sem:
            return self.peak

    def reset(self):
        with self._sem:
            self.count = 0
''',
    ),
    Design(
        name="a module-level lock used by name, with a __main__ guard",
        style="module lock",
        source='''\
import threading

_LOCK = threading.Lock()


class ConnectionCounter:
    """All counters share one module-level lock (coarse, but correct)."""

    def __init__(self):
        self.count = 0
        self.peak = 0

    def increment(self):
        with _LOCK:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count

    def decrement(self):
        with _LOCK:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def get_count(self):
        with _LOCK:
            return self.count

    def get_peak(self):
        with _LOCK:
            return self.peak

    def reset(self):
        with _LOCK:
            self.count = 0


if __name__ == "__main__":
    counter = ConnectionCounter()
    workers = [threading.Thread(target=counter.increment) for _ in range(8)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    print(counter.get_count(), counter.get_peak())
''',
    ),
    Design(
        name="a module-level lock bound in __init__",
        style="module lock",
        source='''\
import threading

_LOCK = threading.Lock()


class ConnectionCounter:
    def __init__(self):
        self._lock = _LOCK
        self.count = 0
        self.peak = 0

    def increment(self):
        with self._lock:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count

    def decrement(self):
        with self._lock:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
''',
    ),
    Design(
        name="a module-level RLock bound as a class attribute",
        style="module lock",
        source='''\
import threading

_COUNTERS_LOCK = threading.RLock()


class ConnectionCounter:
    """Counters of one process share a lock, so a report can read several consistently."""

    _lock = _COUNTERS_LOCK

    def __init__(self):
        self.count = 0
        self.peak = 0

    def increment(self):
        with self._lock:
            self.count += 1
            self.peak = max(self.peak, self.count)
            return self.count

    def decrement(self):
        with self._lock:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
''',
    ),
    Design(
        name="a module-level lock imported by name and taken with acquire/try/finally",
        style="module lock",
        source='''\
from threading import Lock
from typing import Final

COUNTER_LOCK: Final = Lock()


class ConnectionCounter:
    def __init__(self) -> None:
        self.count = 0
        self.peak = 0

    def increment(self) -> int:
        COUNTER_LOCK.acquire()
        try:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count
        finally:
            COUNTER_LOCK.release()

    def decrement(self) -> int:
        COUNTER_LOCK.acquire()
        try:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count
        finally:
            COUNTER_LOCK.release()

    def get_count(self) -> int:
        with COUNTER_LOCK:
            return self.count

    def get_peak(self) -> int:
        with COUNTER_LOCK:
            return self.peak

    def reset(self) -> None:
        with COUNTER_LOCK:
            self.count = 0


if __name__ == "__main__":
    c = ConnectionCounter()
    c.increment()
    c.decrement()
    assert c.get_count() == 0 and c.get_peak() == 1
''',
    ),
    Design(
        name="a lock created in the class body",
        style="class-level lock",
        source='''\
import threading


class ConnectionCounter:
    """One lock for every counter, created with the class."""

    _lock = threading.Lock()

    def __init__(self):
        self.count = 0
        self.peak = 0

    def increment(self):
        with self._lock:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count

    def decrement(self):
        with self._lock:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
''',
    ),
    Design(
        name="a ClassVar lock named through the class",
        style="class-level lock",
        source='''\
import threading
from typing import Any, ClassVar


class ConnectionCounter:
    _lock: ClassVar[Any] = threading.RLock()

    def __init__(self) -> None:
        self.count = 0
        self.peak = 0

    def increment(self) -> int:
        with ConnectionCounter._lock:
            self.count += 1
            self.peak = max(self.peak, self.count)
            return self.count

    def decrement(self) -> int:
        with ConnectionCounter._lock:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def get_count(self) -> int:
        with ConnectionCounter._lock:
            return self.count

    def get_peak(self) -> int:
        with ConnectionCounter._lock:
            return self.peak

    def reset(self) -> None:
        with ConnectionCounter._lock:
            self.count = 0
''',
    ),
    Design(
        name="a class-level Condition notified on reset",
        style="class-level lock",
        source='''\
import threading


class ConnectionCounter:
    _cond = threading.Condition()

    def __init__(self):
        self.count = 0
        self.peak = 0

    def increment(self):
        with self._cond:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count

    def decrement(self):
        with self._cond:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            if self.count == 0:
                self._cond.notify_all()
            return self.count

    def reset(self):
        with self._cond:
            self.count = 0
            self._cond.notify_all()

    def get_count(self):
        with self._cond:
            return self.count

    def get_peak(self):
        with self._cond:
            return self.peak
''',
    ),
    Design(
        name="acquire/try/finally in every method, with class constants",
        style="acquire/try/finally",
        source='''\
import threading


class ConnectionCounter:
    NAME = "connections"
    LIMIT = 10**9

    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def increment(self):
        self._lock.acquire()
        try:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count
        finally:
            self._lock.release()

    def decrement(self):
        self._lock.acquire()
        try:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count
        finally:
            self._lock.release()

    def get_count(self):
        self._lock.acquire()
        try:
            return self.count
        finally:
            self._lock.release()

    def get_peak(self):
        self._lock.acquire()
        try:
            return self.peak
        finally:
            self._lock.release()

    def reset(self):
        self._lock.acquire()
        try:
            self.count = 0
        finally:
            self._lock.release()
''',
    ),
    Design(
        name="acquire with the result checked, try/finally, except inside",
        style="acquire/try/finally",
        source='''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def increment(self):
        acquired = self._lock.acquire()
        assert acquired
        try:
            self.count += 1
            self.peak = max(self.peak, self.count)
            return self.count
        finally:
            self._lock.release()

    def decrement(self):
        self._lock.acquire()
        try:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count
        except ValueError:
            raise
        finally:
            self._lock.release()

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
''',
    ),
    Design(
        name="if not acquire(timeout=5): raise, then try/finally",
        style="timeout that raises",
        source='''\
import threading


class ConnectionCounter:
    """Counts connections; a lock held for more than 5 s is a bug worth an error."""

    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def increment(self):
        if not self._lock.acquire(timeout=5):
            raise RuntimeError("could not take the counter's lock")
        try:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count
        finally:
            self._lock.release()

    def decrement(self):
        if not self._lock.acquire(timeout=5):
            raise RuntimeError("could not take the counter's lock")
        try:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count
        finally:
            self._lock.release()

    def get_count(self):
        if not self._lock.acquire(timeout=5):
            raise RuntimeError("could not take the counter's lock")
        try:
            return self.count
        finally:
            self._lock.release()

    def get_peak(self):
        if not self._lock.acquire(timeout=5):
            raise RuntimeError("could not take the counter's lock")
        try:
            return self.peak
        finally:
            self._lock.release()

    def reset(self):
        if not self._lock.acquire(timeout=5):
            raise RuntimeError("could not take the counter's lock")
        try:
            self.count = 0
        finally:
            self._lock.release()
''',
    ),
    Design(
        name="a timeout that raises TimeoutError, in a private helper",
        style="timeout that raises",
        source='''\
import threading


class ConnectionCounter:
    def __init__(self, timeout: float = 2.0) -> None:
        self._lock = threading.RLock()
        self._timeout = timeout
        self.count = 0
        self.peak = 0

    def _take(self) -> None:
        if not self._lock.acquire(True, self._timeout):
            raise TimeoutError("connection counter lock timed out")

    def increment(self) -> int:
        self._take()
        try:
            self.count += 1
            self.peak = max(self.peak, self.count)
            return self.count
        finally:
            self._lock.release()

    def decrement(self) -> int:
        self._take()
        try:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count
        finally:
            self._lock.release()

    def get_count(self) -> int:
        self._take()
        try:
            return self.count
        finally:
            self._lock.release()

    def get_peak(self) -> int:
        self._take()
        try:
            return self.peak
        finally:
            self._lock.release()

    def reset(self) -> None:
        self._take()
        try:
            self.count = 0
        finally:
            self._lock.release()
''',
    ),
    Design(
        name="a timeout checked with acquired = ... and an else-less raise",
        style="timeout that raises",
        source='''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def increment(self):
        acquired = self._lock.acquire(blocking=True, timeout=10.0)
        if not acquired:
            raise RuntimeError("lock timeout")
        try:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count
        finally:
            self._lock.release()

    def decrement(self):
        acquired = self._lock.acquire(blocking=True, timeout=10.0)
        if not acquired:
            raise RuntimeError("lock timeout")
        try:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count
        finally:
            self._lock.release()

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
''',
    ),
    Design(
        name="a spin-acquire in a helper, acquire(False) in a loop",
        style="spin helper",
        source='''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def _acquire(self):
        """Spins until the lock is ours."""
        while not self._lock.acquire(False):
            pass

    def increment(self):
        self._acquire()
        try:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count
        finally:
            self._lock.release()

    def decrement(self):
        self._acquire()
        try:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count
        finally:
            self._lock.release()

    def get_count(self):
        self._acquire()
        try:
            return self.count
        finally:
            self._lock.release()

    def get_peak(self):
        self._acquire()
        try:
            return self.peak
        finally:
            self._lock.release()

    def reset(self):
        self._acquire()
        try:
            self.count = 0
        finally:
            self._lock.release()
''',
    ),
    Design(
        name="a spin helper with blocking=False and a release helper",
        style="spin helper",
        source='''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def _lock_spin(self):
        spins = 0
        while not self._lock.acquire(blocking=False):
            spins += 1
        return spins

    def _unlock(self):
        self._lock.release()

    def increment(self):
        self._lock_spin()
        try:
            self.count += 1
            self.peak = max(self.peak, self.count)
            return self.count
        finally:
            self._unlock()

    def decrement(self):
        self._lock_spin()
        try:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count
        finally:
            self._unlock()

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
''',
    ),
    Design(
        name="chained assignment in __init__",
        style="chained assignment",
        source='''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self.count = self.peak = 0

    def increment(self):
        with self._lock:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count

    def decrement(self):
        with self._lock:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
''',
    ),
    Design(
        name="chained assignment inside the region",
        style="chained assignment",
        source='''\
import threading


class ConnectionCounter:
    count: int
    peak: int

    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def increment(self):
        with self._lock:
            self.count = new = self.count + 1
            if new > self.peak:
                self.peak = new
            return new

    def decrement(self):
        with self._lock:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count = new = self.count - 1
            return new

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = zero = 0
            return zero
''',
    ),
    Design(
        name="tuple assignment updating count and peak together",
        style="tuple assignment",
        source='''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self.count, self.peak = 0, 0

    def increment(self):
        with self._lock:
            self.count, self.peak = self.count + 1, max(self.peak, self.count + 1)
            return self.count

    def decrement(self):
        with self._lock:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
''',
    ),
    Design(
        name="tuple unpacking of a locked snapshot",
        style="tuple assignment",
        source='''\
import threading
from typing import Tuple


class ConnectionCounter:
    def __init__(self):
        self._lock, self.count, self.peak = threading.Lock(), 0, 0

    def _pair(self) -> Tuple[int, int]:
        with self._lock:
            return self.count, self.peak

    def increment(self):
        with self._lock:
            count, peak = self.count + 1, self.peak
            self.count, self.peak = count, max(peak, count)
            return count

    def decrement(self):
        with self._lock:
            count = self.count
            if count == 0:
                raise ValueError("no active connections")
            self.count = count - 1
            return count - 1

    def get_count(self):
        count, _ = self._pair()
        return count

    def get_peak(self):
        _, peak = self._pair()
        return peak

    def reset(self):
        with self._lock:
            self.count = 0
''',
    ),
    Design(
        name="class-level annotations and constants",
        style="class annotations",
        source='''\
import threading


class ConnectionCounter:
    """Active connections and their peak."""

    NAME = "x"
    LIMIT = 10**9
    count: int
    peak: int
    _lock: threading.Lock

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def increment(self) -> int:
        with self._lock:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count

    def decrement(self) -> int:
        with self._lock:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def get_count(self) -> int:
        with self._lock:
            return self.count

    def get_peak(self) -> int:
        with self._lock:
            return self.peak

    def reset(self) -> None:
        with self._lock:
            self.count = 0
''',
    ),
    Design(
        name="class defaults for the counts and an annotated lock",
        style="class annotations",
        source='''\
import threading
from typing import ClassVar


class ConnectionCounter:
    count: int = 0
    peak: int = 0
    ERROR: ClassVar[str] = "no active connections"

    def __init__(self):
        self._lock: threading.Lock = threading.Lock()

    def increment(self):
        with self._lock:
            self.count += 1
            self.peak = max(self.peak, self.count)
            return self.count

    def decrement(self):
        with self._lock:
            if self.count == 0:
                raise ValueError(self.ERROR)
            self.count -= 1
            return self.count

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
''',
    ),
    Design(
        name="__repr__, __len__ and __int__ that lock",
        style="dunder",
        source='''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def __repr__(self):
        with self._lock:
            return "ConnectionCounter(count=%d, peak=%d)" % (self.count, self.peak)

    def __len__(self):
        with self._lock:
            return self.count

    def __int__(self):
        return len(self)

    def increment(self):
        with self._lock:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count

    def decrement(self):
        with self._lock:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def get_count(self):
        return len(self)

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
''',
    ),
    Design(
        name="__eq__ on locked snapshots and __hash__ = None",
        style="dunder",
        source='''\
import threading


class ConnectionCounter:
    __hash__ = None

    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def _snapshot(self):
        with self._lock:
            return (self.count, self.peak)

    def __eq__(self, other):
        if not isinstance(other, ConnectionCounter):
            return NotImplemented
        return self._snapshot() == other._snapshot()

    def increment(self):
        with self._lock:
            self.count += 1
            self.peak = max(self.peak, self.count)
            return self.count

    def decrement(self):
        with self._lock:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def get_count(self):
        return self._snapshot()[0]

    def get_peak(self):
        return self._snapshot()[1]

    def reset(self):
        with self._lock:
            self.count = 0
''',
    ),
    Design(
        name="__iter__ yielding a snapshot taken under the lock",
        style="dunder",
        source='''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def __iter__(self):
        with self._lock:
            pair = (self.count, self.peak)
        yield from pair

    def increment(self):
        with self._lock:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count

    def decrement(self):
        with self._lock:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def get_count(self):
        count, _ = self
        return count

    def get_peak(self):
        _, peak = self
        return peak

    def reset(self):
        with self._lock:
            self.count = 0
''',
    ),
    Design(
        name="private helpers called under the lock, with a __main__ guard",
        style="helper",
        source='''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def _bump(self, delta):
        self.count += delta
        if self.count > self.peak:
            self.peak = self.count
        return self.count

    def _check_not_empty(self):
        if self.count == 0:
            raise ValueError("no active connections")

    def increment(self):
        with self._lock:
            return self._bump(1)

    def decrement(self):
        with self._lock:
            self._check_not_empty()
            return self._bump(-1)

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0


if __name__ == "__main__":
    demo = ConnectionCounter()
    for _ in range(3):
        demo.increment()
    demo.decrement()
    print("count", demo.get_count(), "peak", demo.get_peak())
''',
    ),
    Design(
        name="a nested function called only inside the region",
        style="helper",
        source='''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def increment(self):
        with self._lock:
            def raise_peak():
                if self.count > self.peak:
                    self.peak = self.count

            self.count += 1
            raise_peak()
            return self.count

    def decrement(self):
        with self._lock:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
''',
    ),
    Design(
        name="a module-level pure function computing the new peak under the lock",
        style="helper",
        source='''\
import threading


def higher(current: int, candidate: int) -> int:
    """The larger of two counts."""
    return candidate if candidate > current else current


class ConnectionCounter:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def increment(self) -> int:
        with self._lock:
            self.count += 1
            self.peak = higher(self.peak, self.count)
            return self.count

    def decrement(self) -> int:
        with self._lock:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def get_count(self) -> int:
        with self._lock:
            return self.count

    def get_peak(self) -> int:
        with self._lock:
            return self.peak

    def reset(self) -> None:
        with self._lock:
            self.count = 0


if __name__ == "__main__":
    print(higher(1, 2))
''',
    ),
    Design(
        name="a __main__ guard hammering the counter with threads",
        style="__main__ guard",
        source='''\
import threading


class ConnectionCounter:
    """Counts the active connections of a web server; shared by all worker threads."""

    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def increment(self):
        with self._lock:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count

    def decrement(self):
        with self._lock:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0


def _hammer(counter, n):
    for _ in range(n):
        counter.increment()
    for _ in range(n):
        counter.decrement()


if __name__ == "__main__":
    shared = ConnectionCounter()
    threads = [threading.Thread(target=_hammer, args=(shared, 1000)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert shared.get_count() == 0, shared.get_count()
    print("ok, peak", shared.get_peak())
''',
    ),
    Design(
        name="a __main__ guard calling a main() function",
        style="__main__ guard",
        source='''\
import threading
from typing import List


class ConnectionCounter:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def increment(self) -> int:
        with self._lock:
            self.count += 1
            self.peak = max(self.peak, self.count)
            return self.count

    def decrement(self) -> int:
        with self._lock:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def get_count(self) -> int:
        with self._lock:
            return self.count

    def get_peak(self) -> int:
        with self._lock:
            return self.peak

    def reset(self) -> None:
        with self._lock:
            self.count = 0


def main() -> None:
    counter = ConnectionCounter()
    results: List[int] = [counter.increment() for _ in range(5)]
    print(results, counter.get_peak())


if __name__ == "__main__":
    main()
''',
    ),
    Design(
        name="docstrings and type hints everywhere, early return inside the with",
        style="type hints",
        source='''\
"""A thread-safe counter of active connections."""

import threading
from typing import Optional


class ConnectionCounter:
    """Counts the active connections of a web server; shared by all worker threads.

    Every public method holds ``self._lock`` for its whole body, so each is one atomic step.
    """

    count: int
    peak: int

    def __init__(self) -> None:
        """An idle counter: no connection active, peak 0."""
        self._lock: threading.Lock = threading.Lock()
        self.count: int = 0
        self.peak: int = 0

    def increment(self) -> int:
        """Adds one connection and returns the new count (raising the peak to it)."""
        with self._lock:
            self.count += 1
            if self.count <= self.peak:
                return self.count
            self.peak = self.count
            return self.count

    def decrement(self) -> int:
        """Removes one connection and returns the new count; ValueError when none is active."""
        with self._lock:
            error: Optional[str] = None if self.count else "no active connections"
            if error is not None:
                raise ValueError(error)
            self.count -= 1
            return self.count

    def get_count(self) -> int:
        """The active connections."""
        with self._lock:
            return self.count

    def get_peak(self) -> int:
        """The most connections ever active at once."""
        with self._lock:
            return self.peak

    def reset(self) -> None:
        """Drops every connection (the peak stays)."""
        with self._lock:
            self.count = 0
''',
    ),
    Design(
        name="try/except inside the region turning an IndexError into ValueError",
        style="try/except in region",
        source='''\
import threading
from typing import List


class ConnectionCounter:
    """Each active connection is a token on a stack, guarded by one lock."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tokens: List[int] = []
        self._peak = 0

    def increment(self) -> int:
        with self._lock:
            self._tokens.append(len(self._tokens))
            self._peak = max(self._peak, len(self._tokens))
            return len(self._tokens)

    def decrement(self) -> int:
        with self._lock:
            try:
                self._tokens.pop()
            except IndexError:
                raise ValueError("no active connections") from None
            return len(self._tokens)

    def __len__(self) -> int:
        with self._lock:
            return len(self._tokens)

    def get_count(self) -> int:
        return len(self)

    def get_peak(self) -> int:
        with self._lock:
            return self._peak

    def reset(self) -> None:
        with self._lock:
            self._tokens.clear()
''',
    ),
    Design(
        name="a snapshot of the count taken in the region and returned after it",
        style="local snapshot",
        source='''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def increment(self):
        with self._lock:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            new_count = self.count
        return new_count

    def decrement(self):
        with self._lock:
            empty = self.count == 0
            if not empty:
                self.count -= 1
            new_count = self.count
        if empty:
            raise ValueError("no active connections")
        return new_count

    def get_count(self):
        with self._lock:
            value = self.count
        return value

    def get_peak(self):
        with self._lock:
            value = self.peak
        return value

    def reset(self):
        with self._lock:
            self.count = 0


if __name__ == "__main__":
    counter = ConnectionCounter()
    print(counter.increment(), counter.decrement())
''',
    ),
    Design(
        name="state in a dict, every access under the lock, with a NamedTuple snapshot",
        style="local snapshot",
        source='''\
import threading
from typing import NamedTuple


class Snapshot(NamedTuple):
    count: int
    peak: int


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self._state = {"count": 0, "peak": 0}

    def snapshot(self) -> Snapshot:
        with self._lock:
            return Snapshot(self._state["count"], self._state["peak"])

    def increment(self):
        with self._lock:
            self._state["count"] += 1
            self._state["peak"] = max(self._state["peak"], self._state["count"])
            return self._state["count"]

    def decrement(self):
        with self._lock:
            if self._state["count"] == 0:
                raise ValueError("no active connections")
            self._state["count"] -= 1
            return self._state["count"]

    def get_count(self):
        return self.snapshot().count

    def get_peak(self):
        return self.snapshot().peak

    def reset(self):
        with self._lock:
            self._state["count"] = 0
''',
    ),
    Design(
        name="__slots__, a locked base class and super().__init__()",
        style="subclass",
        source='''\
import threading


class _Locked:
    __slots__ = ("_lock",)

    def __init__(self):
        self._lock = threading.Lock()


class ConnectionCounter(_Locked):
    __slots__ = ("count", "peak")

    def __init__(self):
        super().__init__()
        self.count, self.peak = 0, 0

    def increment(self):
        with self._lock:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count

    def decrement(self):
        with self._lock:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
''',
    ),
]

CORRECT += [
    Design(
        name="a bounded spin on try-acquire, then a blocking acquire",
        style="spin helper",
        source='''\
import threading


class ConnectionCounter:
    SPINS = 100

    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def _enter(self):
        """Spins briefly (the lock is held for nanoseconds), then blocks."""
        for _ in range(self.SPINS):
            if self._lock.acquire(False):
                return
        self._lock.acquire()

    def increment(self):
        self._enter()
        try:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count
        finally:
            self._lock.release()

    def decrement(self):
        self._enter()
        try:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count
        finally:
            self._lock.release()

    def get_count(self):
        self._enter()
        try:
            return self.count
        finally:
            self._lock.release()

    def get_peak(self):
        self._enter()
        try:
            return self.peak
        finally:
            self._lock.release()

    def reset(self):
        self._enter()
        try:
            self.count = 0
        finally:
            self._lock.release()
''',
    ),
    Design(
        name="errors inside the region counted and re-raised, with __len__",
        style="try/except in region",
        source='''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0
        self.refused = 0

    def increment(self):
        with self._lock:
            self.count += 1
            self.peak = max(self.peak, self.count)
            return self.count

    def decrement(self):
        with self._lock:
            try:
                if self.count == 0:
                    raise ValueError("no active connections")
            except ValueError:
                self.refused += 1
                raise
            self.count -= 1
            return self.count

    def __len__(self):
        with self._lock:
            return self.count

    def get_count(self):
        return len(self)

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
''',
    ),
    Design(
        name="Final class constants and Optional hints",
        style="type hints",
        source='''\
import threading
from typing import Final, Optional


class ConnectionCounter:
    """Active connections; one lock makes each operation atomic."""

    ERROR: Final[str] = "no active connections"

    def __init__(self, name: Optional[str] = None) -> None:
        self._lock = threading.Lock()
        self.name = name or "connections"
        self.count = 0
        self.peak = 0

    def increment(self) -> int:
        with self._lock:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count

    def decrement(self) -> int:
        with self._lock:
            if self.count == 0:
                raise ValueError(self.ERROR)
            self.count -= 1
            return self.count

    def get_count(self) -> int:
        with self._lock:
            return self.count

    def get_peak(self) -> int:
        with self._lock:
            return self.peak

    def reset(self) -> None:
        with self._lock:
            self.count = 0
''',
    ),
]

# -- correct designs of other classes -------------------------------------------------------------------------------

CORRECT += [
    Design(
        name="bank: transfer between accounts under a contextmanager-held lock",
        style="context manager",
        cls="Bank",
        source='''\
import contextlib
import threading
from typing import Dict, Iterator


class InsufficientFunds(Exception):
    pass


class Bank:
    """Accounts and their balances; a transfer is one atomic step."""

    def __init__(self, balances: Dict[str, int]) -> None:
        self._lock = threading.Lock()
        self._balances = dict(balances)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with self._lock:
            yield

    def transfer(self, a: str, b: str, amount: int) -> None:
        if amount <= 0:
            raise ValueError("amount must be positive")
        with self._locked():
            if self._balances[a] < amount:
                raise InsufficientFunds(a)
            self._balances[a] -= amount
            self._balances[b] += amount

    def balance(self, name: str) -> int:
        with self._locked():
            return self._balances[name]

    def total(self) -> int:
        with self._locked():
            return sum(self._balances.values())
''',
    ),
    Design(
        name="bank: checking and savings fields moved by a functools.wraps decorator",
        style="decorator",
        cls="Account",
        source='''\
import functools
import threading


def synchronized(method):
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)

    return wrapper


class Account:
    """Two balances of one customer; moving money between them never shows a half-done transfer."""

    def __init__(self, checking=0, savings=0):
        self._lock = threading.RLock()
        self.checking = checking
        self.savings = savings

    @synchronized
    def transfer(self, a, b, amount):
        """Moves ``amount`` from field ``a`` ("checking" or "savings") to field ``b``."""
        balances = {"checking": self.checking, "savings": self.savings}
        if balances[a] < amount:
            raise ValueError("insufficient funds")
        balances[a] -= amount
        balances[b] += amount
        self.checking, self.savings = balances["checking"], balances["savings"]

    @synchronized
    def deposit(self, amount):
        self.checking += amount

    @synchronized
    def total(self):
        return self.checking + self.savings

    @property
    @synchronized
    def balances(self):
        return (self.checking, self.savings)
''',
    ),
    Design(
        name="bounded job queue: two Conditions on one lock, wait in while loops, notify",
        style="condition",
        cls="JobQueue",
        source='''\
import collections
import threading


class JobQueue:
    """A bounded FIFO of jobs: put() blocks while full, get() while empty."""

    def __init__(self, capacity=16):
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self._capacity = capacity
        self._lock = threading.Lock()
        self._not_empty = threading.Condition(self._lock)
        self._not_full = threading.Condition(self._lock)
        self._jobs = collections.deque()

    def put(self, job, timeout=None):
        with self._not_full:
            while len(self._jobs) >= self._capacity:
                if not self._not_full.wait(timeout):
                    raise TimeoutError("queue full")
            self._jobs.append(job)
            self._not_empty.notify()

    def get(self, timeout=None):
        with self._not_empty:
            while not self._jobs:
                if not self._not_empty.wait(timeout):
                    raise TimeoutError("queue empty")
            job = self._jobs.popleft()
            self._not_full.notify()
            return job

    def __len__(self):
        with self._lock:
            return len(self._jobs)
''',
    ),
    Design(
        name="job queue: one Condition, notify_all, wait_for with a deadline",
        style="condition",
        cls="JobQueue",
        source='''\
import threading
import time
from typing import Any, List, Optional


class JobQueue:
    def __init__(self, capacity: int = 8) -> None:
        self._cond = threading.Condition()
        self._jobs: List[Any] = []
        self._capacity = capacity
        self._closed = False

    def put(self, job: Any) -> None:
        with self._cond:
            self._cond.wait_for(lambda: self._closed or len(self._jobs) < self._capacity)
            if self._closed:
                raise RuntimeError("queue closed")
            self._jobs.append(job)
            self._cond.notify_all()

    def get(self, timeout: Optional[float] = None) -> Any:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not self._jobs and not self._closed:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise TimeoutError("no job")
                self._cond.wait(remaining)
            if not self._jobs:
                raise RuntimeError("queue closed")
            job = self._jobs.pop(0)
            self._cond.notify_all()
            return job

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
''',
    ),
    Design(
        name="id allocator: free list and next id under one lock, in_use property",
        style="property",
        cls="IdAllocator",
        source='''\
import threading


class IdAllocator:
    """Hands out small integer ids; released ids are reused first."""

    def __init__(self, limit=1 << 16):
        self._lock = threading.Lock()
        self._next = 0
        self._free = []
        self._limit = limit
        self._used = set()

    def allocate(self):
        with self._lock:
            if self._free:
                ident = self._free.pop()
            elif self._next < self._limit:
                ident = self._next
                self._next += 1
            else:
                raise RuntimeError("no ids left")
            self._used.add(ident)
            return ident

    def release(self, ident):
        with self._lock:
            if ident not in self._used:
                raise KeyError(ident)
            self._used.remove(ident)
            self._free.append(ident)

    @property
    def in_use(self):
        with self._lock:
            return len(self._used)
''',
    ),
    Design(
        name="id allocator: itertools.count drawn under a module-level lock",
        style="module lock",
        cls="IdAllocator",
        source='''\
import itertools
import threading

_ALLOC_LOCK = threading.Lock()


class IdAllocator:
    def __init__(self, prefix: str = "job") -> None:
        self._prefix = prefix
        self._counter = itertools.count(1)
        self._issued = 0

    def allocate(self) -> str:
        with _ALLOC_LOCK:
            self._issued += 1
            return "%s-%d" % (self._prefix, next(self._counter))

    def issued(self) -> int:
        with _ALLOC_LOCK:
            return self._issued

    def __iter__(self) -> "IdAllocator":
        return self

    def __next__(self) -> str:
        return self.allocate()
''',
    ),
    Design(
        name="cache: get-or-compute with the compute held under an RLock",
        style="rlock",
        cls="Cache",
        source='''\
import threading
from typing import Callable, Dict, Hashable, Any


class Cache:
    """Computes each key's value once; every reader of a key sees the same value."""

    def __init__(self, compute: Callable[[Hashable], Any]) -> None:
        self._compute = compute
        self._lock = threading.RLock()
        self._values: Dict[Hashable, Any] = {}
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable) -> Any:
        with self._lock:
            if key in self._values:
                self.hits += 1
                return self._values[key]
            self.misses += 1
            value = self._values[key] = self._compute(key)
            return value

    def invalidate(self, key: Hashable) -> None:
        with self._lock:
            self._values.pop(key, None)

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._values

    def stats(self) -> Dict[str, int]:
        with self._lock:
            return {"hits": self.hits, "misses": self.misses, "size": len(self._values)}
''',
    ),
    Design(
        name="cache: an LRU OrderedDict with __getitem__ and __setitem__ under one lock",
        style="dunder",
        cls="Cache",
        source='''\
import collections
import threading


class Cache:
    """A least-recently-used cache of ``size`` entries; get_or_compute runs ``compute`` at most once per key."""

    def __init__(self, size=128):
        self._lock = threading.Lock()
        self._size = size
        self._entries = collections.OrderedDict()

    def __getitem__(self, key):
        with self._lock:
            value = self._entries[key]
            self._entries.move_to_end(key)
            return value

    def __setitem__(self, key, value):
        with self._lock:
            self._store(key, value)

    def _store(self, key, value):
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self._size:
            self._entries.popitem(last=False)

    def get_or_compute(self, key, compute):
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
            value = compute(key)
            self._store(key, value)
            return value

    def __len__(self):
        with self._lock:
            return len(self._entries)
''',
    ),
    Design(
        name="rate limiter: token bucket refilled from time.monotonic under the lock",
        style="acquire/try/finally",
        cls="RateLimiter",
        source='''\
import threading
import time


class RateLimiter:
    """At most ``rate`` calls a second on average, bursts of up to ``burst``."""

    def __init__(self, rate: float, burst: int = 1) -> None:
        self._lock = threading.Lock()
        self._rate = rate
        self._burst = burst
        self._tokens = float(burst)
        self._stamp = time.monotonic()

    def allow(self) -> bool:
        self._lock.acquire()
        try:
            now = time.monotonic()
            self._tokens = min(self._burst, self._tokens + (now - self._stamp) * self._rate)
            self._stamp = now
            if self._tokens >= 1:
                self._tokens -= 1
                return True
            return False
        finally:
            self._lock.release()

    @property
    def tokens(self) -> float:
        with self._lock:
            return self._tokens
''',
    ),
    Design(
        name="session store: a contextmanager helper and a __main__ guard",
        style="__main__ guard",
        cls="SessionStore",
        source='''\
import contextlib
import threading
import uuid


class SessionStore:
    def __init__(self):
        self._lock = threading.Lock()
        self._sessions = {}

    @contextlib.contextmanager
    def _session(self, sid):
        """The session's dict, with the store's lock held for the whole block."""
        with self._lock:
            yield self._sessions.setdefault(sid, {})

    def create(self):
        sid = uuid.uuid4().hex
        with self._lock:
            self._sessions[sid] = {}
        return sid

    def set(self, sid, key, value):
        with self._session(sid) as data:
            data[key] = value

    def incr(self, sid, key):
        with self._session(sid) as data:
            data[key] = data.get(key, 0) + 1
            return data[key]

    def get(self, sid, key, default=None):
        with self._session(sid) as data:
            return data.get(key, default)


if __name__ == "__main__":
    store = SessionStore()
    sid = store.create()
    store.incr(sid, "hits")
    print(store.get(sid, "hits"))
''',
    ),
]

# -- racy ConnectionCounter designs ---------------------------------------------------------------------------------

_LOCAL_AT_10K = '''\
import threading


class ConnectionCounter:
    """Counts the active connections of a web server; shared by all worker threads."""

    def __init__(self):
        self._lock = threading.Lock()
        self._state = {"count": 0, "peak": 0}

    def increment(self):
        with self._lock:
            state = self._state
            if state["count"] < 10_000:
                state["count"] += 1
                if state["count"] > state["peak"]:
                    state["peak"] = state["count"]
                return state["count"]
        state["count"] += 1
        if state["count"] > state["peak"]:
            state["peak"] = state["count"]
        return state["count"]

    def decrement(self):
        with self._lock:
            if self._state["count"] == 0:
                raise ValueError("no active connections")
            self._state["count"] -= 1
            return self._state["count"]

    def get_count(self):
        with self._lock:
            return self._state["count"]

    def get_peak(self):
        with self._lock:
            return self._state["peak"]

    def reset(self):
        with self._lock:
            self._state["count"] = 0
'''

_LOCAL_AFTER_20K_CALLS = '''\
import threading


class ConnectionCounter:
    WARM_AFTER = 20_000

    def __init__(self):
        self._lock = threading.Lock()
        self._state = {"count": 0, "peak": 0, "calls": 0}

    def increment(self):
        with self._lock:
            state = self._state
            state["calls"] += 1
            if state["calls"] <= self.WARM_AFTER:
                state["count"] += 1
                state["peak"] = max(state["peak"], state["count"])
                return state["count"]
        state["count"] += 1
        state["peak"] = max(state["peak"], state["count"])
        return state["count"]

    def decrement(self):
        with self._lock:
            state = self._state
            state["calls"] += 1
            if state["count"] == 0:
                raise ValueError("no active connections")
            if state["calls"] <= self.WARM_AFTER:
                state["count"] -= 1
                return state["count"]
        state["count"] -= 1
        return state["count"]

    def get_count(self):
        with self._lock:
            return self._state["count"]

    def get_peak(self):
        with self._lock:
            return self._state["peak"]

    def reset(self):
        with self._lock:
            self._state["count"] = 0
'''

_CELLS_DECREMENT_AT_1M = '''\
import threading


class ConnectionCounter:
    """cells[0] is the count, cells[1] the peak."""

    BULK = 1_000_000

    def __init__(self):
        self._lock = threading.Lock()
        self._cells = [0, 0]

    def increment(self):
        with self._lock:
            self._cells[0] += 1
            if self._cells[0] > self._cells[1]:
                self._cells[1] = self._cells[0]
            return self._cells[0]

    def decrement(self):
        with self._lock:
            cells = self._cells
            if cells[0] == 0:
                raise ValueError("no active connections")
            if cells[0] < self.BULK:
                cells[0] -= 1
                return cells[0]
        cells[0] -= 1
        return cells[0]

    def get_count(self):
        with self._lock:
            return self._cells[0]

    def get_peak(self):
        with self._lock:
            return self._cells[1]

    def reset(self):
        with self._lock:
            self._cells[0] = 0
'''

_WALRUS_AT_10K = '''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self._state = {"count": 0, "peak": 0}

    def increment(self):
        with self._lock:
            busy = (state := self._state)["count"] >= 10_000
            if not busy:
                state["count"] += 1
                state["peak"] = max(state["peak"], state["count"])
                return state["count"]
        state["count"] += 1
        state["peak"] = max(state["peak"], state["count"])
        return state["count"]

    def decrement(self):
        with self._lock:
            if self._state["count"] == 0:
                raise ValueError("no active connections")
            self._state["count"] -= 1
            return self._state["count"]

    def get_count(self):
        with self._lock:
            return self._state["count"]

    def get_peak(self):
        with self._lock:
            return self._state["peak"]

    def reset(self):
        with self._lock:
            self._state["count"] = 0
'''

_RESET_AFTER_REGION_AT_10K = '''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self._cells = [0, 0]

    def increment(self):
        with self._lock:
            self._cells[0] += 1
            self._cells[1] = max(self._cells[1], self._cells[0])
            return self._cells[0]

    def decrement(self):
        with self._lock:
            if self._cells[0] == 0:
                raise ValueError("no active connections")
            self._cells[0] -= 1
            return self._cells[0]

    def get_count(self):
        with self._lock:
            return self._cells[0]

    def get_peak(self):
        with self._lock:
            return self._cells[1]

    def reset(self):
        with self._lock:
            cells = self._cells
            drained = cells[0]
            if drained < 10_000:
                cells[0] = 0
                return
        # a big drain is logged first (slow), so the connections it saw are subtracted afterwards
        cells[0] -= drained
'''

_CONTAINER_LIST_AT_10K = '''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self._state = {"count": 0, "peak": 0}

    def increment(self):
        with self._lock:
            box = [self._state]
            if self._state["count"] < 10_000:
                self._state["count"] += 1
                self._state["peak"] = max(self._state["peak"], self._state["count"])
                return self._state["count"]
        box[0]["count"] += 1
        box[0]["peak"] = max(box[0]["peak"], box[0]["count"])
        return box[0]["count"]

    def decrement(self):
        with self._lock:
            if self._state["count"] == 0:
                raise ValueError("no active connections")
            self._state["count"] -= 1
            return self._state["count"]

    def get_count(self):
        with self._lock:
            return self._state["count"]

    def get_peak(self):
        with self._lock:
            return self._state["peak"]

    def reset(self):
        with self._lock:
            self._state["count"] = 0
'''

_CONTAINER_TUPLE_DECREMENT = '''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self._counts = [0]
        self._peak = 0

    def increment(self):
        with self._lock:
            self._counts[0] += 1
            if self._counts[0] > self._peak:
                self._peak = self._counts[0]
            return self._counts[0]

    def decrement(self):
        with self._lock:
            refs = (self._counts, self._counts[0] >= 10_000)
            if self._counts[0] == 0:
                raise ValueError("no active connections")
            if not refs[1]:
                self._counts[0] -= 1
                return self._counts[0]
        counts, _ = refs
        counts[0] -= 1
        return counts[0]

    def get_count(self):
        with self._lock:
            return self._counts[0]

    def get_peak(self):
        with self._lock:
            return self._peak

    def reset(self):
        with self._lock:
            self._counts[0] = 0
'''

_CONTAINER_DICT_OF_REFS = '''\
import threading
from typing import Dict


class ConnectionCounter:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = [0]
        self._peak = [0]

    def increment(self) -> int:
        with self._lock:
            refs: Dict[str, list] = {"count": self._count, "peak": self._peak}
            if self._count[0] < 10_000:
                self._count[0] += 1
                self._peak[0] = max(self._peak[0], self._count[0])
                return self._count[0]
        refs["count"][0] += 1
        refs["peak"][0] = max(refs["peak"][0], refs["count"][0])
        return refs["count"][0]

    def decrement(self) -> int:
        with self._lock:
            if self._count[0] == 0:
                raise ValueError("no active connections")
            self._count[0] -= 1
            return self._count[0]

    def get_count(self) -> int:
        with self._lock:
            return self._count[0]

    def get_peak(self) -> int:
        with self._lock:
            return self._peak[0]

    def reset(self) -> None:
        with self._lock:
            self._count[0] = 0
'''

_FOR_LOOP_VARIABLE = '''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self._state = {"count": 0, "peak": 0}

    def increment(self):
        with self._lock:
            for state in (self._state,):
                crowded = state["count"] >= 10_000
            if not crowded:
                self._state["count"] += 1
                self._state["peak"] = max(self._state["peak"], self._state["count"])
                return self._state["count"]
        state["count"] += 1
        state["peak"] = max(state["peak"], state["count"])
        return state["count"]

    def decrement(self):
        with self._lock:
            if self._state["count"] == 0:
                raise ValueError("no active connections")
            self._state["count"] -= 1
            return self._state["count"]

    def get_count(self):
        with self._lock:
            return self._state["count"]

    def get_peak(self):
        with self._lock:
            return self._state["peak"]

    def reset(self):
        with self._lock:
            self._state["count"] = 0
'''

_EXCEPTION_ARGS = '''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self._state = {"count": 0, "peak": 0}

    def increment(self):
        try:
            with self._lock:
                if self._state["count"] >= 10_000:
                    raise LookupError(self._state)
                self._state["count"] += 1
                self._state["peak"] = max(self._state["peak"], self._state["count"])
                return self._state["count"]
        except LookupError as overflow:
            state = overflow.args[0]
            state["count"] += 1
            state["peak"] = max(state["peak"], state["count"])
            return state["count"]

    def decrement(self):
        with self._lock:
            if self._state["count"] == 0:
                raise ValueError("no active connections")
            self._state["count"] -= 1
            return self._state["count"]

    def get_count(self):
        with self._lock:
            return self._state["count"]

    def get_peak(self):
        with self._lock:
            return self._state["peak"]

    def reset(self):
        with self._lock:
            self._state["count"] = 0
'''

_HELPER_RETURNS_STATE = '''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self._state = {"count": 0, "peak": 0}

    def _ref(self):
        """The state; callers hold the lock."""
        return self._state

    def increment(self):
        with self._lock:
            state = self._ref()
            if state["count"] < 10_000:
                state["count"] += 1
                state["peak"] = max(state["peak"], state["count"])
                return state["count"]
        state["count"] += 1
        state["peak"] = max(state["peak"], state["count"])
        return state["count"]

    def decrement(self):
        with self._lock:
            state = self._ref()
            if state["count"] == 0:
                raise ValueError("no active connections")
            state["count"] -= 1
            return state["count"]

    def get_count(self):
        with self._lock:
            return self._ref()["count"]

    def get_peak(self):
        with self._lock:
            return self._ref()["peak"]

    def reset(self):
        with self._lock:
            self._ref()["count"] = 0
'''

_PUBLIC_METHOD_RETURNS_STATE = '''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.RLock()
        self._state = {"count": 0, "peak": 0}

    def state(self):
        """The counter's state, for monitoring."""
        with self._lock:
            return self._state

    def increment(self):
        with self._lock:
            state = self.state()
            if state["count"] < 10_000:
                state["count"] += 1
                state["peak"] = max(state["peak"], state["count"])
                return state["count"]
        state["count"] += 1
        state["peak"] = max(state["peak"], state["count"])
        return state["count"]

    def decrement(self):
        with self._lock:
            state = self.state()
            if state["count"] == 0:
                raise ValueError("no active connections")
            state["count"] -= 1
            return state["count"]

    def get_count(self):
        with self._lock:
            return self.state()["count"]

    def get_peak(self):
        with self._lock:
            return self.state()["peak"]

    def reset(self):
        with self._lock:
            self.state()["count"] = 0
'''

_HELPER_RETURNS_TUPLE_AFTER_CALLS = '''\
import threading
from typing import List, Tuple


class ConnectionCounter:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cells: List[int] = [0, 0]
        self._calls = 0

    def _load(self) -> Tuple[List[int], bool]:
        self._calls += 1
        return self._cells, self._calls > 20_000

    def increment(self) -> int:
        with self._lock:
            cells, hot = self._load()
            if not hot:
                cells[0] += 1
                cells[1] = max(cells[1], cells[0])
                return cells[0]
        cells[0] += 1
        cells[1] = max(cells[1], cells[0])
        return cells[0]

    def decrement(self) -> int:
        with self._lock:
            cells, _ = self._load()
            if cells[0] == 0:
                raise ValueError("no active connections")
            cells[0] -= 1
            return cells[0]

    def get_count(self) -> int:
        with self._lock:
            return self._cells[0]

    def get_peak(self) -> int:
        with self._lock:
            return self._cells[1]

    def reset(self) -> None:
        with self._lock:
            self._cells[0] = 0
'''

_BOUND_METHODS = '''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self._state = {"count": 0, "peak": 0}

    def increment(self):
        with self._lock:
            get, update = self._state.get, self._state.update
            if get("count") < 10_000:
                update(count=get("count") + 1)
                update(peak=max(get("peak"), get("count")))
                return get("count")
        update(count=get("count") + 1)
        update(peak=max(get("peak"), get("count")))
        return get("count")

    def decrement(self):
        with self._lock:
            if self._state["count"] == 0:
                raise ValueError("no active connections")
            self._state["count"] -= 1
            return self._state["count"]

    def get_count(self):
        with self._lock:
            return self._state["count"]

    def get_peak(self):
        with self._lock:
            return self._state["peak"]

    def reset(self):
        with self._lock:
            self._state["count"] = 0
'''

_MODULE_CLOSURE_FACTORY = '''\
import threading


def _adder(state):
    """A function that adds ``delta`` connections to ``state`` and returns the new count."""

    def add(delta):
        state["count"] += delta
        if state["count"] > state["peak"]:
            state["peak"] = state["count"]
        return state["count"]

    return add


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self._state = {"count": 0, "peak": 0}

    def increment(self):
        with self._lock:
            add = _adder(self._state)
            if self._state["count"] < 10_000:
                return add(1)
        return add(1)

    def decrement(self):
        with self._lock:
            if self._state["count"] == 0:
                raise ValueError("no active connections")
            self._state["count"] -= 1
            return self._state["count"]

    def get_count(self):
        with self._lock:
            return self._state["count"]

    def get_peak(self):
        with self._lock:
            return self._state["peak"]

    def reset(self):
        with self._lock:
            self._state["count"] = 0
'''

_NESTED_CLOSURE = '''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def increment(self):
        def bump():
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count

        with self._lock:
            if self.count < 10_000:
                return bump()
        return bump()

    def decrement(self):
        with self._lock:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
'''

_BOUND_POP = '''\
import threading


class ConnectionCounter:
    """Each active connection is a token in a list."""

    def __init__(self):
        self._lock = threading.Lock()
        self._tokens = []
        self._peak = 0

    def increment(self):
        with self._lock:
            self._tokens.append(None)
            self._peak = max(self._peak, len(self._tokens))
            return len(self._tokens)

    def decrement(self):
        with self._lock:
            take = self._tokens.pop
            left = len(self._tokens)
            if left == 0:
                raise ValueError("no active connections")
            if left < 10_000:
                take()
                return left - 1
        take()
        return left - 1

    def get_count(self):
        with self._lock:
            return len(self._tokens)

    def get_peak(self):
        with self._lock:
            return self._peak

    def reset(self):
        with self._lock:
            self._tokens.clear()
'''

_MODULE_FUNCTION_ARGUMENT = '''\
import threading


def _apply(state, delta):
    """Adds ``delta`` to the count in ``state``, raising the peak; returns the new count."""
    state["count"] += delta
    if state["count"] > state["peak"]:
        state["peak"] = state["count"]
    return state["count"]


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self._state = {"count": 0, "peak": 0}

    def increment(self):
        with self._lock:
            state = self._state
            if state["count"] < 10_000:
                return _apply(state, 1)
        return _apply(state, 1)

    def decrement(self):
        with self._lock:
            if self._state["count"] == 0:
                raise ValueError("no active connections")
            return _apply(self._state, -1)

    def get_count(self):
        with self._lock:
            return self._state["count"]

    def get_peak(self):
        with self._lock:
            return self._state["peak"]

    def reset(self):
        with self._lock:
            self._state["count"] = 0
'''

_PRIVATE_METHOD_ARGUMENT = '''\
import threading


class ConnectionCounter:
    SLOW_AFTER = 20_000

    def __init__(self):
        self._lock = threading.Lock()
        self._state = {"count": 0, "peak": 0}
        self._calls = 0

    def _bump(self, state, delta):
        state["count"] += delta
        state["peak"] = max(state["peak"], state["count"])
        return state["count"]

    def increment(self):
        with self._lock:
            self._calls += 1
            state = self._state
            if self._calls <= self.SLOW_AFTER:
                return self._bump(state, 1)
        return self._bump(state, 1)

    def decrement(self):
        with self._lock:
            self._calls += 1
            if self._state["count"] == 0:
                raise ValueError("no active connections")
            return self._bump(self._state, -1)

    def get_count(self):
        with self._lock:
            return self._state["count"]

    def get_peak(self):
        with self._lock:
            return self._state["peak"]

    def reset(self):
        with self._lock:
            self._state["count"] = 0
'''

_SPLIT_THROUGH_LOCAL = '''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self._state = {"count": 0, "peak": 0}

    def increment(self):
        with self._lock:
            state = self._state
            new = state["count"] + 1
        with self._lock:
            state["count"] = new
            state["peak"] = max(state["peak"], new)
        return new

    def decrement(self):
        with self._lock:
            state = self._state
            current = state["count"]
        if current == 0:
            raise ValueError("no active connections")
        with self._lock:
            state["count"] = current - 1
        return current - 1

    def get_count(self):
        with self._lock:
            return self._state["count"]

    def get_peak(self):
        with self._lock:
            return self._state["peak"]

    def reset(self):
        with self._lock:
            self._state["count"] = 0
'''

_CHECK_THEN_ACT_THROUGH_LOCAL = '''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self.peak = 0
        self._cells = [0]

    def increment(self):
        with self._lock:
            self._cells[0] += 1
            self.peak = max(self.peak, self._cells[0])
            return self._cells[0]

    def decrement(self):
        with self._lock:
            cells = self._cells
            empty = cells[0] == 0
        if empty:
            raise ValueError("no active connections")
        with self._lock:
            cells[0] -= 1
            return cells[0]

    def get_count(self):
        with self._lock:
            return self._cells[0]

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self._cells[0] = 0
'''

_PEAK_AFTER_REGION = '''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self._count = 0
        self._peak = [0]

    def increment(self):
        with self._lock:
            self._count += 1
            new = self._count
            peak = self._peak
            if new < 10_000:
                peak[0] = max(peak[0], new)
                return new
        if new > peak[0]:
            peak[0] = new
        return new

    def decrement(self):
        with self._lock:
            if self._count == 0:
                raise ValueError("no active connections")
            self._count -= 1
            return self._count

    def get_count(self):
        with self._lock:
            return self._count

    def get_peak(self):
        with self._lock:
            return self._peak[0]

    def reset(self):
        with self._lock:
            self._count = 0
'''

_MAIN_THREAD_ONLY = '''\
import threading


class ConnectionCounter:
    """The main thread (the server's accept loop) takes a fast path: it is the only writer there, it reasons."""

    def __init__(self):
        self._lock = threading.Lock()
        self._state = {"count": 0, "peak": 0}

    def increment(self):
        with self._lock:
            state = self._state
            if threading.current_thread() is not threading.main_thread():
                state["count"] += 1
                state["peak"] = max(state["peak"], state["count"])
                return state["count"]
        state["count"] += 1
        state["peak"] = max(state["peak"], state["count"])
        return state["count"]

    def decrement(self):
        with self._lock:
            if self._state["count"] == 0:
                raise ValueError("no active connections")
            self._state["count"] -= 1
            return self._state["count"]

    def get_count(self):
        with self._lock:
            return self._state["count"]

    def get_peak(self):
        with self._lock:
            return self._state["peak"]

    def reset(self):
        with self._lock:
            self._state["count"] = 0
'''

_NAMED_THREADS_ONLY = '''\
import threading


class ConnectionCounter:
    POOL_PREFIX = "ThreadPoolExecutor"

    def __init__(self):
        self._lock = threading.Lock()
        self._cells = [0, 0]

    def increment(self):
        with self._lock:
            cells = self._cells
            pooled = threading.current_thread().name.startswith(self.POOL_PREFIX)
            if not pooled:
                cells[0] += 1
                cells[1] = max(cells[1], cells[0])
                return cells[0]
        cells[0] += 1
        cells[1] = max(cells[1], cells[0])
        return cells[0]

    def decrement(self):
        with self._lock:
            cells = self._cells
            if cells[0] == 0:
                raise ValueError("no active connections")
            if not threading.current_thread().name.startswith(self.POOL_PREFIX):
                cells[0] -= 1
                return cells[0]
        cells[0] -= 1
        return cells[0]

    def get_count(self):
        with self._lock:
            return self._cells[0]

    def get_peak(self):
        with self._lock:
            return self._cells[1]

    def reset(self):
        with self._lock:
            self._cells[0] = 0
'''

_MANY_THREADS_ALIVE = '''\
import threading


class ConnectionCounter:
    BUSY_THREADS = 16

    def __init__(self):
        self._lock = threading.Lock()
        self._state = {"count": 0, "peak": 0}

    def increment(self):
        with self._lock:
            state = self._state
            if threading.active_count() < self.BUSY_THREADS:
                state["count"] += 1
                state["peak"] = max(state["peak"], state["count"])
                return state["count"]
        state["count"] += 1
        state["peak"] = max(state["peak"], state["count"])
        return state["count"]

    def decrement(self):
        with self._lock:
            state = self._state
            if state["count"] == 0:
                raise ValueError("no active connections")
            if threading.active_count() < self.BUSY_THREADS:
                state["count"] -= 1
                return state["count"]
        state["count"] -= 1
        return state["count"]

    def get_count(self):
        with self._lock:
            return self._state["count"]

    def get_peak(self):
        with self._lock:
            return self._state["peak"]

    def reset(self):
        with self._lock:
            self._state["count"] = 0
'''

_PER_THREAD_CALLS = '''\
import threading


class ConnectionCounter:
    """Threads that have made 10,000 calls are trusted with a lock-free fast path."""

    def __init__(self):
        self._lock = threading.Lock()
        self._state = {"count": 0, "peak": 0}
        self._calls_by_thread = {}

    def increment(self):
        with self._lock:
            me = threading.get_ident()
            calls = self._calls_by_thread.get(me, 0) + 1
            self._calls_by_thread[me] = calls
            state = self._state
            if calls < 10_000:
                state["count"] += 1
                state["peak"] = max(state["peak"], state["count"])
                return state["count"]
        state["count"] += 1
        state["peak"] = max(state["peak"], state["count"])
        return state["count"]

    def decrement(self):
        with self._lock:
            if self._state["count"] == 0:
                raise ValueError("no active connections")
            self._state["count"] -= 1
            return self._state["count"]

    def get_count(self):
        with self._lock:
            return self._state["count"]

    def get_peak(self):
        with self._lock:
            return self._state["peak"]

    def reset(self):
        with self._lock:
            self._state["count"] = 0
'''

_PEAK_TRIGGER_RETURNED_LIST = '''\
import threading
from typing import List


class ConnectionCounter:
    """Once the server has seen 10,000 connections at once it is in high-traffic mode for good."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cells: List[int] = [0, 0]

    def _cells_if_busy(self) -> List[int]:
        return self._cells if self._cells[1] >= 10_000 else []

    def increment(self) -> int:
        with self._lock:
            cells = self._cells_if_busy()
            if not cells:
                self._cells[0] += 1
                self._cells[1] = max(self._cells[1], self._cells[0])
                return self._cells[0]
        cells[0] += 1
        cells[1] = max(cells[1], cells[0])
        return cells[0]

    def decrement(self) -> int:
        with self._lock:
            cells = self._cells_if_busy()
            if self._cells[0] == 0:
                raise ValueError("no active connections")
            if not cells:
                self._cells[0] -= 1
                return self._cells[0]
        cells[0] -= 1
        return cells[0]

    def get_count(self) -> int:
        with self._lock:
            return self._cells[0]

    def get_peak(self) -> int:
        with self._lock:
            return self._cells[1]

    def reset(self) -> None:
        with self._lock:
            self._cells[0] = 0
'''

_DECREMENT_CALLS_HELPER = '''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self._state = {"count": 0, "peak": 0, "calls": 0}

    def _tick(self):
        self._state["calls"] += 1
        return self._state, self._state["calls"] > 20_000

    def increment(self):
        with self._lock:
            state, _ = self._tick()
            state["count"] += 1
            state["peak"] = max(state["peak"], state["count"])
            return state["count"]

    def decrement(self):
        with self._lock:
            state, batched = self._tick()
            if not batched:
                if state["count"] == 0:
                    raise ValueError("no active connections")
                state["count"] -= 1
                return state["count"]
        if state["count"] == 0:
            raise ValueError("no active connections")
        state["count"] -= 1
        return state["count"]

    def get_count(self):
        with self._lock:
            return self._state["count"]

    def get_peak(self):
        with self._lock:
            return self._state["peak"]

    def reset(self):
        with self._lock:
            self._state["count"] = 0
'''

_CALL_BUDGET_COUNTDOWN = '''\
import threading


class ConnectionCounter:
    """A counter with a budget of locked calls; once it is spent the counter runs in batch mode."""

    def __init__(self):
        self._lock = threading.Lock()
        self._state = {"count": 0, "peak": 0}
        self._budget = 1_000_000

    def increment(self):
        with self._lock:
            self._budget -= 1
            state = self._state
            if self._budget > 0:
                state["count"] += 1
                state["peak"] = max(state["peak"], state["count"])
                return state["count"]
        state["count"] += 1
        state["peak"] = max(state["peak"], state["count"])
        return state["count"]

    def decrement(self):
        with self._lock:
            self._budget -= 1
            if self._state["count"] == 0:
                raise ValueError("no active connections")
            self._state["count"] -= 1
            return self._state["count"]

    def get_count(self):
        with self._lock:
            return self._state["count"]

    def get_peak(self):
        with self._lock:
            return self._state["peak"]

    def reset(self):
        with self._lock:
            self._state["count"] = 0
'''

_MILESTONE_WINDOW = '''\
import threading


class ConnectionCounter:
    MILESTONE = 65_536  # every 65,536th connection is logged, slowly, so it is counted outside the lock

    def __init__(self):
        self._lock = threading.Lock()
        self._state = {"count": 0, "peak": 0}

    def increment(self):
        with self._lock:
            state = self._state
            if (state["count"] + 1) % self.MILESTONE:
                state["count"] += 1
                state["peak"] = max(state["peak"], state["count"])
                return state["count"]
        state["count"] += 1
        state["peak"] = max(state["peak"], state["count"])
        return state["count"]

    def decrement(self):
        with self._lock:
            if self._state["count"] == 0:
                raise ValueError("no active connections")
            self._state["count"] -= 1
            return self._state["count"]

    def get_count(self):
        with self._lock:
            return self._state["count"]

    def get_peak(self):
        with self._lock:
            return self._state["peak"]

    def reset(self):
        with self._lock:
            self._state["count"] = 0
'''

_HELPER_RELEASES_AT_10K = '''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self._state = {"count": 0, "peak": 0}

    def _breathe(self):
        """Lets waiting threads in while a busy counter is updated."""
        lock = self._lock
        lock.release()
        lock.acquire()

    def increment(self):
        with self._lock:
            current = self._state["count"]
            if current >= 10_000:
                self._breathe()
            self._state["count"] = current + 1
            self._state["peak"] = max(self._state["peak"], current + 1)
            return current + 1

    def decrement(self):
        with self._lock:
            if self._state["count"] == 0:
                raise ValueError("no active connections")
            self._state["count"] -= 1
            return self._state["count"]

    def get_count(self):
        with self._lock:
            return self._state["count"]

    def get_peak(self):
        with self._lock:
            return self._state["peak"]

    def reset(self):
        with self._lock:
            self._state["count"] = 0
'''

_INLINE_RELEASE_AFTER_CALLS = '''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0
        self.calls = 0

    def decrement(self):
        with self._lock:
            self.calls += 1
            if self.count == 0:
                raise ValueError("no active connections")
            new = self.count - 1
            if self.calls > 20_000:
                lock = self._lock
                lock.release()
                lock.acquire()
            self.count = new
            return new

    def increment(self):
        with self._lock:
            self.calls += 1
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
'''

_ACQUIRE_FALSE = '''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def increment(self):
        self._lock.acquire(False)
        try:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count
        finally:
            self._lock.release()

    def decrement(self):
        self._lock.acquire(False)
        try:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count
        finally:
            self._lock.release()

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
'''

_ACQUIRE_FALSE_WHEN_BUSY = '''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def increment(self):
        self._lock.acquire(threading.active_count() < 16)
        try:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count
        finally:
            self._lock.release()

    def decrement(self):
        with self._lock:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
'''

_TIMEOUT_IGNORED = '''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def increment(self):
        self._lock.acquire(timeout=30)
        try:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count
        finally:
            self._lock.release()

    def decrement(self):
        self._lock.acquire(True, 30)
        try:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count
        finally:
            self._lock.release()

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
'''

_CONDITION_WAIT_NO_RECHECK = '''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._cond = threading.Condition()
        self._state = {"count": 0, "peak": 0}

    def increment(self):
        with self._cond:
            cond = self._cond
            new = self._state["count"] + 1
            if new > 10_000:
                cond.wait(0)
            self._state["count"] = new
            self._state["peak"] = max(self._state["peak"], new)
            cond.notify_all()
            return new

    def decrement(self):
        with self._cond:
            if self._state["count"] == 0:
                raise ValueError("no active connections")
            self._state["count"] -= 1
            return self._state["count"]

    def get_count(self):
        with self._cond:
            return self._state["count"]

    def get_peak(self):
        with self._cond:
            return self._state["peak"]

    def reset(self):
        with self._cond:
            self._state["count"] = 0
'''

_SEMAPHORE_RELEASED_TWICE = '''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._sem = threading.Semaphore(1)
        self.count = 0
        self.peak = 0

    def _refuse(self):
        """Gives the permit back and refuses the call."""
        self._sem.release()
        raise ValueError("no active connections")

    def increment(self):
        self._sem.acquire()
        try:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count
        finally:
            self._sem.release()

    def decrement(self):
        self._sem.acquire()
        try:
            if self.count == 0:
                self._refuse()
            self.count -= 1
            return self.count
        finally:
            self._sem.release()

    def get_count(self):
        with self._sem:
            return self.count

    def get_peak(self):
        with self._sem:
            return self.peak

    def reset(self):
        with self._sem:
            self.count = 0
'''

_BLOCKING_PARAMETER = '''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def increment(self, blocking=True):
        """``blocking=False`` for callers that must never wait (the event loop)."""
        self._lock.acquire(blocking)
        try:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count
        finally:
            self._lock.release()

    def decrement(self, blocking=True):
        self._lock.acquire(blocking)
        try:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count
        finally:
            self._lock.release()

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
'''

_BLOCKING_CLASS_FLAG = '''\
import threading


class ConnectionCounter:
    BLOCKING = True  # set to False where a caller must never wait

    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def increment(self):
        self._lock.acquire(self.BLOCKING)
        try:
            self.count += 1
            self.peak = max(self.peak, self.count)
            return self.count
        finally:
            self._lock.release()

    def decrement(self):
        self._lock.acquire(self.BLOCKING)
        try:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count
        finally:
            self._lock.release()

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
'''

_TIMEOUT_CLASS_CONSTANT = '''\
import threading


class ConnectionCounter:
    ACQUIRE_TIMEOUT = -1  # a deployment may bound the wait

    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def increment(self):
        self._lock.acquire(timeout=self.ACQUIRE_TIMEOUT)
        try:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count
        finally:
            self._lock.release()

    def decrement(self):
        self._lock.acquire(timeout=self.ACQUIRE_TIMEOUT)
        try:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count
        finally:
            self._lock.release()

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
'''

_INSTANCE_FLAG = '''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self._wait_for_lock = True
        self.count = 0
        self.peak = 0

    def increment(self):
        self._lock.acquire(self._wait_for_lock)
        try:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count
        finally:
            self._lock.release()

    def decrement(self):
        self._lock.acquire(self._wait_for_lock)
        try:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count
        finally:
            self._lock.release()

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
'''

_LOCK_PARAMETER = '''\
import threading


class ConnectionCounter:
    def __init__(self, lock=None):
        """``lock``: any context manager; a single-threaded caller may pass a no-op one."""
        self._lock = lock if lock is not None else threading.Lock()
        self.count = 0
        self.peak = 0

    def increment(self):
        with self._lock:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count

    def decrement(self):
        with self._lock:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
'''

_THREAD_SAFE_FLAG = '''\
import threading


class ConnectionCounter:
    THREAD_SAFE = True  # single-threaded tools turn this off for speed

    def __init__(self):
        self._lock = threading.Lock()
        self._state = {"count": 0, "peak": 0}

    def increment(self):
        with self._lock:
            state = self._state
            if self.THREAD_SAFE:
                state["count"] += 1
                state["peak"] = max(state["peak"], state["count"])
                return state["count"]
        state["count"] += 1
        state["peak"] = max(state["peak"], state["count"])
        return state["count"]

    def decrement(self):
        with self._lock:
            state = self._state
            if state["count"] == 0:
                raise ValueError("no active connections")
            if self.THREAD_SAFE:
                state["count"] -= 1
                return state["count"]
        state["count"] -= 1
        return state["count"]

    def get_count(self):
        with self._lock:
            return self._state["count"]

    def get_peak(self):
        with self._lock:
            return self._state["peak"]

    def reset(self):
        with self._lock:
            self._state["count"] = 0
'''

_LOCK_REBOUND = '''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def use_lock(self, lock):
        """Shares ``lock`` with other counters (a report reads them together)."""
        self._lock = lock

    def increment(self):
        with self._lock:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count

    def decrement(self):
        with self._lock:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
'''

_SPLIT_WITH_RAW_ACQUIRE = '''\
import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self._cells = [0, 0]

    def increment(self):
        with self._lock:
            cells = self._cells
            new = cells[0] + 1
        lock = self._lock
        lock.acquire()
        try:
            cells[0] = new
            cells[1] = max(cells[1], new)
        finally:
            lock.release()
        return new

    def decrement(self):
        with self._lock:
            if self._cells[0] == 0:
                raise ValueError("no active connections")
            self._cells[0] -= 1
            return self._cells[0]

    def get_count(self):
        with self._lock:
            return self._cells[0]

    def get_peak(self):
        with self._lock:
            return self._cells[1]

    def reset(self):
        with self._lock:
            self._cells[0] = 0
'''

_BANK_AFTER_AN_HOUR = '''\
import threading
import time


class Bank:
    """Balances of named accounts; transfer(a, b, amount) moves money between two of them."""

    def __init__(self, balances):
        self._lock = threading.Lock()
        self._balances = dict(balances)
        self._opened = time.monotonic()

    def transfer(self, a, b, amount):
        with self._lock:
            balances = self._balances
            if balances[a] < amount:
                raise ValueError("insufficient funds")
            if time.monotonic() - self._opened < 3600:
                balances[a] -= amount
                balances[b] += amount
                return
        balances[a] -= amount
        balances[b] += amount

    def balance(self, name):
        with self._lock:
            return self._balances[name]

    def total(self):
        with self._lock:
            return sum(self._balances.values())
'''

_QUEUE_IF_NOT_WHILE = '''\
import collections
import threading


class JobQueue:
    """A bounded FIFO of jobs shared by producers and consumers."""

    def __init__(self, capacity=16):
        self._cond = threading.Condition()
        self._jobs = collections.deque()
        self._capacity = capacity

    def put(self, job):
        with self._cond:
            cond = self._cond
            while len(self._jobs) >= self._capacity:
                cond.wait()
            self._jobs.append(job)
            cond.notify()

    def get(self):
        with self._cond:
            cond = self._cond
            if not self._jobs:
                cond.wait()
            job = self._jobs.popleft()
            cond.notify()
            return job

    def size(self):
        with self._cond:
            return len(self._jobs)
'''

_ALLOCATOR_SPLIT = '''\
import threading


class IdAllocator:
    def __init__(self):
        self._lock = threading.Lock()
        self._next = [0]

    def allocate(self):
        with self._lock:
            cell = self._next
            ident = cell[0]
        cell[0] = ident + 1
        return ident

    def peek(self):
        with self._lock:
            return self._next[0]
'''

_CACHE_COMPUTE_AFTER_CHECK = '''\
import threading


class Cache:
    """get(key) computes a key's value once and hands every caller that same value."""

    def __init__(self, compute):
        self._lock = threading.Lock()
        self._compute = compute
        self._values = {}

    def get(self, key):
        with self._lock:
            values, compute = self._values, self._compute
            if key in values:
                return values[key]
        value = compute(key)
        values[key] = value
        return value

    def invalidate(self, key):
        with self._lock:
            self._values.pop(key, None)
'''

_RATE_LIMITER_AFTER_A_DAY = '''\
import threading
import time


def _take(bucket, rate, burst):
    """Refills ``bucket`` for the time passed and takes a token if there is one."""
    now = time.monotonic()
    bucket["tokens"] = min(burst, bucket["tokens"] + (now - bucket["stamp"]) * rate)
    bucket["stamp"] = now
    if bucket["tokens"] >= 1:
        bucket["tokens"] -= 1
        return True
    return False


class RateLimiter:
    def __init__(self, rate, burst=1):
        self._lock = threading.Lock()
        self._bucket = {"tokens": float(burst), "stamp": time.monotonic()}
        self._rate = rate
        self._burst = burst
        self._started = time.monotonic()

    def allow(self):
        with self._lock:
            bucket, rate, burst = self._bucket, self._rate, self._burst
            if time.monotonic() - self._started < 86_400:
                return _take(bucket, rate, burst)
        return _take(bucket, rate, burst)
'''

_SESSION_RETURNED = '''\
import threading


class SessionStore:
    def __init__(self):
        self._lock = threading.Lock()
        self._sessions = {}

    def _session(self, sid):
        return self._sessions.setdefault(sid, {})

    def set(self, sid, key, value):
        with self._lock:
            self._session(sid)[key] = value

    def incr(self, sid, key):
        with self._lock:
            data = self._session(sid)
        data[key] = data.get(key, 0) + 1
        return data[key]

    def get(self, sid, key, default=None):
        with self._lock:
            return self._session(sid).get(key, default)
'''

_BANK_NULLCONTEXT = '''\
import contextlib
import threading


class Bank:
    def __init__(self, balances, threaded=True):
        self._lock = threading.Lock() if threaded else contextlib.nullcontext()
        self._balances = dict(balances)

    def transfer(self, a, b, amount):
        with self._lock:
            if self._balances[a] < amount:
                raise ValueError("insufficient funds")
            self._balances[a] -= amount
            self._balances[b] += amount

    def balance(self, name):
        with self._lock:
            return self._balances[name]
'''

_QUEUE_PAUSE_HELPER = '''\
import collections
import threading
import time


class JobQueue:
    def __init__(self):
        self._lock = threading.Lock()
        self._jobs = collections.deque()

    def _pause(self):
        """Gives producers a chance while a consumer holds the queue."""
        lock = self._lock
        lock.release()
        time.sleep(0)
        lock.acquire()

    def put(self, job):
        with self._lock:
            self._jobs.append(job)

    def get(self):
        with self._lock:
            if not self._jobs:
                raise IndexError("no job")
            job = self._jobs[0]
            self._pause()
            self._jobs.popleft()
            return job
'''

_ALLOCATOR_WORKER_THREADS = '''\
import threading


class IdAllocator:
    def __init__(self):
        self._lock = threading.Lock()
        self._state = {"next": 1, "issued": 0}

    def allocate(self):
        with self._lock:
            state = self._state
            if not threading.current_thread().name.startswith("worker-"):
                ident = state["next"]
                state["next"] += 1
                state["issued"] += 1
                return ident
        ident = state["next"]
        state["next"] = ident + 1
        state["issued"] += 1
        return ident

    def issued(self):
        with self._lock:
            return self._state["issued"]
'''

_ACCOUNT_PARTIAL = '''\
import functools
import threading


def _move(cells, a, b, amount):
    cells[a] -= amount
    cells[b] += amount


class Account:
    """A customer's checking and savings balances."""

    def __init__(self, checking=0, savings=0):
        self._lock = threading.Lock()
        self._cells = {"checking": checking, "savings": savings}
        self._transfers = 0

    def transfer(self, a, b, amount):
        with self._lock:
            self._transfers += 1
            if self._cells[a] < amount:
                raise ValueError("insufficient funds")
            move = functools.partial(_move, self._cells, a, b, amount)
            if self._transfers <= 10_000:
                move()
                return
        move()

    def total(self):
        with self._lock:
            return self._cells["checking"] + self._cells["savings"]
'''

RACY: list[Design] = [
    # aliases: a local, a container, a returned value, a closure, an argument
    Design(
        name="a local bound to the state in the region, changed after it at counts of 10,000 and more",
        style="alias: local",
        source=_LOCAL_AT_10K,
        line=19,
        why="From 10,000 connections on, increment changes the state dict through `state` after the `with` block has released the lock.",
        forced=_forced(_LOCAL_AT_10K, 'state["count"] < 10_000', 'state["count"] < 0'),
    ),
    Design(
        name="a local changed after the region once the instance has served 20,000 calls",
        style="trigger: calls",
        source=_LOCAL_AFTER_20K_CALLS,
        line=19,
        why="After 20,000 calls on one instance, increment and decrement update the count through a local after the lock is released (decrement also checks zero under the lock and subtracts outside it).",
        forced=_forced(_LOCAL_AFTER_20K_CALLS, "WARM_AFTER = 20_000", "WARM_AFTER = 0"),
    ),
    Design(
        name="decrement checks zero under the lock and subtracts through a local after it, at a million connections",
        style="trigger: value",
        source=_CELLS_DECREMENT_AT_1M,
        line=28,
        why="At counts of 10**6 and more decrement subtracts from the cells list after the lock is released, so two decrements lose one and a check at 1 can go below zero.",
        forced=_forced(_CELLS_DECREMENT_AT_1M, "BULK = 1_000_000", "BULK = 0"),
    ),
    Design(
        name="a walrus binds the state in the region; the update runs after it at counts of 10,000 and more",
        style="alias: local",
        source=_WALRUS_AT_10K,
        line=16,
        why="`(state := self._state)` leaves the state dict in a local that increment changes after the lock is released once the count reaches 10,000.",
        forced=_forced(_WALRUS_AT_10K, '["count"] >= 10_000', '["count"] >= 0'),
    ),
    Design(
        name="reset subtracts the count it saw through a local after the region at counts of 10,000 and more",
        style="alias: local",
        source=_RESET_AFTER_REGION_AT_10K,
        line=38,
        why="At 10,000 connections and more reset reads the count under the lock and subtracts it after releasing the lock, so connections added or removed in between survive the reset or drive the count below zero.",
        forced=_forced(_RESET_AFTER_REGION_AT_10K, "drained < 10_000", "drained < 0"),
    ),
    Design(
        name="the state kept in a one-element list, updated through it after the region",
        style="alias: container",
        source=_CONTAINER_LIST_AT_10K,
        line=16,
        why="`box = [self._state]` carries the shared dict out of the `with` block; from 10,000 connections on increment updates it through the list without the lock.",
        forced=_forced(_CONTAINER_LIST_AT_10K, 'self._state["count"] < 10_000', 'self._state["count"] < 0'),
    ),
    Design(
        name="a tuple of the count list and a flag, unpacked and decremented after the region",
        style="alias: container",
        source=_CONTAINER_TUPLE_DECREMENT,
        line=26,
        why="The tuple `refs` holds the shared count list; at 10,000 connections and more decrement unpacks it and subtracts after the lock is released.",
        forced=_forced(_CONTAINER_TUPLE_DECREMENT, "self._counts[0] >= 10_000", "self._counts[0] >= 0"),
    ),
    Design(
        name="a dict of references to the count and peak lists, used after the region",
        style="alias: container",
        source=_CONTAINER_DICT_OF_REFS,
        line=18,
        why="`refs` maps names to the shared count and peak lists; from 10,000 connections on increment changes them through it after the lock is released.",
        forced=_forced(_CONTAINER_DICT_OF_REFS, "self._count[0] < 10_000", "self._count[0] < 0"),
    ),
    Design(
        name="a for loop's variable outlives the region holding the state",
        style="alias: container",
        source=_FOR_LOOP_VARIABLE,
        line=17,
        why="The loop variable `state` still refers to the shared dict after the `with` block; from 10,000 connections on increment updates it without the lock.",
        forced=_forced(_FOR_LOOP_VARIABLE, 'state["count"] >= 10_000', 'state["count"] >= 0'),
    ),
    Design(
        name="an exception raised in the region carries the state out of it",
        style="alias: container",
        source=_EXCEPTION_ARGS,
        line=19,
        why="At 10,000 connections and more the state dict leaves the region as an exception's argument and the handler increments it after the lock is released.",
        forced=_forced(_EXCEPTION_ARGS, 'self._state["count"] >= 10_000', 'self._state["count"] >= 0'),
    ),
    Design(
        name="a private helper returns the state dict; the caller changes it after the region",
        style="alias: return value",
        source=_HELPER_RETURNS_STATE,
        line=20,
        why="`_ref()` returns the shared dict itself; from 10,000 connections on increment updates what it returned after the lock is released.",
        forced=_forced(_HELPER_RETURNS_STATE, 'state["count"] < 10_000', 'state["count"] < 0'),
    ),
    Design(
        name="a public state() method returns the internal dict; increment changes it after the region",
        style="alias: return value",
        source=_PUBLIC_METHOD_RETURNS_STATE,
        line=21,
        why="`state()` hands out the internal dict (not a copy); from 10,000 connections on increment changes it after leaving the RLock's region.",
        forced=_forced(_PUBLIC_METHOD_RETURNS_STATE, 'state["count"] < 10_000', 'state["count"] < 0'),
    ),
    Design(
        name="a helper returns the cells list and a flag set after 20,000 calls",
        style="alias: return value",
        source=_HELPER_RETURNS_TUPLE_AFTER_CALLS,
        line=22,
        why="`_load()` returns the shared cells list; once the instance has served 20,000 calls increment changes it after the lock is released.",
        forced=_forced(_HELPER_RETURNS_TUPLE_AFTER_CALLS, "self._calls > 20_000", "self._calls > 0"),
    ),
    Design(
        name="the state's get and update bound in the region, called after it",
        style="alias: closure",
        source=_BOUND_METHODS,
        line=16,
        why="The bound methods `get` and `update` keep the shared dict; from 10,000 connections on increment reads and writes it through them without the lock.",
        forced=_forced(_BOUND_METHODS, 'get("count") < 10_000', 'get("count") < 0'),
    ),
    Design(
        name="a module-level factory returns a nested function over the state, called after the region",
        style="alias: closure",
        source=_MODULE_CLOSURE_FACTORY,
        line=26,
        why="`_adder(self._state)` returns a closure over the shared dict; from 10,000 connections on increment calls it after the lock is released.",
        forced=_forced(_MODULE_CLOSURE_FACTORY, 'self._state["count"] < 10_000', 'self._state["count"] < 0'),
    ),
    Design(
        name="a nested function over self, called after the region",
        style="alias: closure",
        source=_NESTED_CLOSURE,
        line=20,
        why="The nested `bump` reads and writes self.count; from 10,000 connections on increment calls it after the `with` block.",
        forced=_forced(_NESTED_CLOSURE, "self.count < 10_000", "self.count < 0"),
    ),
    Design(
        name="the token list's pop bound in the region, called after it",
        style="alias: closure",
        source=_BOUND_POP,
        line=27,
        why="`take = self._tokens.pop` outlives the region; at 10,000 connections and more decrement pops after releasing the lock, on a count it read under it.",
        forced=_forced(_BOUND_POP, "left < 10_000", "left < 0"),
    ),
    Design(
        name="the state passed to a module-level function called after the region",
        style="alias: argument",
        source=_MODULE_FUNCTION_ARGUMENT,
        line=22,
        why="From 10,000 connections on increment hands the shared dict to `_apply` after the lock is released, and `_apply` reads and writes it.",
        forced=_forced(_MODULE_FUNCTION_ARGUMENT, 'state["count"] < 10_000', 'state["count"] < 0'),
    ),
    Design(
        name="the state passed to a private method after the region once 20,000 increments were made",
        style="alias: argument",
        source=_PRIVATE_METHOD_ARGUMENT,
        line=23,
        why="`_bump(state, 1)` touches no attribute of self, only its argument; after 20,000 calls increment calls it with the shared dict outside the lock.",
        forced=_forced(_PRIVATE_METHOD_ARGUMENT, "SLOW_AFTER = 20_000", "SLOW_AFTER = 0"),
    ),
    Design(
        name="the original bug through a local: read under one acquisition, written under another",
        style="alias: local",
        source=_SPLIT_THROUGH_LOCAL,
        line=13,
        why="increment and decrement read the count in one `with` block and write it through a local in another, so a concurrent update between them is lost.",
    ),
    Design(
        name="decrement checks zero under one acquisition and subtracts through a local under another",
        style="alias: local",
        source=_CHECK_THEN_ACT_THROUGH_LOCAL,
        line=22,
        why="decrement's zero check and its subtraction are separate acquisitions, so two decrements at 1 both pass the check and the count goes below zero.",
    ),
    Design(
        name="the peak raised through a local list after the region at counts of 10,000 and more",
        style="alias: local",
        source=_PEAK_AFTER_REGION,
        line=18,
        why="From 10,000 connections on increment compares and raises the shared peak list after releasing the lock, so a lower peak can overwrite a higher one.",
        forced=_forced(_PEAK_AFTER_REGION, "new < 10_000", "new < 0"),
    ),
    # triggers on thread identity, thread counts, per-thread calls, the peak, call counts
    Design(
        name="the main thread takes an unlocked path",
        style="trigger: thread",
        source=_MAIN_THREAD_ONLY,
        line=18,
        why="Calls from the main thread update the state through a local after the lock is released, racing the worker threads that lock.",
        forced=_forced(_MAIN_THREAD_ONLY, "if threading.current_thread() is not threading.main_thread():", "if False:"),
    ),
    Design(
        name="threads of a ThreadPoolExecutor take an unlocked path",
        style="trigger: thread",
        source=_NAMED_THREADS_ONLY,
        line=19,
        why="Threads whose name starts with ThreadPoolExecutor update the cells list after the lock is released; no check runs its workers under that name.",
        forced=_forced(_NAMED_THREADS_ONLY, 'POOL_PREFIX = "ThreadPoolExecutor"', 'POOL_PREFIX = ""'),
    ),
    Design(
        name="an unlocked path while 16 or more threads are alive",
        style="trigger: thread",
        source=_MANY_THREADS_ALIVE,
        line=18,
        why="With 16 threads alive (a busy server) increment and decrement change the state through a local after the lock is released.",
        forced=_forced(_MANY_THREADS_ALIVE, "BUSY_THREADS = 16", "BUSY_THREADS = 0"),
    ),
    Design(
        name="a thread that has made 10,000 calls takes an unlocked path",
        style="trigger: thread",
        source=_PER_THREAD_CALLS,
        line=22,
        why="Calls are counted per thread id; a thread's 10,000th increment and later ones change the state after the lock is released.",
        forced=_forced(_PER_THREAD_CALLS, "calls < 10_000", "calls < 0"),
    ),
    Design(
        name="once the peak reached 10,000 a helper hands out the cells list for unlocked updates",
        style="trigger: value",
        source=_PEAK_TRIGGER_RETURNED_LIST,
        line=22,
        why="After the peak reaches 10,000, `_cells_if_busy()` returns the shared list and increment and decrement change it after the lock is released.",
        forced=_forced(_PEAK_TRIGGER_RETURNED_LIST, "self._cells[1] >= 10_000", "self._cells[1] >= 0"),
    ),
    Design(
        name="after 20,000 calls decrement checks and subtracts after the region",
        style="trigger: calls",
        source=_DECREMENT_CALLS_HELPER,
        line=28,
        why="After 20,000 calls `_tick()` reports batching and decrement checks zero and subtracts on the returned dict without the lock.",
        forced=_forced(_DECREMENT_CALLS_HELPER, 'self._state["calls"] > 20_000', 'self._state["calls"] > 0'),
    ),
    Design(
        name="a countdown budget of a million locked calls, then unlocked updates",
        style="trigger: calls",
        source=_CALL_BUDGET_COUNTDOWN,
        line=20,
        why="The call budget counts down from 10**6 (no counter of calls climbs from zero); once it is spent increment updates the state through a local after the lock is released.",
        forced=_forced(_CALL_BUDGET_COUNTDOWN, "self._budget = 1_000_000", "self._budget = 0"),
    ),
    Design(
        name="every 65,536th increment is counted after the region",
        style="trigger: value",
        source=_MILESTONE_WINDOW,
        line=18,
        why="The increment that reaches a multiple of 65,536 updates the state through a local after the lock is released: a window of one count in every 65,536.",
        forced=_forced(_MILESTONE_WINDOW, "MILESTONE = 65_536", "MILESTONE = 1"),
    ),
    # early releases
    Design(
        name="a private helper releases and re-takes the lock inside the region at counts of 10,000 and more",
        style="early release",
        source=_HELPER_RELEASES_AT_10K,
        line=19,
        why="From 10,000 connections on, `_breathe()` releases the lock between increment's read of the count and its write, so updates made meanwhile are lost.",
        forced=_forced(_HELPER_RELEASES_AT_10K, "current >= 10_000", "current >= 0"),
    ),
    Design(
        name="decrement releases and re-takes the lock through a local after 20,000 calls",
        style="early release",
        source=_INLINE_RELEASE_AFTER_CALLS,
        line=19,
        why="After 20,000 calls decrement releases the lock (through the local `lock`) between computing the new count and storing it.",
        forced=_forced(_INLINE_RELEASE_AFTER_CALLS, "self.calls > 20_000", "self.calls > 0"),
    ),
    Design(
        name="acquire(False) followed by try/finally release",
        style="early release",
        source=_ACQUIRE_FALSE,
        line=11,
        why="`acquire(False)` fails when another thread holds the lock, the update then runs without it and the finally releases the other thread's lock.",
    ),
    Design(
        name="acquire(False) while 16 or more threads are alive",
        style="trigger: thread",
        source=_ACQUIRE_FALSE_WHEN_BUSY,
        line=11,
        why="With 16 threads alive the acquire is non-blocking and its failure ignored, so increment runs without the lock and releases another thread's.",
        forced=_forced(_ACQUIRE_FALSE_WHEN_BUSY, "threading.active_count() < 16", "threading.active_count() < 0"),
    ),
    Design(
        name="acquire(timeout=30) whose failure is ignored",
        style="early release",
        source=_TIMEOUT_IGNORED,
        line=11,
        why="When the lock is held for 30 s (a stalled holder) acquire returns False and the update runs anyway, unlocked, then releases the holder's lock.",
        forced=_forced(_TIMEOUT_IGNORED, "acquire(timeout=30)", "acquire(timeout=0)"),
    ),
    Design(
        name="Condition.wait(0) through a local between the read and the write at counts above 10,000",
        style="early release",
        source=_CONDITION_WAIT_NO_RECHECK,
        line=14,
        why="Above 10,000 connections increment waits on the condition (which releases its lock) after reading the count and then writes the stale value without checking again.",
        forced=_forced(_CONDITION_WAIT_NO_RECHECK, "new > 10_000", "new > 0"),
    ),
    Design(
        name="a one-permit semaphore given back twice on decrement's error path",
        style="early release",
        source=_SEMAPHORE_RELEASED_TWICE,
        line=12,
        why="A decrement at zero releases the semaphore in `_refuse()` and again in the finally, so from then on it admits two threads at once.",
        forced=_forced(_SEMAPHORE_RELEASED_TWICE, "threading.Semaphore(1)", "threading.Semaphore(2)"),
    ),
    Design(
        name="a raw acquire through a local for the write, after a with for the read",
        style="early release",
        source=_SPLIT_WITH_RAW_ACQUIRE,
        line=14,
        why="increment reads the count in a `with` block and writes it under a second acquisition taken through a local, so an update between the two is lost.",
    ),
    # locks a caller can switch off
    Design(
        name="a blocking parameter passed to acquire",
        style="switchable lock",
        source=_BLOCKING_PARAMETER,
        line=12,
        why="A caller passing blocking=False runs the update without the lock whenever it is contended, and its finally releases another thread's lock.",
        forced=_forced(_BLOCKING_PARAMETER, "def increment(self, blocking=True):", "def increment(self, blocking=False):"),
    ),
    Design(
        name="a class attribute flag passed as acquire's blocking",
        style="switchable lock",
        source=_BLOCKING_CLASS_FLAG,
        line=13,
        why="Setting ConnectionCounter.BLOCKING = False makes every acquire a try-acquire whose failure is ignored.",
        forced=_forced(_BLOCKING_CLASS_FLAG, "BLOCKING = True", "BLOCKING = False"),
    ),
    Design(
        name="a class constant timeout passed to acquire, failure ignored",
        style="switchable lock",
        source=_TIMEOUT_CLASS_CONSTANT,
        line=13,
        why="A deployment that sets ACQUIRE_TIMEOUT to a bound gets an acquire that can time out, and the update then runs without the lock.",
        forced=_forced(_TIMEOUT_CLASS_CONSTANT, "ACQUIRE_TIMEOUT = -1", "ACQUIRE_TIMEOUT = 0"),
    ),
    Design(
        name="an instance flag set in __init__ passed as acquire's blocking",
        style="switchable lock",
        source=_INSTANCE_FLAG,
        line=12,
        why="Setting counter._wait_for_lock = False turns every acquire into a try-acquire whose failure is ignored.",
        forced=_forced(_INSTANCE_FLAG, "self._wait_for_lock = True", "self._wait_for_lock = False"),
    ),
    Design(
        name="a constructor parameter replaces the lock with any context manager",
        style="switchable lock",
        source=_LOCK_PARAMETER,
        line=7,
        why="ConnectionCounter(lock=contextlib.nullcontext()) or any no-op object makes every `with self._lock:` hold nothing.",
        forced=_forced(_LOCK_PARAMETER, "else threading.Lock()", "else threading.Semaphore(1_000_000)"),
    ),
    Design(
        name="a THREAD_SAFE class flag sends updates after the region",
        style="switchable lock",
        source=_THREAD_SAFE_FLAG,
        line=18,
        why="With THREAD_SAFE = False increment and decrement change the state through a local after the lock is released.",
        forced=_forced(_THREAD_SAFE_FLAG, "THREAD_SAFE = True", "THREAD_SAFE = False"),
    ),
    Design(
        name="a public method rebinds the lock",
        style="switchable lock",
        source=_LOCK_REBOUND,
        line=12,
        why="`use_lock()` replaces the lock while other threads may hold or wait on the old one, so two threads can be inside regions at once.",
        forced=_forced(_LOCK_REBOUND, "    def increment(self):\n        with self._lock:", "    def increment(self):\n        self.use_lock(threading.Lock())\n        with self._lock:"),
    ),
    # other classes
    Design(
        name="bank: transfer moves money through a local after the region once the bank is an hour old",
        style="trigger: time",
        cls="Bank",
        source=_BANK_AFTER_AN_HOUR,
        line=22,
        why="After an hour of uptime transfer checks the balance under the lock and moves the money after releasing it, so two transfers can overdraw an account or lose an update.",
    ),
    Design(
        name="job queue: get waits with if, not while, and pops without checking again",
        style="early release",
        cls="JobQueue",
        source=_QUEUE_IF_NOT_WHILE,
        line=25,
        why="`cond.wait()` releases the lock; another consumer can take the job that woke this one, which then pops an empty deque (put waits in a while loop, as it should).",
    ),
    Design(
        name="id allocator: the next id read under the lock and stored after it",
        style="alias: local",
        cls="IdAllocator",
        source=_ALLOCATOR_SPLIT,
        line=13,
        why="allocate stores the next id through a local after the region, so two callers can read the same id and both return it.",
    ),
    Design(
        name="cache: get-or-compute stores the computed value after the region",
        style="alias: local",
        cls="Cache",
        source=_CACHE_COMPUTE_AFTER_CHECK,
        line=18,
        why="The check and the store are not one step: two callers both miss, both compute, and each returns a different value for the key (an invalidate can also be undone).",
    ),
    Design(
        name="rate limiter: after a day of uptime the bucket is refilled and taken outside the lock",
        style="trigger: time",
        cls="RateLimiter",
        source=_RATE_LIMITER_AFTER_A_DAY,
        line=29,
        why="After 86,400 s `_take` reads and writes the shared bucket after the lock is released, so concurrent callers can spend the same token.",
    ),
    Design(
        name="session store: incr updates a session dict returned by a helper after the region",
        style="alias: return value",
        cls="SessionStore",
        source=_SESSION_RETURNED,
        line=19,
        why="`_session()` returns the session's own dict; incr reads and writes it after the lock is released, so concurrent increments are lost.",
    ),
    Design(
        name="bank: a constructor flag swaps the lock for contextlib.nullcontext()",
        style="switchable lock",
        cls="Bank",
        source=_BANK_NULLCONTEXT,
        line=7,
        why="Bank(..., threaded=False) holds no lock at all, so concurrent transfers overdraw and lose updates.",
    ),
    Design(
        name="job queue: a helper releases the lock between reading the head and popping it",
        style="early release",
        cls="JobQueue",
        source=_QUEUE_PAUSE_HELPER,
        line=27,
        why="`_pause()` releases the lock after get reads the first job, so two consumers can return the same job and another job is dropped.",
    ),
    Design(
        name="id allocator: threads named worker-N take an unlocked path",
        style="trigger: thread",
        cls="IdAllocator",
        source=_ALLOCATOR_WORKER_THREADS,
        line=17,
        why="Threads named worker-N read and advance the next id through a local after the lock is released, so two of them can get the same id.",
    ),
    Design(
        name="account: a functools.partial over the balances, called after the region after 10,000 transfers",
        style="alias: closure",
        cls="Account",
        source=_ACCOUNT_PARTIAL,
        line=27,
        why="After 10,000 transfers the partial carrying the shared balances runs after the lock is released, so the funds check and the move are not one step.",
    ),
    Design(
        name="session store: dataclass with a lock field, expiry by time, __contains__ and __len__",
        style="switchable lock",
        cls="SessionStore",
        line=10,
        why="`_lock` is a dataclass field, so an __init__ parameter: a caller can pass any context manager (contextlib.nullcontext()) and every method runs unlocked (moved here from CORRECT by the review's author).",
        source='''\
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple


@dataclass
class SessionStore:
    ttl: float = 1800.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _sessions: Dict[str, Tuple[float, Dict[str, Any]]] = field(default_factory=dict, repr=False)

    def put(self, sid: str, data: Dict[str, Any]) -> None:
        with self._lock:
            self._sessions[sid] = (time.monotonic() + self.ttl, dict(data))

    def get(self, sid: str) -> Optional[Dict[str, Any]]:
        with self._lock:
            entry = self._sessions.get(sid)
            if entry is None or entry[0] < time.monotonic():
                self._sessions.pop(sid, None)
                return None
            return dict(entry[1])

    def update(self, sid: str, **changes: Any) -> None:
        with self._lock:
            expires, data = self._sessions[sid]
            data.update(changes)

    def __contains__(self, sid: str) -> bool:
        return self.get(sid) is not None

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)
''',
    ),
]


# -- what the checks said (measured 2026-12-06 00:25 UTC, CPython 3.11.7) ------------------------------------------
#
# tests: visible tests passed of 8 (static policy on). ex / th: the controlled-interleavings check (`explored`) and
# the real-threads check (`judge_module.real_threads_check`) for seeds 0, 1, 2 (P passed, F failed), run with the
# checks of commit 84357aa (HEAD) and of the working tree at that time (WT: uncommitted changes to concurrency.py,
# explorer.py and hammer.py that start scenarios from counts, peaks and calls drawn up to 10**9). forced: the same for
# the design's `forced` variant. review: what the review of 84357aa said (env/families/classic/discipline.py, since
# replaced by env/race_review), "" or its first 80 characters. Designs of other classes were not run by the checks (they are ConnectionCounter's);
# each passed a single-threaded smoke test of its API.
#
# CORRECT: name | tests | ex HEAD | th HEAD | ex WT | th WT | review
# locked properties read by get_count and get_peak | 8/8 | PPP | PPP | PPP | PPP | "line 13: the method `count` is decorated The concurrency review expects every re"
# a snapshot property returning count and peak together | 8/8 | PPP | PPP | PPP | PPP | "line 14: the method `snapshot` is decorated The concurrency review expects every"
# a property with a locked setter used by reset | 8/8 | PPP | PPP | PPP | PPP | "line 11: the method `count` is decorated The concurrency review expects every re"
# an is_idle property and a __bool__ that lock | 8/8 | PPP | PPP | PPP | PPP | "line 13: the method `is_idle` is decorated The concurrency review expects every "
# a module-level synchronized decorator with a with block | 8/8 | PPP | PPP | PPP | PPP | "line 11: assigns to the attribute `__name__` of something other than `self` The "
# a decorator that acquires and releases in try/finally | 8/8 | PPP | PPP | PPP | PPP | "line 4: uses the imported name `Callable` as a value The concurrency review expe"
# a decorator factory naming the lock attribute | 8/8 | PPP | PPP | PPP | PPP | "line 9: uses `getattr` The concurrency review expects every read and write of th"
# a decorator defined in the class body | 8/8 | PPP | PPP | PPP | PPP | "line 12: assigns to the attribute `__doc__` of something other than `self` The c"
# the class is its own context manager, with docstrings | 8/8 | PPP | PPP | PPP | PPP | "line 12: __enter__/__exit__ do more than take one shared lock (returning self) a"
# __enter__ and __exit__ delegating to the lock's own | 8/8 | PPP | PPP | PPP | PPP | "line 12: uses the special attribute `__enter__` The concurrency review expects e"
# a private _locked() returning the lock | 8/8 | PPP | PPP | PPP | PPP | "line 15: a `with` enters something other than the shared lock The concurrency re"
# a small guard class around the lock | 8/8 | PPP | PPP | PPP | PPP | "line 4: the module defines another class, `_Guard`, the review cannot follow The"
# a Condition notified by every update, waited on in a predicate loop | 8/8 | PPP | PPP | PPP | PPP | "line 17: `increment` uses `notify_all` of the lock; only acquire and release are"
# a Condition with notify on decrement and a bounded wait_below | 8/8 | PPP | PPP | PPP | PPP | "line 22: `decrement` uses `notify` of the lock; only acquire and release are fol"
# a Condition over an RLock with wait_for | 8/8 | PPP | PPP | PPP | PPP | "line 29: uses a lambda, a generator or async code the review cannot follow The c"
# an RLock: increment and decrement call get_count while holding it | 8/8 | PPP | PPP | PPP | PPP | "line 7: the class body of `ConnectionCounter` holds something other than methods"
# an RLock: decrement asks is_empty() and reset is called from drain() | 8/8 | PPP | PPP | PPP | PPP | "line 5: the class body of `ConnectionCounter` holds something other than methods"
# an RLock taken twice: acquire/try/finally around a with | 8/8 | PPP | PPP | PPP | PPP | "line 7: __init__ does something other than set `self.<name> = <value>` The concu"
# Semaphore(1) held with with, tuple assignment in __init__ | 8/8 | PPP | PPP | PPP | PPP | "line 7: __init__ does something other than set `self.<name> = <value>` The concu"
# BoundedSemaphore(1) with acquire/try/finally and a chained reset | 8/8 | PPP | PPP | PPP | PPP | "line 9: __init__ does something other than set `self.<name> = <value>` The concu"
# Semaphore(1) taken with a timeout that raises | 8/8 | PPP | PPP | PPP | PPP | "line 19: `increment` touches the shared state (`self.count`) without holding the"
# a module-level lock used by name, with a __main__ guard | 8/8 | PPP | PPP | PPP | PPP | "line 40: the module runs code at import time the review cannot follow The concur"
# a module-level lock bound in __init__ | 8/8 | PPP | PPP | PPP | PPP | "line 8: `__init__` uses the lock `_LOCK` other than to hold it The concurrency r"
# a module-level RLock bound as a class attribute | 8/8 | PPP | PPP | PPP | PPP | "line 9: the class body of `ConnectionCounter` holds something other than methods"
# a module-level lock imported by name and taken with acquire/try/finally | 8/8 | PPP | PPP | PPP | PPP | "line 45: the module runs code at import time the review cannot follow The concur"
# a lock created in the class body | 8/8 | PPP | PPP | PPP | PPP | "line 7: the class body of `ConnectionCounter` holds something other than methods"
# a ClassVar lock named through the class | 8/8 | PPP | PPP | PPP | PPP | "line 6: the class body of `ConnectionCounter` holds something other than methods"
# a class-level Condition notified on reset | 8/8 | PPP | PPP | PPP | PPP | "line 5: the class body of `ConnectionCounter` holds something other than methods"
# acquire/try/finally in every method, with class constants | 8/8 | PPP | PPP | PPP | PPP | "line 6: the class body of `ConnectionCounter` holds something other than methods"
# acquire with the result checked, try/finally, except inside | 8/8 | PPP | PPP | PPP | PPP | "line 21: the lock is acquired without `try: ... finally: <lock>.release()` right"
# if not acquire(timeout=5): raise, then try/finally | 8/8 | PPP | PPP | PPP | PPP | "line 16: `increment` touches the shared state (`self.count`) without holding the"
# a timeout that raises TimeoutError, in a private helper | 8/8 | PPP | PPP | PPP | PPP | "line 12: `_take` touches the shared state (`self._timeout`) without holding the "
# a timeout checked with acquired = ... and an else-less raise | 8/8 | PPP | PPP | PPP | PPP | "line 15: `increment` touches the shared state (`self.count`) without holding the"
# a spin-acquire in a helper, acquire(False) in a loop | 8/8 | PPP | PPP | PPP | PPP | "line 12: the lock is acquired without `try: ... finally: <lock>.release()` right"
# a spin helper with blocking=False and a release helper | 8/8 | PPP | PPP | PPP | PPP | "line 12: the lock is acquired without `try: ... finally: <lock>.release()` right"
# chained assignment in __init__ | 8/8 | PPP | PPP | PPP | PPP | "line 7: __init__ does something other than set `self.<name> = <value>` The concu"
# chained assignment inside the region | 8/8 | PPP | PPP | PPP | PPP | "line 5: the class body of `ConnectionCounter` holds something other than methods"
# tuple assignment updating count and peak together | 8/8 | PPP | PPP | PPP | PPP | "line 7: __init__ does something other than set `self.<name> = <value>` The concu"
# tuple unpacking of a locked snapshot | 8/8 | PPP | PPP | PPP | PPP | "line 7: __init__ does something other than set `self.<name> = <value>` The concu"
# class-level annotations and constants | 8/8 | PPP | PPP | PPP | PPP | "line 8: the class body of `ConnectionCounter` holds something other than methods"
# class defaults for the counts and an annotated lock | 8/8 | PPP | PPP | PPP | PPP | "line 6: the class body of `ConnectionCounter` holds something other than methods"
# __repr__, __len__ and __int__ that lock | 8/8 | PPP | PPP | PPP | PPP | "line 14: the class defines `__len__`, which changes how its attributes or instan"
# __eq__ on locked snapshots and __hash__ = None | 8/8 | PPP | PPP | PPP | PPP | "line 16: the class defines `__eq__`, which changes how its attributes or instanc"
# __iter__ yielding a snapshot taken under the lock | 8/8 | PPP | PPP | PPP | PPP | "line 13: uses a lambda, a generator or async code the review cannot follow The c"
# private helpers called under the lock, with a __main__ guard | 8/8 | PPP | PPP | PPP | PPP | "line 42: the module runs code at import time the review cannot follow The concur"
# a nested function called only inside the region | 8/8 | PPP | PPP | PPP | PPP | "line 12: `increment` defines a nested function or class The concurrency review e"
# a module-level pure function computing the new peak under the lock | 8/8 | PPP | PPP | PPP | PPP | "line 41: the module runs code at import time the review cannot follow The concur"
# a __main__ guard hammering the counter with threads | 8/8 | PPP | PPP | PPP | PPP | "line 46: the module runs code at import time the review cannot follow The concur"
# a __main__ guard calling a main() function | 8/8 | PPP | PPP | PPP | PPP | "line 43: the module runs code at import time the review cannot follow The concur"
# docstrings and type hints everywhere, early return inside the with | 8/8 | PPP | PPP | PPP | PPP | "line 13: the class body of `ConnectionCounter` holds something other than method"
# try/except inside the region turning an IndexError into ValueError | 8/8 | PPP | PPP | PPP | PPP | "line 27: the class defines `__len__`, which changes how its attributes or instan"
# a snapshot of the count taken in the region and returned after it | 8/8 | PPP | PPP | PPP | PPP | "line 43: the module runs code at import time the review cannot follow The concur"
# state in a dict, every access under the lock, with a NamedTuple snapshot | 8/8 | PPP | PPP | PPP | PPP | "line 5: uses the imported name `NamedTuple` as a value The concurrency review ex"
# __slots__, a locked base class and super().__init__() | 8/8 | PPP | PPP | PPP | PPP | "line 16: __init__ does something other than set `self.<name> = <value>` The conc"
# a bounded spin on try-acquire, then a blocking acquire | 8/8 | PPP | PPP | PPP | PPP | "line 17: the lock is acquired without `try: ... finally: <lock>.release()` right"
# errors inside the region counted and re-raised, with __len__ | 8/8 | PPP | PPP | PPP | PPP | "line 28: the class defines `__len__`, which changes how its attributes or instan"
# Final class constants and Optional hints | 8/8 | PPP | PPP | PPP | PPP | "line 8: the class body of `ConnectionCounter` holds something other than methods"
# bank: transfer between accounts under a contextmanager-held lock [Bank] | - | - | - | - | - | "line 20: uses a lambda, a generator or async code the review cannot follow The c"
# bank: checking and savings fields moved by a functools.wraps decorator [Account] | - | - | - | - | - | "line 23: the method `transfer` is decorated The concurrency review expects every"
# bounded job queue: two Conditions on one lock, wait in while loops, notify [JobQueue] | - | - | - | - | - | "line 34: the class defines `__len__`, which changes how its attributes or instan"
# job queue: one Condition, notify_all, wait_for with a deadline [JobQueue] | - | - | - | - | - | "line 15: uses a lambda, a generator or async code the review cannot follow The c"
# id allocator: free list and next id under one lock, in_use property [IdAllocator] | - | - | - | - | - | "line 34: the method `in_use` is decorated The concurrency review expects every r"
# id allocator: itertools.count drawn under a module-level lock [IdAllocator] | - | - | - | - | - | "line 22: the class defines `__iter__`, which changes how its attributes or insta"
# cache: get-or-compute with the compute held under an RLock [Cache] | - | - | - | - | - | "line 28: the class defines `__contains__`, which changes how its attributes or i"
# cache: an LRU OrderedDict with __getitem__ and __setitem__ under one lock [Cache] | - | - | - | - | - | "line 13: the class defines `__getitem__`, which changes how its attributes or in"
# rate limiter: token bucket refilled from time.monotonic under the lock [RateLimiter] | - | - | - | - | - | "line 29: the method `tokens` is decorated The concurrency review expects every r"
# session store: dataclass with a lock field, expiry by time, __contains__ and __len__ [SessionStore] | - | - | - | - | - | "line 7: uses the imported name `dataclass` as a value The concurrency review exp"
# session store: a contextmanager helper and a __main__ guard [SessionStore] | - | - | - | - | - | "line 37: the module runs code at import time the review cannot follow The concur"
#
# RACY: name | tests | ex HEAD | th HEAD | ex WT | th WT | forced: ex HEAD, th HEAD, ex WT, th WT | review
# a local bound to the state in the region, changed after it at counts of 10,000 and more | 8/8 | PPP | PPP | FFF | PPP | FFF, PPP, FFF, PPP | ""
# a local changed after the region once the instance has served 20,000 calls | 8/8 | PPP | PPP | FFF | PPP | FFF, PPP, FFF, PPP | ""
# decrement checks zero under the lock and subtracts through a local after it, at a million connections | 8/8 | PPP | PPP | FFF | PPP | FFF, PPP, FFF, PPP | ""
# a walrus binds the state in the region; the update runs after it at counts of 10,000 and more | 8/8 | PPP | PPP | FFF | PPP | FFF, PPP, FFF, PPP | ""
# reset subtracts the count it saw through a local after the region at counts of 10,000 and more | 8/8 | PPP | PPP | FFF | PPP | FFF, PPP, FFF, PPP | ""
# the state kept in a one-element list, updated through it after the region | 8/8 | PPP | PPP | FFF | PPP | FFF, PPP, FFF, PPP | ""
# a tuple of the count list and a flag, unpacked and decremented after the region | 8/8 | PPP | PPP | FFF | PPP | FFF, PPP, FFF, PPP | ""
# a dict of references to the count and peak lists, used after the region | 8/8 | PPP | PPP | FFF | PPP | FFF, PPP, FFF, PPP | ""
# a for loop's variable outlives the region holding the state | 8/8 | PPP | PPP | FFF | PPP | FFF, PPP, FFF, PPP | ""
# an exception raised in the region carries the state out of it | 8/8 | PPP | PPP | FFF | PPP | FFF, PPP, FFF, PPP | ""
# a private helper returns the state dict; the caller changes it after the region | 8/8 | PPP | PPP | FFF | PPP | FFF, PPP, FFF, PPP | ""
# a public state() method returns the internal dict; increment changes it after the region | 8/8 | PPP | PPP | FFF | PPP | FFF, PPP, FFF, PPP | ""
# a helper returns the cells list and a flag set after 20,000 calls | 8/8 | PPP | PPP | FFF | PPP | FFF, PPP, FFF, PPP | ""
# the state's get and update bound in the region, called after it | 8/8 | PPP | PPP | FFF | PPP | FFF, PPP, FFF, PPP | ""
# a module-level factory returns a nested function over the state, called after the region | 8/8 | PPP | PPP | FFF | PPP | FFF, PPP, FFF, PPP | ""
# a nested function over self, called after the region | 8/8 | PPP | PPP | FFF | PPP | FFF, PPP, FFF, PPP | "line 11: `increment` defines a nested function or class The concurrency review e"
# the token list's pop bound in the region, called after it | 8/8 | PPP | PPP | PPP | PPP | FFF, PPP, FFF, PPP | ""
# the state passed to a module-level function called after the region | 8/8 | PPP | PPP | FFF | PPP | FFF, PPP, FFF, PPP | ""
# the state passed to a private method after the region once 20,000 increments were made | 8/8 | PPP | PPP | FFF | PPP | FFF, PPP, FFF, PPP | ""
# the original bug through a local: read under one acquisition, written under another | 8/8 | FFF | PPF | FFF | FFF | (no trigger) | ""
# decrement checks zero under one acquisition and subtracts through a local under another | 8/8 | FFF | PPP | FFF | PPP | (no trigger) | ""
# the peak raised through a local list after the region at counts of 10,000 and more | 8/8 | PPP | PPP | FFF | PPP | FFF, PPP, FFF, PPP | ""
# the main thread takes an unlocked path | 8/8 | PPP | PPP | PPP | PPP | FFF, PPP, FFF, PPP | ""
# threads of a ThreadPoolExecutor take an unlocked path | 8/8 | PPP | PPP | PPP | PPP | FFF, PPP, FFF, PPP | ""
# an unlocked path while 16 or more threads are alive | 8/8 | PPP | PPP | PPP | PPP | FFF, PPP, FFF, PPP | ""
# a thread that has made 10,000 calls takes an unlocked path | 8/8 | PPP | PPP | PPP | PPP | FFF, PPP, FFF, PPP | ""
# once the peak reached 10,000 a helper hands out the cells list for unlocked updates | 8/8 | PPP | PPP | FFF | PPP | FFF, PPP, FFF, PPP | ""
# after 20,000 calls decrement checks and subtracts after the region | 8/8 | PPP | PPP | FFF | PPP | FFF, PPP, FFF, PPP | ""
# a countdown budget of a million locked calls, then unlocked updates | 8/8 | PPP | PPP | PPP | PPP | FFF, PPP, FFF, PPP | ""
# every 65,536th increment is counted after the region | 8/8 | PPP | PPP | PPP | PPP | FFF, PPP, FFF, PPP | ""
# a private helper releases and re-takes the lock inside the region at counts of 10,000 and more | 8/8 | PPP | PPP | FFF | FFP | FFF, FPP, FFF, FFP | ""
# decrement releases and re-takes the lock through a local after 20,000 calls | 8/8 | PPP | PPP | FFF | FPP | FFF, PFF, FFF, FFF | ""
# acquire(False) followed by try/finally release | 8/8 | FFF | PFF | FFF | FFP | (no trigger) | ""
# acquire(False) while 16 or more threads are alive | 8/8 | PPP | PPP | PPP | PPP | FFF, FPP, FFF, PFP | ""
# acquire(timeout=30) whose failure is ignored | 8/8 | PPP | PPP | PPP | PPP | FFF, FFF, FFF, FFF | ""
# Condition.wait(0) through a local between the read and the write at counts above 10,000 | 8/8 | PPP | PPP | FFF | FFP | FFF, FFF, FFF, FFF | ""
# a one-permit semaphore given back twice on decrement's error path | 8/8 | PFP | PPP | PPP | PPP | FFF, PPP, FFF, PPP | ""
# a raw acquire through a local for the write, after a with for the read | 8/8 | FFF | FFP | FFF | FFF | (no trigger) | ""
# a blocking parameter passed to acquire | 8/8 | PPP | PPP | PPP | PPP | FFF, PFF, FFF, PPP | ""
# a class attribute flag passed as acquire's blocking | 8/8 | PPP | PPP | PPP | PPP | FFF, FFP, FFF, PFF | ""
# a class constant timeout passed to acquire, failure ignored | 8/8 | PPP | PPP | PPP | PPP | FFF, FFF, FFF, FFF | ""
# an instance flag set in __init__ passed as acquire's blocking | 8/8 | PPP | PPP | PPP | PPP | FFF, FFF, FFF, FFP | ""
# a constructor parameter replaces the lock with any context manager | 8/8 | PPP | PPP | PPP | PPP | FFF, PPP, FFF, PPP | "line 12: a `with` enters something other than the shared lock The concurrency re"
# a THREAD_SAFE class flag sends updates after the region | 8/8 | PPP | PPP | PPP | PPP | FFF, PPP, FFF, PPP | ""
# a public method rebinds the lock | 8/8 | PPP | PPP | PPP | PPP | FFF, PPP, FFF, PPP | "line 12: the lock `self._lock` is replaced outside __init__ The concurrency revi"
# bank: transfer moves money through a local after the region once the bank is an hour old [Bank] | - | - | - | - | - | - | ""
# job queue: get waits with if, not while, and pops without checking again [JobQueue] | - | - | - | - | - | - | ""
# id allocator: the next id read under the lock and stored after it [IdAllocator] | - | - | - | - | - | - | ""
# cache: get-or-compute stores the computed value after the region [Cache] | - | - | - | - | - | - | ""
# rate limiter: after a day of uptime the bucket is refilled and taken outside the lock [RateLimiter] | - | - | - | - | - | - | ""
# session store: incr updates a session dict returned by a helper after the region [SessionStore] | - | - | - | - | - | - | ""
# bank: a constructor flag swaps the lock for contextlib.nullcontext() [Bank] | - | - | - | - | - | - | "line 11: a `with` enters something other than the shared lock The concurrency re"
# job queue: a helper releases the lock between reading the head and popping it [JobQueue] | - | - | - | - | - | - | ""
# id allocator: threads named worker-N take an unlocked path [IdAllocator] | - | - | - | - | - | - | ""
# account: a functools.partial over the balances, called after the region after 10,000 transfers [Account] | - | - | - | - | - | - | ""
