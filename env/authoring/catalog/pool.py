"""Where the catalog's jobs run: in this process, in ``jobs`` processes, or on Ray; results come back as each ends.

    for result in run(build_one, jobs, workers=4, ray=None):      # "" for a local Ray instance, or ADDRESS
        ...

One job runs at a time in each process (``env.authoring.cost`` meters a process's whole tree: two jobs at once in
one process would count each other's CPU). Processes are spawned, not forked (this process has threads), and die
with this one. On Ray each job is a task of one CPU; without ADDRESS a local instance of ``workers`` CPUs is started
for the run and stopped after it, with ADDRESS (``auto`` or HOST:6379 from a node of the cluster) the project's
code is shipped to the cluster, whose nodes need its requirements; the results (task folders as text) come back
here, so DIR need not be shared. Workers see this process's ENV_* and SANDBOX_* settings (caches, limits).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any, TypeVar

from env import settings
from env.sandbox.lifetime import die_with_parent

J = TypeVar("J")
R = TypeVar("R")
ROOT = Path(__file__).resolve().parents[3]
# Never shipped to a cluster's workers: what only this checkout uses, and what may be large or private.
SHIPPED_EXCLUDES = [".git", ".venv", ".ci", "tests", "bench", "examples", "results", "build", "*.egg-info"]


def cores() -> int:
    return len(os.sched_getaffinity(0))


def run(fn: Callable[[J], R], jobs: list[J], workers: int, ray: str | None = None) -> Iterator[R]:
    if ray is not None:
        yield from on_ray(fn, jobs, workers, ray or None)
    elif workers <= 1 or len(jobs) <= 1:
        yield from map(fn, jobs)
    else:
        yield from in_processes(fn, jobs, workers)


def in_processes(fn: Callable[[J], R], jobs: list[J], workers: int) -> Iterator[R]:
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"), initializer=die_with_parent) as pool:
        pending: set[Future[R]] = set()
        queue = list(reversed(jobs))
        while queue or pending:
            while queue and len(pending) < 2 * workers:  # a few ahead, not every job's arguments at once
                pending.add(pool.submit(fn, queue.pop()))
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield future.result()


def forwarded() -> dict[str, str]:
    """What a Ray worker must see of this environment: the project's settings, and this checkout on its path."""
    kept = {k: v for k, v in os.environ.items() if k.startswith(settings.OWN_PREFIXES) and k != "ENV_SECRET"}
    return {**kept, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}


def on_ray(fn: Callable[[J], R], jobs: list[J], workers: int, address: str | None) -> Iterator[R]:
    try:
        import ray
    except ImportError as exc:
        raise SystemExit(f"--ray needs Ray, which is not installed here ({exc}): pip install -e '.[ray]'") from exc
    options: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.WARNING}
    try:
        if address is None:  # a new local instance of our own, never one some other `ray start` left running
            ray.init(address="local", num_cpus=max(1, min(workers, cores())), runtime_env={"env_vars": forwarded()}, **options)
        else:
            shipped = {
                "working_dir": str(ROOT),
                "excludes": SHIPPED_EXCLUDES,
                "env_vars": {k: v for k, v in forwarded().items() if k != "PYTHONPATH"},
            }
            ray.init(address=address, runtime_env=shipped, **options)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise SystemExit(f"could not reach Ray at {address or 'a new local instance'} ({' '.join(str(exc).split())[:300]}); an ADDRESS "
                         "is `auto` or HOST:6379 from a node of the cluster") from exc  # fmt: skip
    try:
        remote = ray.remote(num_cpus=1, max_retries=1)(fn)  # a job lost with its node runs again
        ahead = 2 * max(1, int(ray.cluster_resources().get("CPU", 1)))
        queue = list(reversed(jobs))
        pending: list[Any] = []  # Ray's object refs
        while queue or pending:
            while queue and len(pending) < ahead:
                pending.append(remote.remote(queue.pop()))
            done, pending = ray.wait(pending, num_returns=1)
            yield ray.get(done[0])
    finally:
        ray.shutdown()  # a local instance stops; a cluster's tasks end with this driver
