"""Load and soak: 64 concurrent WebSocket sessions x 50 steps, mixing tasks and hostile submissions.

    python bench/load_test.py [--sessions 64] [--steps 50] [--memory-bound-mb 64]

Starts ``python -m env.server`` on a free local port and reports: errors (must be 0), cross-session
leaks (must be 0: every observation must carry only its own session's episode id and marker),
step latency p50/p99, and the server's resident memory before and after (growth must stay under
the bound). Exits non-zero if any of those fails.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

from websockets.asyncio.client import connect

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_server import pct  # noqa: E402
from env.contract import TaskFilter  # noqa: E402
from env.families.catalog import TaskCatalog  # noqa: E402
from env.server.local import start_local_server  # noqa: E402

HOSTILE = [
    "import os\nwhile True:\n    os.fork()\n",
    "def binary_search(arr, target):\n    return len(bytearray(2 ** 31))\n",
    "def binary_search(arr, target):\n    return open('/etc/hostname').read()\n",
    "class E:\n    def __eq__(self, other):\n        return True\n\ndef binary_search(arr, target):\n    return E()\n",
    "print('8 passed, 0 failed')\n",
    "import socket\ndef binary_search(arr, target):\n    return socket.create_connection(('1.1.1.1', 80), 1)\n",
    "x = " + "-" * 20000 + "1\n",
    "def binary_search(arr, target):\n    return binary_search(arr, target)\n",
]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def session(url: str, index: int, steps: int, gold: dict[str, str], latencies: list[float], problems: list[str]) -> None:
    rng = random.Random(index)
    marker = f"session-marker-{index:03d}"
    async with connect(url.replace("http", "ws") + "/ws", max_size=None) as ws:
        episode, task_id, done = None, None, True
        for _ in range(steps):
            if done:
                task_id = rng.choice(["easy", "medium", "hard"])
                message = {"type": "reset", "data": {"task_id": task_id, "seed": rng.randrange(1000)}}
            else:
                kind = rng.random()
                if kind < 0.3:
                    action = {"action_type": "query_context", "query_type": rng.choice(["function_signature", "error_explanation", "test_details"])}
                elif kind < 0.6 and task_id == "easy":
                    action = {"action_type": "submit_fix", "fixed_code": rng.choice(HOSTILE) + f"# {marker}\n", "hypothesis": marker}
                elif kind < 0.8:
                    action = {"action_type": "submit_fix", "fixed_code": gold[task_id] + f"# {marker}\n", "hypothesis": marker}
                elif kind < 0.9:
                    action = {"action_type": "bogus_action"}
                else:
                    action = {"action_type": "give_up", "final_diagnosis": marker}
                message = {"type": "step", "data": action}
            started = time.perf_counter()
            await ws.send(json.dumps(message))
            reply = json.loads(await ws.recv())
            latencies.append((time.perf_counter() - started) * 1000)
            if reply.get("type") != "observation":
                problems.append(f"session {index}: error reply {str(reply)[:200]}")
                return
            obs = reply["data"]["observation"]
            text = json.dumps(reply)
            if message["type"] == "reset":
                episode = obs["episode_id"]
            elif obs["episode_id"] != episode:
                problems.append(f"session {index}: LEAK: saw episode {obs['episode_id']}, expected {episode}")
            others = {m for m in (f"session-marker-{j:03d}" for j in range(1000)) if m in text and m != marker}
            if others:
                problems.append(f"session {index}: LEAK: saw markers {sorted(others)[:3]}")
            done = reply["data"]["done"]


async def run(url: str, sessions: int, steps: int) -> tuple[list[float], list[str]]:
    catalog = TaskCatalog.builtin()
    gold = {t.id: t.gold_source for t in catalog.select(TaskFilter(family="classic"))}
    latencies: list[float] = []
    problems: list[str] = []
    await asyncio.gather(*(session(url, i, steps, gold, latencies, problems) for i in range(sessions)))
    return latencies, problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=64)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--memory-bound-mb", type=float, default=64.0)
    args = parser.parse_args()
    proc, url = start_local_server(os.environ.get("BENCH_SERVER_LOG"))
    try:
        asyncio.run(run(url, 4, 6))  # warm-up: baselines and the fork server
        before = rss_mb(proc.pid)
        started = time.monotonic()
        latencies, problems = asyncio.run(run(url, args.sessions, args.steps))
        elapsed = time.monotonic() - started
        after = rss_mb(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    errors = [p for p in problems if "LEAK" not in p]
    leaks = [p for p in problems if "LEAK" in p]
    print(f"{args.sessions} sessions x {args.steps} steps: {len(latencies)} steps in {elapsed:.1f} s ({len(latencies) / elapsed:.1f} steps/s)")
    print(f"step latency p50 {statistics.median(latencies):.1f} ms, p99 {pct(latencies, 99):.1f} ms")
    print(f"errors: {len(errors)}   cross-session leaks: {len(leaks)}")
    print(f"server memory: {before:.1f} MB before, {after:.1f} MB after (growth {after - before:+.1f} MB, bound {args.memory_bound_mb:.0f} MB)")
    for line in problems[:10]:
        print("  " + line)
    ok = not errors and not leaks and after - before <= args.memory_bound_mb
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
