"""The race family's verdict: what one costs, and how many interleavings it explores, per pattern.

    python bench/bench_race_family.py [--rounds 3] [--seeds 0 8]

Every verdict is the one a submission gets (``env.families.classic.judge.judge``: a fresh sandbox child, the visible
tests, the controlled interleavings judged against the domain's model, the lock-discipline review and the real-threads
run beside them), on the gold class of one task per pattern x domain and seed, each with its own secret-derived plan.
Prints, per pattern, the tasks measured, the interleavings explored on the gold and on the buggy class (medians), and
the verdict's median and 90th-percentile milliseconds; then the family's median and p90 over every verdict, and the
classic race task's (``hard``) median measured in the same run as the baseline, with the ratio. The target (issue 49):
a race-family verdict's p50 at most 300 ms on an idle machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from env.families.catalog import TaskCatalog  # noqa: E402
from env.families.classic.judge import judge  # noqa: E402
from env.families.race.generator import COMBINATIONS  # noqa: E402
from env.families.race.task import race_task  # noqa: E402
from env.sandbox.isolation import probe_isolation  # noqa: E402
from env.sandbox.limits import Limits  # noqa: E402
from env.sandbox.runner import Sandbox  # noqa: E402
from env.secret import ServerSecret  # noqa: E402


def p90(times: list[float]) -> float:
    return sorted(times)[int(0.9 * (len(times) - 1))]


def timed(task, source: str, sandbox: Sandbox, secret: ServerSecret, n: int) -> tuple[float, int, bool]:
    started = time.perf_counter()
    verdict = judge(task, source, sandbox, secret.rng("classic", task.id, n, "verdict"))
    ms = (time.perf_counter() - started) * 1000
    assert verdict.stress is not None
    return ms, verdict.stress.schedules, verdict.solved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="verdicts of each gold class")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 8], help="task seeds of each pattern x domain")
    args = parser.parse_args()
    isolation = probe_isolation(disabled=set(), allow_unsafe=False)
    if not isolation.can_execute:
        sys.exit(f"this host cannot run sandboxed code: {isolation.reason}")
    sandbox, secret = Sandbox(Limits(), isolation), ServerSecret("bench_race_family's own secret")
    hard = TaskCatalog.builtin().get("hard")
    baseline = [timed(hard, hard.gold_source, sandbox, secret, n)[0] for n in range(args.rounds * 4)]
    by_pattern: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    every: list[float] = []
    wrong = []
    for pattern, domain in COMBINATIONS:
        for seed in args.seeds:
            task = race_task(f"race-{pattern.replace('_', '-')}-{domain.replace('_', '-')}-{seed}")
            assert task is not None
            row = by_pattern[pattern]
            row["tasks"].append(1)
            _, schedules, solved = timed(task, task.buggy_source, sandbox, secret, 0)
            row["buggy"].append(schedules)
            wrong += [f"{task.id}: the bug passed"] if solved else []
            for n in range(args.rounds):
                ms, schedules, solved = timed(task, task.gold_source, sandbox, secret, n)
                row["ms"].append(ms)
                row["gold"].append(schedules)
                every.append(ms)
                wrong += [] if solved else [f"{task.id}: the gold fix failed"]
    print(f"{'pattern':28} {'tasks':>5} {'gold interleavings':>18} {'buggy interleavings':>19} {'p50 ms':>7} {'p90 ms':>7}")
    for pattern, row in by_pattern.items():
        print(f"{pattern:28} {len(row['tasks']):>5} {statistics.median(row['gold']):>18.0f} {statistics.median(row['buggy']):>19.0f} "
              f"{statistics.median(row['ms']):>7.0f} {p90(row['ms']):>7.0f}")
    family, classic = statistics.median(every), statistics.median(baseline)
    print(f"\nrace family: {len(every)} verdicts, p50 {family:.0f} ms, p90 {p90(every):.0f} ms (target p50 <= 300 ms idle)")
    print(f"baseline, the classic race task (hard) in the same run: p50 {classic:.0f} ms; ratio {family / classic:.2f}")
    if wrong:
        print("\nWRONG VERDICTS:\n" + "\n".join(wrong))
        sys.exit(1)


if __name__ == "__main__":
    main()
