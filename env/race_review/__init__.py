"""The lock-discipline review: a proof, from the source alone, that no path of a class touches its shared state
without the lock, and that each method's update happens under one acquisition of it.

    why = review(source, "ConnectionCounter")   # "" when the class passes; else "line N: ..." naming what and where

Running code can observe and evade a dynamic check (a race switched on at a count, a call number, a time or a thread
no run produces); it cannot evade this. The review walks every path of every method a caller can reach (public
methods, dunder methods, properties), with the module's own functions, methods, decorators and context managers
walked where they are called, and follows what the code does with shared state: the instance's attributes, class
attributes and module globals, and every object reached through them, through locals, containers, return values,
closures and arguments. It refuses a class when, on some path:

- shared state is read or written holding no lock that protects it (an instance's lock for its own state; a class
  or module lock for state every instance shares), or holding different locks at different places;
- an update spans two acquisitions (read under one, written under a later one; a wait() between them without a
  predicate loop that re-tests);
- a lock may not be held where the code assumes it (``acquire(False)``, a caller's ``blocking`` flag or a timeout
  whose failure goes on; a lock a caller can replace; one made per call), is taken again while held (not
  reentrant), stays held when a method returns or raises, or two locks are taken in both orders;
- shared state leaves through a return value, an object of the caller's, or a function kept for later;

and it says where it cannot follow the code (``getattr``, ``eval``, code it cannot read given shared state,
generators ...), naming the construct: that is the only other refusal. Whatever a condition tests, both of its
branches are walked, so a trigger hides nothing from it.
"""

from __future__ import annotations

import threading
from functools import lru_cache

from env.pyparse import parse
from env.race_review.findings import Finding
from env.race_review.review import run_review

__all__ = ["Finding", "review", "review_finding"]

_LOCK = threading.Lock()  # the review is pure, but one cache filled by many threads is kept consistent by one lock


@lru_cache(maxsize=512)
def _cached(source: str, cls: str) -> Finding | None:
    try:
        tree = parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return Finding(0, "the code does not parse", "cannot-follow")
    try:
        return run_review(tree, source, cls)  # type: ignore[arg-type]
    except RecursionError:
        return Finding(0, "the review cannot follow code nested this deep", "cannot-follow")


def review_finding(source: str, cls: str) -> Finding | None:
    """The first finding against ``cls`` in ``source`` (by line), or None when the class passes."""
    with _LOCK:
        return _cached(source, cls)


def review(source: str, cls: str) -> str:
    """"" when ``cls`` passes the review; otherwise the first finding, as ``line N: what is wrong``."""
    found = review_finding(source, cls)
    return found.message() if found is not None else ""
