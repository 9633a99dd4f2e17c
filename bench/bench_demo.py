"""What the demo adds to a step, and whether it holds on to memory (prints figures).

    python bench/bench_demo.py [--episodes 30]

Starts ``python app.py`` on a free port and plays the easy task's fix through Gradio's own client (the
same queue and events a browser uses: start an episode, submit the fix), then the same two actions on
an in-process environment, in the same run. Prints the medians, their ratio, and the app's resident
memory before and after the episodes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gradio_client import Client  # noqa: E402

from env.families.catalog import TaskCatalog  # noqa: E402
from env.models import DebugAction  # noqa: E402
from env.runtime import Runtime  # noqa: E402
from env.server.environment import DebugEnvironment  # noqa: E402
from env.server.local import start_local_demo  # noqa: E402

HYPOTHESIS = "off-by-one: the while loop must be left <= right to check the last element"


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=30)
    args = parser.parse_args()
    fixed = TaskCatalog.builtin().get("easy").gold_source

    env = DebugEnvironment(Runtime.from_env(TaskCatalog.from_env()))
    direct_start, direct_submit = [], []
    for i in range(args.episodes + 1):
        t0 = time.perf_counter()
        env.reset(task_id="easy", seed=i)
        t1 = time.perf_counter()
        env.step(DebugAction(action_type="submit_fix", fixed_code=fixed, hypothesis=HYPOTHESIS))
        t2 = time.perf_counter()
        if i:  # the first is a warm-up
            direct_start.append((t1 - t0) * 1000)
            direct_submit.append((t2 - t1) * 1000)
    env.close()

    proc, url = start_local_demo()
    try:
        client = Client(url, verbose=False)
        client.predict("easy", "default", 0, api_name="/start")  # warm-up
        client.predict(fixed, HYPOTHESIS, api_name="/submit_fix")
        before = rss_mb(proc.pid)
        trivial = []
        for _ in range(args.episodes):  # Gradio's own round trip: an event that does almost nothing
            t0 = time.perf_counter()
            client.predict("easy", api_name="/on_task_change")
            trivial.append((time.perf_counter() - t0) * 1000)
        ui_start, ui_submit = [], []
        for i in range(1, args.episodes + 1):
            t0 = time.perf_counter()
            client.predict("easy", "default", i, api_name="/start")
            t1 = time.perf_counter()
            out = client.predict(fixed, HYPOTHESIS, api_name="/submit_fix")
            t2 = time.perf_counter()
            if "(solved)" not in str(out[2]):  # outputs: error, status, score, ... (the session state is not sent)
                raise SystemExit(f"episode {i} did not show a solve: {out[2]!r}")
            ui_start.append((t1 - t0) * 1000)
            ui_submit.append((t2 - t1) * 1000)
        after = rss_mb(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=20)

    med = statistics.median
    print(f"{args.episodes} episodes of the easy task (start, then the fix), medians:")
    print(f"  start an episode: through the demo {med(ui_start):6.1f} ms, in-process environment {med(direct_start):6.1f} ms  (x{med(ui_start) / med(direct_start):.1f})")
    print(f"  submit the fix:   through the demo {med(ui_submit):6.1f} ms, in-process environment {med(direct_submit):6.1f} ms  (x{med(ui_submit) / med(direct_submit):.1f})")
    print(f"  Gradio's own round trip (an event that only looks up a task's interfaces): {med(trivial):.1f} ms")
    print(f"  the demo's resident memory: {before:.0f} MB before, {after:.0f} MB after ({after - before:+.0f} MB)")


if __name__ == "__main__":
    main()
