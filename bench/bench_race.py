"""The hard task's race detector under load: how often each variant is caught, and what a check costs.

    python bench/bench_race.py [--runs 1000] [--busy 8] [--only NAME ...]

Every run is the verdict a submission gets (``env.families.classic.judge.judge``: a fresh sandbox child, the 8
sequential tests, then the controlled-interleaving check), each with its own secret-derived plan. First
the median time of a check on the machine as it is (the baseline, the gold fix and the bug, 30 runs each);
then ``--busy`` CPU-bound processes are started on the machine's cores and every variant of
``tests/race_variants.py`` runs ``--runs`` times: racy ones must be caught every time, correct ones pass
every time, evasive ones never pass. Prints the counts, the median and 90th-percentile milliseconds under
load, and the loaded/idle ratio of the median.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from env.families.catalog import TaskCatalog  # noqa: E402
from env.families.classic.judge import judge  # noqa: E402
from env.sandbox.isolation import probe_isolation  # noqa: E402
from env.sandbox.limits import Limits  # noqa: E402
from env.sandbox.runner import Sandbox  # noqa: E402
from env.secret import ServerSecret  # noqa: E402
from tests.race_variants import CORRECT, EVASIVE, RACY  # noqa: E402


def spin(stop) -> None:
    while not stop.is_set():
        pass


def runs(task, sandbox: Sandbox, source: str, count: int, secret: ServerSecret) -> tuple[int, list[float]]:
    """(checks passed, milliseconds per verdict) over ``count`` verdicts, seed n for run n."""
    passed, times = 0, []
    for n in range(count):
        started = time.perf_counter()
        verdict = judge(task, source, sandbox, secret.rng("classic", task.id, n, "verdict"))
        times.append((time.perf_counter() - started) * 1000)
        passed += bool(verdict.stress and verdict.stress.passed)
    return passed, times


def p90(times: list[float]) -> float:
    return sorted(times)[int(0.9 * (len(times) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--busy", type=int, default=8, help="CPU-bound processes started beside the checks")
    parser.add_argument("--only", nargs="*", help="variant names to run (default: all)")
    args = parser.parse_args()
    task = TaskCatalog.builtin().get("hard")
    sandbox = Sandbox(Limits(), probe_isolation())
    secret = ServerSecret("the race bench's own secret, fixed for reproducible figures")
    idle = {name: statistics.median(runs(task, sandbox, source, 30, secret)[1]) for name, source in (("gold fix", task.gold_source), ("bug", task.buggy_source))}
    print(f"{os.cpu_count()} cores; idle median ms per verdict: gold fix {idle['gold fix']:.1f}, bug {idle['bug']:.1f}")
    stop = multiprocessing.Event()
    busy = [multiprocessing.Process(target=spin, args=(stop,), daemon=True) for _ in range(args.busy)]
    for process in busy:
        process.start()
    time.sleep(1.0)
    print(f"{args.busy} busy processes; {args.runs} runs per variant")
    print(f"{'variant':44s} {'kind':8s} {'result':>16s} {'median ms':>10s} {'p90 ms':>8s} {'vs idle':>8s}")
    failures = 0
    try:
        for kind, variants in (("racy", RACY), ("correct", CORRECT), ("evasive", EVASIVE)):
            for name, source in variants.items():
                if args.only and name not in args.only:
                    continue
                passed, times = runs(task, sandbox, source, args.runs, secret)
                good = passed == args.runs if kind == "correct" else passed == 0
                failures += not good
                result = f"{passed} passed" if kind == "correct" else f"{args.runs - passed} caught"
                base = idle["gold fix"] if kind == "correct" else idle["bug"]
                median = statistics.median(times)
                print(f"{name:44s} {kind:8s} {result + ' / ' + str(args.runs):>16s} {median:10.1f} {p90(times):8.1f} {median / base:7.1f}x"
                      + ("" if good else "   <-- WRONG"))
    finally:
        stop.set()
        for process in busy:
            process.join(5)
    print(f"load average at the end of the loaded runs: {os.getloadavg()[0]:.1f} (1 min), {os.getloadavg()[1]:.1f} (5 min)")
    print("every variant judged as it should be" if not failures else f"{failures} variant(s) judged wrongly")


if __name__ == "__main__":
    main()
