"""What must be one per process, listed here and closed together; everything else a server holds, its Runtime owns.

    PAIRS = process_wide("cpu_pairs", CpuPairs)    # made on first use, the same object ever after
    close()                                         # closes each one that has a close(), at exit at the latest

Each name below says why it cannot belong to one Runtime. ``process_wide`` refuses any other name: a new
process-wide object is a decision, taken here, not a module-level cache added where it is used
(``tests/test_architecture_state.py`` finds those).
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable
from typing import TypeVar, cast

T = TypeVar("T")

WHY: dict[str, str] = {
    # the machine's CPUs: two runtimes in one process (tests, a validation beside a server) pin onto the same cores
    "cpu_pairs": "which CPUs split runs are pinned to, counted for every run this process starts",
    # the process's metrics see every sandbox run, whichever runtime (or none) started it
    "run_observers": "who is told each finished sandbox run's wall time (the process's metrics)",
    # authoring tools, benches and tests judge repository runs with a bare Sandbox and no Runtime
    "verdict_hosts": "test trees, test sandboxes and warm test hosts of verdicts run outside any Runtime",
    # a task is a pure function of (id, salt), and the families resolve ids without a Runtime (a catalog's filters)
    "procedural_tasks": "the procedural tasks generated last (an LRU over the on-disk store)",
    # generated code run in this process reports the held-out calls it saw through this module's name
    "held_out_records": "the held-out calls recorded per token while a procedural task is generated",
    # test environments are directories every runtime of the host shares (a file lock serialises other processes)
    "test_env_builds": "one build lock per test environment, and the builds that failed lately",
}

_lock = threading.Lock()
_made: dict[str, object] = {}


def process_wide(name: str, make: Callable[[], T]) -> T:
    """The process's one ``name`` (one of ``WHY``), made by ``make()`` on first use."""
    if name not in WHY:
        raise KeyError(f"{name!r} is not a process-wide object: give it an owner (the Runtime), or list it in WHY")
    with _lock:
        if name not in _made:
            _made[name] = make()
        return cast(T, _made[name])


def close() -> None:
    """Close every process-wide object made so far (those with a ``close()``); each stays usable (a closed
    ``VerdictHosts`` starts again on its next run), so whoever holds one never holds a stale one."""
    with _lock:
        made = list(_made.values())
    for thing in made:
        closer = getattr(thing, "close", None)
        if callable(closer):
            closer()


atexit.register(close)  # the test trees lie on /dev/shm and the warm hosts are processes: neither outlives this one
