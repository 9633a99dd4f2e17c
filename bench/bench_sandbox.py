"""The warm execution path against a fresh interpreter, same workload, measured in one run.

    python bench/bench_sandbox.py [--runs 40]

For each task's gold fix it times ``judge`` (every test, plus the race check on hard) through a
sandbox whose children fork from the pre-imported zygote, and through one that starts a fresh
interpreter per run; every isolation layer is applied on both paths. Prints medians and ratios.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.timing import median_ms  # noqa: E402
from env.contract import TaskFilter
from env.families.catalog import TaskCatalog  # noqa: E402
from env.families.classic.judge import judge  # noqa: E402
from env.sandbox.isolation import probe_isolation  # noqa: E402
from env.sandbox.limits import Limits  # noqa: E402
from env.sandbox.runner import Sandbox  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    isolation = probe_isolation()
    print(f"isolation tier: {isolation.tier}")
    warm, fresh = Sandbox(Limits(), isolation, warm=True), Sandbox(Limits(), isolation, warm=False)
    catalog = TaskCatalog.builtin()
    print(f"{'workload':34s} {'warm ms':>9s} {'fresh ms':>9s} {'ratio':>7s}")
    workloads = [("empty module, one call", None)] + [(f"{t.id}: judge the gold fix", t) for t in catalog.select(TaskFilter(family="classic"))]
    for label, task in workloads:
        def run(sandbox, task=task):
            if task is None:
                with sandbox.start("def f():\n    return 1\n", "m.py", "m") as r:
                    r.call("f")
            else:
                judge(task, task.gold_source, sandbox, random.Random(1))
        w, f = median_ms(lambda: run(warm), args.runs), median_ms(lambda: run(fresh), args.runs)
        print(f"{label:34s} {w:9.1f} {f:9.1f} {f / w:6.1f}x")
    warm.close()


if __name__ == "__main__":
    main()
