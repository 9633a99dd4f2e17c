"""The same evaluation played locally (threads in one process) and on Ray (`--ray`, a local instance started by the run).

    python bench/bench_ray.py [--agent heuristic] [--runs 3] [--concurrency 2] [--tasks ID ...] [--ray ADDRESS]

Both are the commands a user types (``python -m env.eval run``), with one ENV_SECRET and fresh output folders. Prints
each one's wall time (Ray's includes starting the instance and its workers, each building its own environment),
episodes per second, the ratio, and whether every episode's result is the same in both.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def evaluate(out: Path, args: argparse.Namespace, *extra: str) -> float:
    command = [sys.executable, "-m", "env.eval", "run", "--agent", args.agent, "--runs", str(args.runs), "--concurrency", str(args.concurrency),
               "--out", str(out), *(["--tasks", *args.tasks] if args.tasks else []), *extra]  # fmt: skip
    started = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, env=args.environ, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    return seconds


def outcomes(out: Path) -> dict[tuple[str, int], tuple[float, bool, list[float]]]:
    rows = (json.loads(line) for line in (out / "results.jsonl").read_text().splitlines())
    return {(r["task_id"], r["run"]): (r["score"], r["solved"], r["rewards"]) for r in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="heuristic")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--tasks", nargs="*", help="task ids (default: every built-in task)")
    parser.add_argument("--ray", default="", metavar="ADDRESS", help="a cluster's address (default: a local instance)")
    args = parser.parse_args()
    args.environ = {**os.environ, "ENV_SECRET": secrets.token_hex(32), "RAY_USAGE_STATS_ENABLED": "0"}
    with tempfile.TemporaryDirectory(prefix="adbg-bench-ray-") as folder:
        local_s = evaluate(Path(folder) / "local", args)
        ray_s = evaluate(Path(folder) / "ray", args, "--ray", *([args.ray] if args.ray else []))
        local, on_ray = outcomes(Path(folder) / "local"), outcomes(Path(folder) / "ray")
    n = len(local)
    print(f"{n} episodes of {args.agent} ({args.runs} run(s) of {n // max(1, args.runs)} task(s)), concurrency {args.concurrency}, {os.cpu_count()} cores")
    print("| where | wall s | episodes/s |")
    print("|---|---|---|")
    print(f"| local (threads in one process) | {local_s:.1f} | {n / local_s:.2f} |")
    print(f"| Ray ({args.ray or 'local instance'}) | {ray_s:.1f} | {n / ray_s:.2f} |")
    print(f"Ray / local wall time: {ray_s / local_s:.2f}x; the same results in both: {local == on_ray} ({n} episodes)")


if __name__ == "__main__":
    main()
