"""What a server keeps per procedural id: memory and scratch space over many fresh ids (issue 47, finding 7).

    python bench/bench_procedural_cache.py [--ids 1000] [--levels easy medium] [--size 32] [--episodes] [--heap]

Asks the family's task cache (``env.families.procedural.task``, the one the server's catalog uses) for ``--ids``
fresh ids in turn, as clients resetting on ever new ids would, dropping each task after use (as an episode that
ended does). With ``--episodes`` each id is also reset once (its log facts come from a real sandboxed run), which
is slower. Every 10 % of the ids it prints the process's RSS, the number of objects the collector tracks (after
a collection), and the bytes and folders under the cache's scratch folder; at the end, the growth per id from the
10 % mark on (the first ids warm imports and the cache up). ``--heap`` adds the Python heap (tracemalloc), at a cost:
tracemalloc keeps a table of every distinct traceback and file name it has seen, and each fresh id compiles files
under a new temporary folder, so with it on the RSS grows about 60 KiB per id for tracemalloc's own tables, not
the server's. ``--size 0`` measures an unbounded cache (the behaviour before the LRU: one folder and one task kept
per id for the server's life).
"""

from __future__ import annotations

import argparse
import gc
import itertools
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from env.families.procedural.salt import ProceduralSalt  # noqa: E402
from env.families.procedural.task import TaskCache  # noqa: E402

KiB = 1024


def disk(root: Path | None) -> tuple[int, int]:
    """(bytes, task folders) under the cache's scratch folder."""
    if root is None or not root.exists():
        return 0, 0
    size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    return size, sum(1 for p in root.iterdir() if p.is_dir())


def rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * KiB
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ids", type=int, default=1000)
    parser.add_argument("--levels", nargs="+", default=["easy", "medium"])
    parser.add_argument("--size", type=int, default=32, help="the cache's size (0: unbounded, the old behaviour)")
    parser.add_argument("--episodes", action="store_true", help="also reset each id once (log facts from a sandboxed run)")
    parser.add_argument("--heap", action="store_true", help="also trace the Python heap (its own tables inflate the RSS)")
    args = parser.parse_args()
    cache = TaskCache(args.size or 10**9)
    runtime = None
    if args.episodes:
        from env.families.catalog import TaskCatalog
        from env.runtime import Runtime
        from env.sandbox.isolation import probe_isolation
        from env.sandbox.limits import Limits
        from env.sandbox.runner import Sandbox

        runtime = Runtime(TaskCatalog([]), Sandbox(Limits(), probe_isolation(disabled=set(), allow_unsafe=False)), workers=4)
    salt = ProceduralSalt.from_env()
    ids = (f"proc-{level}-train-{index}" for index, level in zip(itertools.count(), itertools.cycle(args.levels)))
    if args.heap:
        tracemalloc.start()
    started = time.monotonic()
    print(f"cache size {args.size or 'unbounded'}, {args.ids} fresh ids of {', '.join(args.levels)}, salt {salt.record}")
    print(f"{'ids':>6} {'heap MiB':>9} {'RSS MiB':>8} {'objects':>8} {'scratch MiB':>12} {'folders':>8} {'kept':>5} {'s':>7}")
    step = max(1, args.ids // 10)
    marks: list[tuple[int, int, int, int]] = []  # (ids, RSS, objects, scratch bytes) at each mark
    for number, task_id in enumerate(itertools.islice(ids, args.ids), start=1):
        task = cache.get(task_id, salt)
        if runtime is not None:
            from env.families.procedural.family import PROCEDURAL

            PROCEDURAL.episode(runtime, task, seed=1, episode_id=f"bench-{number}").close()
        del task
        if number % step == 0 or number == 1:
            gc.collect()
            heap = f"{tracemalloc.get_traced_memory()[0] / KiB / KiB:.1f}" if args.heap else "-"
            size, folders = disk(cache.root)
            resident, objects = rss(), len(gc.get_objects())
            marks.append((number, resident, objects, size))
            print(f"{number:>6} {heap:>9} {resident / KiB / KiB:>8.1f} {objects:>8} {size / KiB / KiB:>12.1f} {folders:>8} {len(cache):>5} "
                  f"{time.monotonic() - started:>7.1f}", flush=True)  # fmt: skip
    if runtime is not None:
        runtime.sandbox.close()
    if len(marks) > 2:
        (first, rss0, objects0, disk0), (last, rss1, objects1, disk1) = marks[1], marks[-1]
        ids = last - first
        print(f"from id {first} to {last}: RSS {(rss1 - rss0) / KiB / ids:+.1f} KiB per id, objects {(objects1 - objects0) / ids:+.2f} per id, "
              f"scratch {(disk1 - disk0) / KiB / ids:+.2f} KiB per id" + (" (RSS includes tracemalloc's tables)" if args.heap else ""))  # fmt: skip


if __name__ == "__main__":
    main()
