"""Many WebSocket sessions on one replica: memory per idle session, and a cheap step's latency with all of them open.

    python bench/bench_sessions.py [--sessions 1024] [--steps 5] [--interval 2.0]

Starts ``python -m env.server`` on a free local port with ``ENV_MAX_SESSIONS`` and ``ENV_SESSIONS_PER_CLIENT`` set
to ``--sessions`` (this one process is every session's client), then:

1. measures the server's resident memory (``/proc/PID/status`` VmRSS) with no session (after one warm-up session,
   since the task's baseline and the fork server are the replica's, not a session's), opens ``--sessions`` ``/ws``
   sessions, each with an ``easy`` episode reset and left idle, and measures it again: memory per idle session is the
   growth divided by the sessions;
2. with every session still open, each takes ``--steps`` cheap steps (``query_context``), one every ``--interval``
   seconds on average (a random wait first, so that the steps spread as a trainer's agents spread theirs, waiting
   for their model): p50 and p99 of a step's latency, and the steps per second the replica answered meanwhile.

Errors (a refused session, an error reply, an observation of another episode) are counted and must be 0. Issue 51's
target on a 2-core replica: with 1,024 sessions a cheap step's p99 <= 20 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import statistics
import sys
import time
from pathlib import Path

from websockets.asyncio.client import ClientConnection, connect

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_server import pct  # noqa: E402
from bench.load_test import rss_mb  # noqa: E402
from env.server.local import start_local_server  # noqa: E402

CHEAP = {"action_type": "query_context", "query_type": "function_signature", "query_target": "binary_search"}


async def exchange(ws: ClientConnection, message: dict[str, object]) -> dict:
    await ws.send(json.dumps(message))
    return json.loads(await ws.recv())


async def open_session(url: str, index: int, problems: list[str]) -> tuple[ClientConnection, str] | None:
    try:
        ws = await connect(url.replace("http", "ws") + "/ws", max_size=None, open_timeout=120)
        reply = await exchange(ws, {"type": "reset", "data": {"task_id": "easy", "seed": index}})
    except Exception as exc:  # noqa: BLE001 - a session that could not open is counted, the others go on
        problems.append(f"session {index}: could not open: {type(exc).__name__}: {exc}"[:200])
        return None
    if reply.get("type") != "observation":
        problems.append(f"session {index}: reset refused: {str(reply)[:200]}")
        await ws.close()
        return None
    return ws, reply["data"]["observation"]["episode_id"]


async def steps(ws: ClientConnection, episode: str, count: int, interval: float, rng: random.Random, latencies: list[float], problems: list[str]) -> None:
    for _ in range(count):
        await asyncio.sleep(rng.uniform(0, 2 * interval))
        started = time.perf_counter()
        reply = await exchange(ws, {"type": "step", "data": CHEAP})
        latencies.append((time.perf_counter() - started) * 1000)
        if reply.get("type") != "observation":
            problems.append(f"error reply: {str(reply)[:200]}")
            return
        if reply["data"]["observation"]["episode_id"] != episode:
            problems.append(f"LEAK: episode {episode} saw {reply['data']['observation']['episode_id']}")


async def run(url: str, pid: int, sessions: int, count: int, interval: float) -> None:
    problems: list[str] = []
    warm = await open_session(url, -1, problems)  # the task's baseline and the fork server: once per replica, not per session
    if warm is not None:
        await steps(warm[0], warm[1], 1, 0.0, random.Random(0), [], problems)
        await warm[0].close()
    await asyncio.sleep(1.0)
    before = rss_mb(pid)
    started = time.monotonic()
    opened = []
    for first in range(0, sessions, 64):  # in waves, as trainers start their workers
        opened += await asyncio.gather(*(open_session(url, i, problems) for i in range(first, min(sessions, first + 64))))
    live = [s for s in opened if s is not None]
    opening = time.monotonic() - started
    await asyncio.sleep(1.0)  # the last resets' garbage collected
    idle = rss_mb(pid)
    print(f"{len(live)} of {sessions} sessions open (each an easy episode, reset) in {opening:.1f} s")
    print(f"server memory: {before:.1f} MB with none, {idle:.1f} MB with {len(live)} idle: {(idle - before) * 1024 / max(1, len(live)):.1f} KB per idle session")
    latencies: list[float] = []
    started = time.monotonic()
    await asyncio.gather(*(steps(ws, ep, count, interval, random.Random(i), latencies, problems) for i, (ws, ep) in enumerate(live)))
    elapsed = time.monotonic() - started
    print(f"cheap steps (query_context), every session open: {len(latencies)} in {elapsed:.1f} s ({len(latencies) / elapsed:.1f}/s), "
          f"p50 {statistics.median(latencies):.2f} ms, p99 {pct(latencies, 99):.2f} ms, max {max(latencies):.2f} ms")  # fmt: skip
    print(f"server memory after: {rss_mb(pid):.1f} MB; errors: {len(problems)}")
    for line in problems[:10]:
        print("  " + line)
    await asyncio.gather(*(ws.close() for ws, _ in live))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=5, help="cheap steps each session takes once all are open")
    parser.add_argument("--interval", type=float, default=2.0, help="mean seconds between a session's steps")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = 2 * args.sessions + 256  # this process's sockets and the server's (it inherits the limit)
    if soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            raise SystemExit(f"{args.sessions} sessions need {needed} file descriptors; this shell allows {hard} (ulimit -Hn)")
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    env = {"ENV_MAX_SESSIONS": str(args.sessions), "ENV_SESSIONS_PER_CLIENT": str(args.sessions)}
    proc, url = start_local_server(os.environ.get("BENCH_SERVER_LOG"), env=env)
    try:
        asyncio.run(run(url, proc.pid, args.sessions, args.steps, args.interval))
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except Exception:  # noqa: BLE001 - a server that does not drain in time is stopped
            proc.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
