"""The garbage collector of a serving process, set for many open sessions.

    settle_collector()     # once, when the app is built: what is imported stays out of every pass, passes are rarer

Everything imported before serving (FastAPI, OpenEnv, Gradio...) lives as long as the server: frozen, no pass of the
collector looks at it again. Open sessions keep a few thousand container objects in flight at any time (each
WebSocket's pending receive, its ping timer, its executor's queue), and CPython's default first-generation threshold
(700 net allocations) collects them several times a second: each pass walks them all while holding the GIL, and every
step that waits behind it takes the pause. With 1,024 idle WebSocket sessions and a cheap step every 2 s from each, a
cheap step's p99 was 25-77 ms with the default threshold and 11-18 ms (once 40) with ``GEN0_THRESHOLD``, against
9-10 ms with the collector off (``bench/bench_sessions.py``, docs/performance.md). Reference cycles are still
collected: at most ``GEN0_THRESHOLD`` net new container objects wait for a pass (a few MB).
"""

from __future__ import annotations

import gc

GEN0_THRESHOLD = 100_000


def settle_collector() -> None:
    """Freeze what is alive now and make the first generation's passes rarer (the older generations' as before)."""
    gc.collect()
    gc.freeze()
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(GEN0_THRESHOLD, gen1, gen2)
