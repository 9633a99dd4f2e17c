"""The live debugger: latency of one command once a session runs, and of starting a session.

    python bench/bench_debugger.py [--runs 30] [--task repo-pagination-off-by-one]

- a command: ``debug_step`` / ``debug_next`` / ``debug_eval`` / ``debug_where`` on a stopped program,
  end to end through the episode (tool lookup, the sandbox pipe, the tracer, rendering);
- starting a session on a failing test: from the warm fork server (pytest already imported in it)
  against a fresh interpreter per session, in the same run. Prints medians, p90 and the ratio.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from env.families.catalog import TaskCatalog  # noqa: E402
from env.families.repo.episode import RepoEpisode  # noqa: E402
from env.families.repo.family import REPO  # noqa: E402
from env.models import DebugAction  # noqa: E402
from env.runtime import Runtime  # noqa: E402
from env.sandbox.isolation import probe_isolation  # noqa: E402
from env.sandbox.limits import Limits  # noqa: E402
from env.sandbox.runner import Sandbox  # noqa: E402


def timed(episode: RepoEpisode, **action: object) -> float:
    started = time.perf_counter()
    obs = episode.step(DebugAction(**action))
    elapsed = (time.perf_counter() - started) * 1000
    assert obs.error is None, obs.error
    return elapsed


def figures(name: str, times: list[float]) -> str:
    ordered = sorted(times)
    return f"{name:<44} p50 {statistics.median(ordered):7.2f} ms   p90 {ordered[int(len(ordered) * 0.9) - 1]:7.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--task", default="repo-pagination-off-by-one")
    args = parser.parse_args()
    catalog = TaskCatalog.from_env()
    task = catalog.get(args.task)
    test = task.fail_to_pass[0]
    isolation = probe_isolation()
    runtimes = {"warm": Runtime(catalog, Sandbox(Limits(), isolation), workers=2)}
    runtimes["fresh"] = Runtime(catalog, Sandbox(Limits(), isolation, warm=False), workers=2)
    print(f"task {task.id}, test {test}, isolation {isolation.tier}")

    def episode(runtime: Runtime) -> RepoEpisode:  # a new one each round: an episode has a step budget
        return REPO.episode(runtime, task, 1, "bench", REPO.interface("pdb"))

    commands: dict[str, list[float]] = {"debug_step": [], "debug_next": [], "debug_eval": [], "debug_where": []}
    starts: dict[str, list[float]] = {"warm": [], "fresh": []}
    for runtime in runtimes.values():
        warmup = episode(runtime)
        timed(warmup, action_type="debug_start", test=test)  # the fork server starts
        warmup.close()
    for round_ in range(args.runs):
        current = episode(runtimes["warm"])
        starts["warm"].append(timed(current, action_type="debug_start", test=test))
        commands["debug_step"].append(timed(current, action_type="debug_step"))
        commands["debug_next"].append(timed(current, action_type="debug_next"))
        commands["debug_eval"].append(timed(current, action_type="debug_eval", expression="len(params)"))
        commands["debug_where"].append(timed(current, action_type="debug_where"))
        current.close()
        if round_ % 2 == 0:  # the slow baseline, interleaved so both see the same machine load
            current = episode(runtimes["fresh"])
            starts["fresh"].append(timed(current, action_type="debug_start", test=test))
            current.close()
    for name, times in commands.items():
        print(figures(f"{name} (session running)", times))
    print(figures("debug_start, warm fork server", starts["warm"]))
    print(figures("debug_start, fresh interpreter", starts["fresh"]))
    ratio = statistics.median(starts["fresh"]) / statistics.median(starts["warm"])
    print(f"session start: fresh / warm ratio {ratio:.1f}x")
    for runtime in runtimes.values():
        runtime.debug_sandbox.close()
        runtime.sandbox.close()


if __name__ == "__main__":
    main()
