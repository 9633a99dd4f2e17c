"""Latency of one ``run_bash`` call, every isolation layer applied, measured through the tool.

    python bench/bench_shell.py [--runs 30]

Each call starts a fresh launcher (a Python interpreter that isolates itself), a PID namespace with
its init, and bash; the workspace is a bundled repository task's. Prints the median and the 90th
percentile for ``true`` and for ``python -c pass``, and, as the baseline measured in the same run,
the same command through a plain ``subprocess.run(["bash", "-c", ...])`` with no isolation: the
ratio is what the isolation costs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from env.families.catalog import TaskCatalog  # noqa: E402
from env.sandbox.isolation import probe_isolation  # noqa: E402
from env.sandbox.shell import ShellLimits, ShellRunner  # noqa: E402
from env.tools.shell import RunBash, RunBashArgs  # noqa: E402
from env.workspace import Templates, Workspace  # noqa: E402


def timings_ms(fn, runs: int) -> list[float]:
    fn()  # warm-up: page cache, the template, the compiled launcher code
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    isolation = probe_isolation()
    shell = ShellRunner(isolation, ShellLimits.from_env())
    print(f"isolation tier: {isolation.tier}; process limit: {shell.process_limit or 'none'}")
    task = TaskCatalog.builtin().get("repo-mutable-default")
    workspace = Workspace.create(task, Templates())
    ctx = SimpleNamespace(task=task, workspace=workspace, runtime=SimpleNamespace(shell=shell))
    tool = RunBash()
    print(f"{'command':18s} {'median ms':>10s} {'p90 ms':>8s} {'plain bash':>11s} {'ratio':>6s}")
    environ = {"PATH": os.path.dirname(sys.executable) + ":/usr/local/bin:/usr/bin:/bin"}
    try:
        for command in ("true", "python -c pass"):
            call = RunBashArgs(command=command)
            times = timings_ms(lambda call=call: tool.run(ctx, call), args.runs)
            plain = timings_ms(
                lambda command=command: subprocess.run(["bash", "-c", command], cwd=workspace.root, env=environ, check=True), args.runs
            )
            p90 = statistics.quantiles(times, n=10)[-1]
            ratio = statistics.median(times) / statistics.median(plain)
            print(f"{command:18s} {statistics.median(times):10.1f} {p90:8.1f} {statistics.median(plain):11.1f} {ratio:5.1f}x")
    finally:
        workspace.close()


if __name__ == "__main__":
    main()
