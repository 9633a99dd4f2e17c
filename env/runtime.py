"""Services shared by every episode of one server: tasks, the sandbox and the worker threads.

    runtime = Runtime.from_env()            # what the server builds once at start-up
    runtime = Runtime.default()             # the same, built lazily for ``DebugEnvironment()``

Holds no episode state, and the server's secret (``env.secret``). The only cache is each task's
baseline verdict (the buggy code's own test run), which is deterministic and shared read-only.
"""

from __future__ import annotations

import functools
import logging
import os
import random
import threading
from concurrent.futures import ThreadPoolExecutor

from env.debugger.session import DebugSlots
from env.families.classic.judge import Verdict, judge
from env.families.classic.task import TaskSpec
from env.families.registry import TaskRegistry
from env.sandbox.isolation import Isolation, probe_isolation
from env.sandbox.limits import Limits
from env.sandbox.policy import Policy
from env.sandbox.runner import Sandbox
from env.sandbox.shell import ShellLimits, ShellRunner
from env.secret import ServerSecret

log = logging.getLogger("agentdebugger")


class Runtime:
    def __init__(
        self, registry: TaskRegistry, sandbox: Sandbox, workers: int = 32, static_check: bool = True, debug_sessions: int = 64,
        judge_slots: int | None = None, secret: ServerSecret | None = None,
    ):
        self.registry = registry
        # What decides a verdict (the race check's scenarios) derives from this and the episode's seed, never the seed alone.
        self.secret = secret or ServerSecret.from_env()
        self.sandbox = sandbox
        # Debugging sessions and scripts: the same isolation and limits, plus pytest (see Sandbox).
        self.debug_sandbox = Sandbox(sandbox.limits, sandbox.isolation, sandbox.tmp_root, warm=sandbox.zygote is not None, debug=True)
        self.shell = ShellRunner(sandbox.isolation, ShellLimits.from_env())
        # A stopped debugging session keeps its process until the episode ends: their number is capped.
        self.debug_slots = DebugSlots(debug_sessions)
        self.static_check = static_check
        # Sandbox runs block on pipes, not on the CPU: threads keep the event loop free.
        self.executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="adbg-run")
        # ... but judging a classic submission runs its trusted tests here, Python work that holds the GIL:
        # more judgments at once than cores only slows each of them and leaves the event loop waiting.
        self.judge_slots = judge_slots or max(2, os.cpu_count() or 2)
        self._judging = threading.BoundedSemaphore(self.judge_slots)
        self._baselines: dict[str, Verdict] = {}
        self._baseline_lock = threading.Lock()

    @classmethod
    def from_env(cls, secret: ServerSecret | None = None) -> Runtime:
        isolation = probe_isolation()
        log_isolation(isolation)
        return cls(
            TaskRegistry.from_env(),
            Sandbox(Limits.from_env(), isolation),
            workers=int(os.environ.get("ENV_WORKERS", "32")),
            static_check=Policy.for_task(frozenset()).enabled,
            debug_sessions=int(os.environ.get("DEBUG_MAX_SESSIONS", "64")),
            judge_slots=int(os.environ.get("ENV_JUDGE_SLOTS", "0")) or None,
            secret=secret,
        )

    @staticmethod
    @functools.cache
    def default() -> Runtime:
        return Runtime.from_env()

    @property
    def isolation(self) -> Isolation:
        return self.sandbox.isolation

    def judge(self, task: TaskSpec, source: str, rng: random.Random, with_stress: bool = True) -> Verdict:
        with self._judging:  # the sandbox's wall clock starts inside, so waiting here never counts against a run
            return judge(task, source, self.sandbox, rng, self.static_check, with_stress=with_stress)

    def baseline(self, task: TaskSpec) -> Verdict:
        """The buggy code's own run, as the agent first sees it (no stress test: that is the trap)."""
        with self._baseline_lock:
            if task.id not in self._baselines:
                self._baselines[task.id] = self.judge(task, task.buggy_source, random.Random(0), with_stress=False)
            return self._baselines[task.id]


def log_isolation(isolation: Isolation) -> None:
    log.info("sandbox isolation tier: %s", isolation.tier)
    for name, layer in isolation.layers.items():
        log.info("  %-20s %-3s %s", name, "on" if layer.active else "off", layer.detail)
    for name, held in isolation.guarantees.items():
        log.info("  guarantee %-20s %s", name, held.by or "MISSING (needs " + held.needs + ")")
    if isolation.reason:
        log.warning("sandbox: %s", isolation.reason)
    if isolation.shell_refusal:
        log.warning("sandbox: %s", isolation.shell_refusal)
