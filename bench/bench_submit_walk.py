"""The walk of one repository ``submit`` through the package's modules: how often it goes back and forth.

    python bench/bench_submit_walk.py [--task TASK_ID] [--verbose]

A profiler follows the calling thread through one ``submit`` on a bundled repository task (after a warm-up
``submit`` on another episode, so nothing is started or written for the first time) and records which of the
package's files runs, each time that changes. It prints:

- stops: the changes of file (a call into another module, or a return to one);
- rooms: the distinct files visited;
- entries into repo_judge.py (calls from another file), returns into it (a callee handing control back), and
  climbs back: every change made by a return;
- doors: the distinct (caller's file, callee's file) pairs, which the CPU meter's ticks (how often a run is looked
  at while it waits) do not change, unlike the counts above; and repo_judge.py's doors, by file.

Only the package's own files count (``env/``); the standard library and third-party code are walked through.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from types import FrameType

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from env.contract import TaskFilter  # noqa: E402
from env.families.catalog import TaskCatalog  # noqa: E402
from env.families.repo.family import REPO  # noqa: E402
from env.models import DebugAction  # noqa: E402
from env.project import RepoTask  # noqa: E402
from env.runtime import Runtime  # noqa: E402
from env.sandbox.isolation import probe_isolation  # noqa: E402
from env.sandbox.limits import Limits  # noqa: E402
from env.sandbox.runner import Sandbox  # noqa: E402

PACKAGE = Path(__file__).resolve().parents[1] / "env"
JUDGE = "verdict/repo_judge.py"


def walk(task: RepoTask, runtime: Runtime) -> tuple[list[tuple[str, str]], set[tuple[str, str]]]:
    """(file relative to env/, "call" or "return") each time the running package file changes during one submit, and
    the (caller's file, callee's file) pairs."""
    episode = REPO.episode(runtime, task, seed=1, episode_id="walk")
    stack: list[str] = []  # the package files of the frames being profiled, innermost last
    steps: list[tuple[str, str]] = []
    doors: set[tuple[str, str]] = set()

    def where(frame: FrameType) -> str | None:
        path = Path(frame.f_code.co_filename)
        return str(path.relative_to(PACKAGE)) if path.is_relative_to(PACKAGE) else None

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event not in ("call", "return"):
            return
        name = where(frame)
        if name is None:
            return
        if event == "call":
            if not stack or stack[-1] != name:
                steps.append((name, "call"))
                if stack:
                    doors.add((stack[-1], name))
            stack.append(name)
        elif stack:
            stack.pop()
            if stack and stack[-1] != name:
                steps.append((stack[-1], "return"))

    try:
        sys.setprofile(profile)
        episode.step(DebugAction(action_type="submit"))
    finally:
        sys.setprofile(None)
        episode.close()
    return steps, doors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task")
    parser.add_argument("--verbose", action="store_true", help="print the walk itself")
    args = parser.parse_args()
    catalog = TaskCatalog.from_env()
    tasks = sorted((t for t in catalog.select(TaskFilter(family="repo")) if isinstance(t, RepoTask)), key=lambda t: t.id)
    task = catalog.get(args.task) if args.task else tasks[0]
    assert isinstance(task, RepoTask)
    runtime = Runtime(catalog, Sandbox(Limits(), probe_isolation()), workers=4)
    try:
        walk(task, runtime)  # warm-up: test trees written, hosts started
        steps, doors = walk(task, runtime)
    finally:
        close = getattr(runtime, "close", None)
        if close is not None:
            close()
    rooms = Counter(name for name, _ in steps)
    print(f"task {task.id}")
    print(f"stops (changes of file)        {len(steps) - 1}")
    print(f"rooms (distinct files)         {len(rooms)}")
    print(f"entries into {JUDGE}  {sum(1 for name, how in steps if name == JUDGE and how == 'call')}")
    print(f"returns into {JUDGE}  {sum(1 for name, how in steps if name == JUDGE and how == 'return')}")
    print(f"climbs back (returns, all)     {sum(1 for _, how in steps if how == 'return')}")
    print(f"doors (caller -> callee files)  {len(doors)}")
    print(f"  of which from {JUDGE}: {', '.join(sorted(b for a, b in doors if a == JUDGE))}")
    if args.verbose:
        for name, how in steps:
            print(f"  {'->' if how == 'call' else '<-'} {name}")


if __name__ == "__main__":
    main()
