"""An evaluation's episodes played by Ray actors: ``python -m env.eval run ... --ray [ADDRESS]``.

    with RayPool(address=None, url=None, secret=secret.shared_value(), concurrency=2) as pool:   # a local Ray instance
        run(factory, "oracle", ["easy"], 5, 2, out, pool=pool)

Each actor hosts its own environment (a Runtime built once, in process) or drives a server URL over /ws, and plays
one episode per call. The harness in this process plans the jobs and records what comes back, so ``--out`` stays on
this machine and a rerun resumes as before. Workers get the server secret and the settings this process was started
with (``ENV_*``, ``SANDBOX_*``, the model endpoint's variables): the same seeds then give the same episodes as a local
run. Needs Ray (``pip install -e '.[ray]'``); without ``ADDRESS`` a local instance is started for the run and stopped
after it, with ``ADDRESS`` (``auto``, ``HOST:6379``, ``ray://HOST:10001``) the project's code is shipped to the
cluster's workers, whose nodes need its requirements installed.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import openai
import ray
from ray.exceptions import RayError
from ray.util.actor_pool import ActorPool

from env.agents.retry import ModelUnavailable
from env.eval.run import Job, play, stop_reason

ROOT = Path(__file__).resolve().parents[2]
FORWARDED_PREFIXES = ("ENV_", "SANDBOX_", "DEBUG_", "LLM_")  # the server's, the sandbox's and the model calls' settings
FORWARDED_NAMES = ("API_BASE_URL", "MODEL_NAME", "HF_TOKEN", "OPENAI_API_KEY")  # the LLM agent's endpoint
# Not shipped to a cluster (Ray leaves out .git and .venv itself, and what .gitignore names): results are this machine's.
SHIPPED_EXCLUDES = ["results", "bench/results"]


def forwarded_environment(secret: str | None, environ: dict[str, str] | None = None) -> dict[str, str]:
    """What a worker must see of this process's environment to play the same episodes; ``secret`` overrides ENV_SECRET."""
    environ = dict(os.environ if environ is None else environ)
    kept = {k: v for k, v in environ.items() if k.startswith(FORWARDED_PREFIXES) or k in FORWARDED_NAMES}
    if secret is not None:
        kept["ENV_SECRET"] = secret
    return kept


class EpisodeWorker:
    """One Ray actor: an environment of its own (or a server's URL), playing one episode per call."""

    def __init__(self, url: str | None, environment: dict[str, str]):
        os.environ.update(environment)  # before the runtime reads its settings and the secret
        from env.eval.drivers import InProcessDriver, WsDriver

        self.factory: Callable[[], Any]
        if url:
            self.factory = partial(WsDriver, url)
        else:
            from env.families.registry import TaskRegistry
            from env.runtime import Runtime

            self.factory = partial(InProcessDriver, Runtime.from_env(TaskRegistry.from_env()))

    def play(self, agent_name: str, task: dict[str, Any], run: int, profile: str, edit_gate: bool | None) -> tuple[dict[str, Any] | None, str, str | None]:
        """(result, the steps' JSONL, None), or (None, "", why no further episode should start)."""
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

    def __init__(self, address: str | None, url: str | None, secret: str | None, concurrency: int):
        self.address = address
        self.url = url
        self.environment = forwarded_environment(None if url else secret)  # a server keeps its own secret
        self.concurrency = max(1, concurrency)
        self.workers: list[Any] = []
        self.started = False

    def __enter__(self) -> RayPool:
        return self

    def start(self) -> None:
        """Connect to Ray (or start a local instance) and its workers: on the first episode, so a run with nothing
        left to play starts nothing."""
        options: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.WARNING}
        if self.address is None:  # "local": a new instance of our own, never one some other `ray start` left running
            ray.init(address="local", num_cpus=os.cpu_count() or 1, **options)
        else:
            ray.init(address=self.address, runtime_env={"working_dir": str(ROOT), "excludes": SHIPPED_EXCLUDES}, **options)
        self.started = True
        cpus = int(ray.cluster_resources().get("CPU", 0))
        count = max(1, min(self.concurrency, cpus))
        if count < self.concurrency:
            print(f"Ray's cluster has {cpus} CPU(s): {count} worker(s), not {self.concurrency}", file=sys.stderr)
        # A worker lost with its node restarts and its episode is played again: results are written only here.
        actor = ray.remote(num_cpus=1, max_restarts=1, max_task_retries=1)(EpisodeWorker)
        self.workers = [actor.remote(self.url, self.environment) for _ in range(count)]

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
            except RayError as exc:  # a worker lost for good: its episode is not recorded, a rerun plays it
                stopped = stopped or f"a Ray worker failed ({type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''})"
                continue
            if failure is not None:
                stopped = stopped or failure
            else:
                finished(result, steps)
        return stopped

    def __exit__(self, *exc: object) -> None:
        if self.started:
            self.workers = []
            ray.shutdown()  # a local instance stops; a cluster's actors end with this driver
