"""Repository tasks: workspace reset and test-run latency, each against its baseline in the same run.

    python bench/bench_repo.py [--runs 20] [--task TASK_ID]

- reset: ``REPO.episode(...)`` (a copy of the task's prepared one-commit template) against building the
  workspace from scratch (write every file, ``git init``, ``git add``, ``git commit``);
- run_tests: every test of the task through the warm pytest host (a fork of a pre-imported process)
  against a fresh host interpreter per run.
Defaults to the bundled repository task with the most files. Prints medians and ratios.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.timing import median_ms  # noqa: E402
from env.contract import TaskFilter
from env.families.catalog import TaskCatalog  # noqa: E402
from env.families.repo.family import REPO  # noqa: E402
from env.project import RepoTask  # noqa: E402
from env.runtime import Runtime  # noqa: E402
from env.sandbox.isolation import probe_isolation  # noqa: E402
from env.sandbox.limits import Limits  # noqa: E402
from env.sandbox.runner import Sandbox  # noqa: E402
from env.scratch import scratch_root  # noqa: E402
from env.verdict import repo_judge  # noqa: E402
from env.workspace import _sanitised_git, _write_files  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--task")
    args = parser.parse_args()
    catalog = TaskCatalog.from_env()
    tasks = [t for t in catalog.select(TaskFilter(family="repo")) if isinstance(t, RepoTask)]
    task = catalog.get(args.task) if args.task else max(tasks, key=lambda t: len(t.files))
    runtime = Runtime(catalog, Sandbox(Limits(), probe_isolation()), workers=4)
    print(f"task {task.id}: {len(task.files)} files, {task.tests_total} tests")

    def reset() -> None:
        REPO.episode(runtime, task, seed=1, episode_id="bench").close()

    def from_scratch() -> None:
        with tempfile.TemporaryDirectory(prefix="adbg-bench-", dir=scratch_root()) as root:
            _write_files(Path(root), task.files)
            _sanitised_git(Path(root))

    warm_reset, cold_reset = median_ms(reset, args.runs), median_ms(from_scratch, args.runs)
    print(f"reset (copy of the prepared template)   p50 {warm_reset:7.1f} ms")
    print(f"workspace built from scratch with git   p50 {cold_reset:7.1f} ms   ratio {cold_reset / warm_reset:.1f}x")

    def tests() -> None:
        verdict = repo_judge.run_tests(runtime.sandbox, task, task.gold_files, hosts=runtime.verdict_hosts)
        assert len(verdict.outcomes) == task.tests_total, verdict.error or verdict.collect_errors

    runs = max(5, args.runs // 2)
    warm = median_ms(tests, runs)
    before = os.environ.get("SANDBOX_HOST_WARM")
    os.environ["SANDBOX_HOST_WARM"] = "off"  # the verdict reads it at each run
    cold = median_ms(tests, runs)
    if before is None:
        os.environ.pop("SANDBOX_HOST_WARM")
    else:
        os.environ["SANDBOX_HOST_WARM"] = before
    print(f"run_tests, warm pytest host             p50 {warm:7.1f} ms")
    print(f"run_tests, fresh host interpreter       p50 {cold:7.1f} ms   ratio {cold / warm:.1f}x")


if __name__ == "__main__":
    main()
