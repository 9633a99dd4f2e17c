"""An evaluation's episodes played by Ray actors: ``python -m env.eval run ... --ray [ADDRESS]``.

    with RayPool(address=None, url=None, secret=secret.shared_value(), concurrency=2) as pool:   # a local Ray instance
        run(factory, "oracle", ["easy"], 5, 2, out, pool=pool)

Each actor hosts its own environment (a Runtime built once, in process) or drives a server URL over /ws, and plays
one episode per call. The harness in this process plans the jobs and records what comes back, so ``--out`` stays on
this machine and a rerun resumes as before. Workers get the server secret and the settings this process was started
with (``ENV_*``, ``SANDBOX_*``, the model endpoint's variables): the same seeds then give the same episodes as a local
run. Needs Ray (``pip install -e '.[ray]'``); without ``ADDRESS`` a local instance is started for the run and stopped
after it, with ``ADDRESS`` (``auto``, or ``HOST:6379`` from a node of that cluster) the project's code is shipped to
the cluster's workers, whose nodes need its requirements installed.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import openai
import ray
from ray.exceptions import ActorDiedError, RayActorError, RayError, RayTaskError
from ray.util.actor_pool import ActorPool

from env import settings
from env.agents.retry import ModelUnavailable
from env.eval.run import Job, play, stop_reason

if TYPE_CHECKING:
    from env.contract import Catalog
    from env.eval.drivers import Driver

ROOT = Path(__file__).resolve().parents[2]
FORWARDED_PREFIXES = settings.OWN_PREFIXES  # the server's, the sandbox's, run_bash's and the model calls' settings
FORWARDED_NAMES = ("API_BASE_URL", "MODEL_NAME", "HF_TOKEN", "OPENAI_API_KEY")  # the LLM agent's endpoint
# Never shipped to a cluster's workers: what only this checkout uses (Ray leaves out .git and .venv too, since 2.5x;
# said here for older releases), and results, which may hold an evaluation's secret (`--out`/secret).
SHIPPED_EXCLUDES = [".git", ".venv", ".ci", "tests", "bench", "examples", "results", "build", "*.egg-info"]


def forwarded_environment(secret: str | None, environ: dict[str, str] | None = None) -> dict[str, str]:
    """What a worker must see of this process's environment to play the same episodes. ``secret`` is the run's own
    (an in-process run's); None when the workers drive a server, which keeps its secret: none is passed on then."""
    environ = dict(os.environ if environ is None else environ)
    kept = {k: v for k, v in environ.items() if k.startswith(FORWARDED_PREFIXES) or k in FORWARDED_NAMES}
    kept.pop("ENV_SECRET", None)
    if secret is not None:
        kept["ENV_SECRET"] = secret
    return kept


def shipped_excludes(out: Path) -> list[str]:
    """SHIPPED_EXCLUDES, and ``out`` when it lies inside the checkout (its results and its kept secret)."""
    try:
        inside = out.resolve().relative_to(ROOT)
    except ValueError:
        return list(SHIPPED_EXCLUDES)
    return [*SHIPPED_EXCLUDES, f"/{inside.as_posix()}"]


def worker_failure(exc: RayError) -> str:
    """Why a run stops when a worker raised or was lost: the cause itself, not Ray's wrapper (its process and ids)."""
    if isinstance(exc, RayTaskError):
        cause = exc.cause
        return f"an episode raised on a Ray worker ({type(cause).__name__}: {' '.join(str(cause).split()) or '(no message)'})"
    if isinstance(exc, ActorDiedError | RayActorError):
        return f"a Ray worker was lost, with its node or process ({type(exc).__name__})"
    return f"Ray failed ({type(exc).__name__}: {' '.join(str(exc).split())[:300]})"


def reachable(address: str | None) -> None:
    """A HOST:PORT that nothing answers on is refused at once (Ray itself retries it for minutes)."""
    if not address or "://" in address:  # a new local instance, or Ray Client's ray://
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():  # `auto`
        return
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as exc:
        raise SystemExit(f"could not reach Ray at {address} ({exc}); an ADDRESS is `auto` or HOST:6379 from a node of the cluster") from exc


class EpisodeWorker:
    """One Ray actor: an environment of its own (or a server's URL), playing one episode per call. Its settings and
    the secret are in its process's environment from the start (the actor's runtime_env), as a server's would be."""

    def __init__(self, url: str | None):
        from env.eval.drivers import WsDriver
        from env.server.in_process import InProcessDriver

        self.factory: Callable[[], Driver]
        self.catalog: Catalog | None = None  # a server says itself which tasks it has
        if url:
            self.factory = partial(WsDriver, url)
        else:
            from env.families.catalog import TaskCatalog
            from env.runtime import Runtime

            runtime = Runtime.from_env(TaskCatalog.from_env())
            self.catalog = runtime.catalog
            self.factory = partial(InProcessDriver, runtime)

    def known(self, task_id: str) -> bool:
        if self.catalog is None:
            return True
        try:
            self.catalog.get(task_id)
        except (KeyError, ValueError):  # unknown, or a procedural id out of range
            return False
        return True

    def play(self, agent_name: str, task: dict[str, Any], run: int, profile: str, edit_gate: bool | None) -> tuple[dict[str, Any] | None, str, str | None]:
        """(result, the steps' JSONL, None), or (None, "", why no further episode should start)."""
        if not self.known(task["id"]):
            from env.families.catalog import Sources

            sources = Sources.from_env()
            return None, "", (
                f"task {task['id']!r} is not on the Ray worker's node: the tasks come from the shipped checkout, "
                f"ENV_TASK_DIRS={sources.task_dirs!r} and ENV_CATALOG={sources.catalog!r}, read on each node "
                "(put those folders at the same path there)"
            )
        with tempfile.TemporaryDirectory(prefix="adbg-ray-") as folder:
            steps = Path(folder) / "run.jsonl"
            try:
                with self.factory() as driver:
                    result = play(driver, agent_name, task, run, steps, profile, edit_gate)
            except (ModelUnavailable, openai.APIError) as exc:  # its type need not unpickle on the driver: say why here
                return None, "", stop_reason(exc)
            return result, steps.read_text(encoding="utf-8"), None


class RayPool:
    """Ray actors that play an evaluation's episodes: at most ``concurrency`` of them, one CPU each."""

    def __init__(self, address: str | None, url: str | None, secret: str | None, concurrency: int, out: Path):
        self.address = address
        self.url = url
        self.environment = forwarded_environment(None if url else secret)
        self.concurrency = max(1, concurrency)
        self.out = out
        self.workers: list[Any] = []  # Ray's actor handles (ray.actor.ActorHandle, not generic over the class)
        self.started = False

    def __enter__(self) -> RayPool:
        return self

    def start(self) -> None:
        """Connect to Ray (or start a local instance) and its workers: on the first episode, so a run with nothing
        left to play starts nothing."""
        options: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.WARNING}
        reachable(self.address)
        try:
            if self.address is None:  # "local": a new instance of our own, never one some other `ray start` left running
                ray.init(address="local", num_cpus=min(self.concurrency, len(os.sched_getaffinity(0))), **options)
            else:
                ray.init(address=self.address, runtime_env={"working_dir": str(ROOT), "excludes": shipped_excludes(self.out)}, **options)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise SystemExit(
                f"could not reach Ray at {self.address or 'a new local instance'} ({' '.join(str(exc).split())[:300]}); an ADDRESS "
                "is `auto` or HOST:6379 from a node of the cluster, and the cluster's RAY_AUTH_TOKEN where it uses token authentication"
            ) from exc
        self.started = True
        cpus = int(ray.cluster_resources().get("CPU", 0))
        count = max(1, min(self.concurrency, cpus))
        if count < self.concurrency:
            print(f"Ray's cluster has {cpus} CPU(s): {count} worker(s), not {self.concurrency}", file=sys.stderr)
        # A worker lost with its node restarts and its episode is played again: results are written only here.
        actor = ray.remote(num_cpus=1, max_restarts=1, max_task_retries=1, runtime_env={"env_vars": self.environment})(EpisodeWorker)
        self.workers = [actor.remote(self.url) for _ in range(count)]

    def play(
        self, agent_name: str, jobs: list[Job], profile: str, edit_gate: bool | None, finished: Callable[[dict[str, Any], str], None],
    ) -> str | None:
        if not self.started:
            self.start()
        pool = ActorPool(self.workers)
        pending = list(jobs)
        stopped: str | None = None
        while (pending and stopped is None) or pool.has_next():
            while pending and stopped is None and pool.has_free():  # one episode per idle worker: a stop starts no more
                task, run = pending.pop(0)
                pool.submit(lambda worker, job: worker.play.remote(agent_name, job[0], job[1], profile, edit_gate), (task, run))
            try:
                result, steps, failure = pool.get_next_unordered()
            except RayError as exc:  # this episode is not recorded: a rerun plays it
                stopped = stopped or worker_failure(exc)
                continue
            if failure is not None:
                stopped = stopped or failure
            elif result is not None:
                finished(result, steps)
        return stopped

    def __exit__(self, *exc: object) -> None:
        if self.started:
            self.workers = []
            ray.shutdown()  # a local instance stops; a cluster's actors end with this driver
