"""Latency and throughput of the server over real HTTP, measured in one run (prints figures).

    python bench/bench_server.py [--rounds 3] [--episodes 20] [--seconds 8]

Starts ``python -m env.server`` on a free local port, then measures:
  * easy and hard ``submit_fix`` latency (one session; hard includes the race check and its repeat at grading),
  * ``/health`` latency while 8 sessions submit hard fixes,
  * clean episodes per second with 1 and with 8 concurrent sessions (every episode checked for
    cross-talk: its own id, task, step count and score).
Each figure is the median over ``--rounds`` repeats. Reference figures (lessons.md, same kind of
machine): easy submit p50 70 ms, hard 1261 ms, /health 318-1568 ms under load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from env.families.catalog import TaskCatalog  # noqa: E402
from env.server.local import start_local_server  # noqa: E402

REFERENCE = {"easy_p50_ms": 70.0, "hard_p50_ms": 1261.0, "health_under_load_ms": (318.0, 1568.0)}
HYPOTHESIS = {
    "easy": "off-by-one: the while loop must be left <= right to check the last element",
    "hard": "race condition: increment reads and writes under separate lock acquisitions, not atomic",
}


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def start_server() -> tuple[subprocess.Popen, str]:
    return start_local_server(os.environ.get("BENCH_SERVER_LOG"))


def episode(client: httpx.Client, url: str, task_id: str, code: str, seed: int) -> tuple[float, bool]:
    """One reset + one gold submission; returns the submit latency (ms) and whether it was clean."""
    obs = client.post(f"{url}/reset", json={"task_id": task_id, "seed": seed}).json()["observation"]
    episode_id = obs["episode_id"]
    started = time.perf_counter()
    body = client.post(f"{url}/step", json={"action": {"action_type": "submit_fix", "fixed_code": code, "hypothesis": HYPOTHESIS[task_id]}, "episode_id": episode_id}).json()
    elapsed = (time.perf_counter() - started) * 1000
    out = body["observation"]
    clean = out["episode_id"] == episode_id and out["task_id"] == task_id and out["step_number"] == 1 and body["done"] and out["grader_score"] >= 0.96
    if not clean:
        print(f"  dirty episode {episode_id}: {out['task_id']} step {out['step_number']} done {body['done']} "
              f"score {out['grader_score']} error {out['error']!r}\n    {out['current_error_output'][:600]!r}")
    return elapsed, clean


def submit_latency(url: str, task_id: str, code: str, n: int) -> tuple[float, float]:
    with httpx.Client(timeout=60) as client:
        episode(client, url, task_id, code, 0)  # warm-up
        times = [episode(client, url, task_id, code, i)[0] for i in range(n)]
    return statistics.median(times), pct(times, 99)


def throughput(url: str, code: str, sessions: int, seconds: float) -> tuple[float, int, int]:
    done, dirty = [0], [0]
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def worker(k: int) -> None:
        with httpx.Client(timeout=60) as client:
            i = 0
            while time.monotonic() < stop:
                _, clean = episode(client, url, "easy", code, k * 100000 + i)
                i += 1
                with lock:
                    done[0] += 1
                    dirty[0] += not clean

    started = time.monotonic()
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(sessions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return done[0] / (time.monotonic() - started), done[0], dirty[0]


def health_under_load(url: str, code: str, sessions: int, seconds: float, task_id: str = "hard") -> float:
    stop = time.monotonic() + seconds

    def worker(k: int) -> None:
        with httpx.Client(timeout=60) as client:
            i = 0
            while time.monotonic() < stop:
                episode(client, url, task_id, code, k * 1000 + i)
                i += 1

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(sessions)]
    for t in threads:
        t.start()
    # The sampler is its own process, so the load generator's threads do not delay it.
    time.sleep(0.5)
    command = [sys.executable, __file__, "--sample-health", url, str(max(1.0, stop - time.monotonic()))]
    if os.environ.get("BENCH_SAMPLER_NICE"):  # diagnostic: separate the sampler's own scheduling delay
        command = ["nice", "-n", os.environ["BENCH_SAMPLER_NICE"], *command]
    sampler = subprocess.run(command, capture_output=True, text=True, check=True)
    samples = json.loads(sampler.stdout)
    for t in threads:
        t.join()
    return pct(samples, 99)


def sample_health(url: str, seconds: float) -> None:
    samples = []
    stop = time.monotonic() + seconds
    with httpx.Client(timeout=30) as client:
        while time.monotonic() < stop:
            started = time.perf_counter()
            client.get(f"{url}/health")
            samples.append((time.perf_counter() - started) * 1000)
            time.sleep(0.02)
    print(json.dumps(samples))


def main() -> None:
    if sys.argv[1:2] == ["--sample-health"]:
        sample_health(sys.argv[2], float(sys.argv[3]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=8.0)
    args = parser.parse_args()
    catalog = TaskCatalog.builtin()
    easy, hard = catalog.get("easy").gold_source, catalog.get("hard").gold_source
    proc, url = start_server()
    print(f"server: {url}  isolation: {httpx.get(f'{url}/health').json()['isolation']['tier']}")
    rows: dict[str, list[float]] = {k: [] for k in ("easy_p50", "easy_p99", "hard_p50", "hard_p99", "health_p99", "health_easy_p99", "rate_1", "rate_8", "dirty")}
    try:
        for r in range(args.rounds):
            e50, e99 = submit_latency(url, "easy", easy, args.episodes)
            h50, h99 = submit_latency(url, "hard", hard, max(5, args.episodes // 2))
            health = health_under_load(url, hard, 8, args.seconds)
            health_easy = health_under_load(url, easy, 8, args.seconds, "easy")
            rate1, _, dirty1 = throughput(url, easy, 1, args.seconds)
            rate8, total8, dirty8 = throughput(url, easy, 8, args.seconds)
            for key, value in zip(rows, (e50, e99, h50, h99, health, health_easy, rate1, rate8, dirty1 + dirty8), strict=True):
                rows[key].append(value)
            print(f"round {r + 1}: easy p50 {e50:.1f} ms, hard p50 {h50:.1f} ms, /health p99 under load {health:.1f} ms, "
                  f"{rate1:.1f} -> {rate8:.1f} episodes/s (1 -> 8 sessions, {total8} episodes, {dirty1 + dirty8} dirty)")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    med = {k: statistics.median(v) for k, v in rows.items()}
    ref_rate = 1000.0 / REFERENCE["easy_p50_ms"]
    print("\nmedian over rounds")
    print(f"  easy submit_fix   p50 {med['easy_p50']:7.1f} ms  p99 {med['easy_p99']:7.1f} ms   (reference p50 70 ms: {REFERENCE['easy_p50_ms'] / med['easy_p50']:.1f}x faster)")
    print(f"  hard submit_fix   p50 {med['hard_p50']:7.1f} ms  p99 {med['hard_p99']:7.1f} ms   (reference p50 1261 ms: {REFERENCE['hard_p50_ms'] / med['hard_p50']:.1f}x faster)")
    print(f"  /health p99 while 8 sessions submit hard fixes: {med['health_p99']:.1f} ms   (reference 318-1568 ms)")
    print(f"  /health p99 while 8 sessions submit easy fixes: {med['health_easy_p99']:.1f} ms")
    print(f"  clean episodes/s: 1 session {med['rate_1']:.1f}, 8 sessions {med['rate_8']:.1f} "
          f"(x{med['rate_8'] / med['rate_1']:.2f} over 1 session here; x{med['rate_8'] / ref_rate:.1f} over the reference's 1-session rate of {ref_rate:.1f}/s)")
    print(f"  dirty episodes (cross-talk or wrong score): {int(sum(rows['dirty']))}")


if __name__ == "__main__":
    main()
