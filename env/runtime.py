"""Services shared by every episode of one server: tasks, the sandbox and the worker threads.

    runtime = Runtime.from_env(TaskCatalog.from_env())     # what the server builds once at start-up
    with runtime.cpu.owner(episode_id): ...                  # runs started inside share the CPU slots fairly
    runtime.once(("classic-baseline", task.id), compute)     # a deterministic result, computed once

Holds no episode state, and the server's secret (``env.secret``). What it keeps between episodes it owns and
closes (``close()``, at the latest when it is collected or the process exits): ``once``, what is deterministic for a
task (the buggy code's own test run, the facts its logs are built from), shared read-only; and ``verdict_hosts``,
the repository verdicts' test trees, test sandboxes and warm test hosts; and ``templates``, each repository task's
prepared workspace. What must be one per process instead is
listed in ``env.process_state``.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import weakref
from collections.abc import Callable, Hashable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar, cast

from env import settings
from env.contract import Catalog
from env.debugger.session import DebugSlots
from env.sandbox.isolation import Isolation, probe_isolation
from env.sandbox.limits import Limits
from env.sandbox.policy import Policy
from env.sandbox.runner import Sandbox
from env.sandbox.shell import ShellLimits, ShellRunner
from env.sandbox.slots import CpuSlots
from env.scratch import scratch_root
from env.secret import ServerSecret
from env.verdict.hosts import VerdictHosts
from env.workspace import Templates

log = logging.getLogger("agentdebugger")
T = TypeVar("T")


class Runtime:
    def __init__(
        self, catalog: Catalog, sandbox: Sandbox, workers: int = 32, static_check: bool = True, debug_sessions: int = 64,
        cpu_slots: int | None = None, secret: ServerSecret | None = None,
    ):
        self.catalog = catalog
        # Rewards of tasks whose FAIL_TO_PASS tests run sandboxed (forgeable in principle) are paid only when asked.
        self.allow_sandboxed_reward = settings.switch("ENV_ALLOW_SANDBOXED_REWARD")
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
        # ... but runs compute (a classic judgment's trusted tests in these threads, holding the GIL; the code in its
        # child): one CPU slot per core, held only while a run computes and handed out fairly across episodes.
        self.cpu = CpuSlots(cpu_slots or max(2, os.cpu_count() or 2), float(settings.integer("ENV_SLOT_WAIT_S")) or None)
        self._once: dict[Hashable, object] = {}
        self._once_lock = threading.Lock()
        self._once_locks: dict[Hashable, threading.Lock] = {}
        # What repository verdicts reuse (pass it to repo_judge.run_tests); its trees lie on /dev/shm, its hosts are
        # processes: closed with this runtime, at exit at the latest.
        self.verdict_hosts = VerdictHosts()
        # Each repository task's prepared template, which its episodes' workspaces copy.
        self.templates = Templates()
        self._closed = weakref.finalize(self, _close, self.verdict_hosts, self.templates)

    @classmethod
    def from_env(cls, catalog: Catalog, secret: ServerSecret | None = None) -> Runtime:
        isolation = probe_isolation()
        log_isolation(isolation)
        return cls(
            catalog,
            Sandbox(Limits.from_env(), isolation),
            workers=settings.integer("ENV_WORKERS"),
            static_check=Policy.for_task(frozenset()).enabled,
            debug_sessions=settings.integer("DEBUG_MAX_SESSIONS"),
            cpu_slots=settings.integer("ENV_CPU_SLOTS") or None,
            secret=secret,
        )

    @functools.cached_property
    def scratch_roots(self) -> tuple[str, ...]:
        """Where runs and workspaces get their random directories: paths under them are shown relative to their own."""
        return tuple(sorted({str(scratch_root()), str(self.sandbox.tmp_root), str(self.shell.tmp_root)}))

    @property
    def isolation(self) -> Isolation:
        return self.sandbox.isolation

    def close(self) -> None:
        """Stop the warm test hosts, remove the test trees and the templates (the executor's threads end with their
        work)."""
        self._closed()

    def once(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()``'s result, computed once per key for this runtime (it must be deterministic)."""
        with self._once_lock:  # one lock per key: computing one task's result never waits for another's
            lock = self._once_locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self._once:
                self._once[key] = compute()
            return cast(T, self._once[key])  # what this key's compute() returned


def _close(hosts: VerdictHosts, templates: Templates) -> None:
    # a function of what it closes, not a method: the finalizer must not hold the runtime alive
    hosts.close()
    templates.close()


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
