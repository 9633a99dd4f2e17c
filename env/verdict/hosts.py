"""What repository verdicts keep between runs: test trees, test sandboxes and warm test hosts, owned by one object.

    hosts = VerdictHosts()                       # a Runtime holds one (``runtime.verdict_hosts``), and closes it
    split = hosts.for_split(sandbox, env, task, graded=True)   # all one split run needs, asked for at once:
    split.sandbox, split.tree, split.server      # its sandbox, the tests' directory, the environment's warm test host
    hosts.close()                                # hosts stopped, trees removed

Callers without a Runtime (authoring, benches, tests) share the process's one (``default_hosts()``,
``env.process_state``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import weakref
from dataclasses import dataclass
from pathlib import Path

from env.process_state import process_wide
from env.project import RepoTask
from env.sandbox.lifetime import parent_env, spawn
from env.sandbox.runner import Sandbox
from env.scratch import scratch_root
from env.verdict.testenv import TestEnv

HOST = Path(__file__).with_name("host")  # started as the package adbg_host, never as part of env

# The warm test process's hash seed, and so its split runs' projects': fixed, so a run's set and dict orders are the
# same from one episode to the next (a validation's runs vary it: see repo_judge.run_tests).
HOST_SEED = 0
# Test sandboxes (one per test environment) whose fork server of HOST_SEED is kept: a server with many libraries'
# tasks keeps the most recently used environments' warm, and the others start theirs again when next asked.
WARM_TEST_SANDBOXES = 4
# A validation's runs each hash with another seed, so that a test depending on a set or dict order shows it: run i
# takes the i-th of VALIDATION_SEEDS distinct seeds (the served runs' first, then seeds the process drew), repeating
# past them. A test host is kept warm for each (a cold one starts Python and imports pytest for every run): at most
# WARM_VALIDATION_HOSTS at once, the least recently used idle one let go first.
VALIDATION_SEEDS = 10
WARM_VALIDATION_HOSTS = 10


def host_path() -> str:
    """A directory holding only ``adbg_host`` (a link to env/verdict/host): the test process's PYTHONPATH. One per
    checkout (named by its path): two checkouts on one host each run their own test host, never the other's."""
    target = HOST.resolve()
    root = Path(scratch_root(), "adbg-host-path-" + hashlib.sha256(str(target).encode()).hexdigest()[:16])
    if not (root / "adbg_host").exists():
        root.mkdir(mode=0o700, exist_ok=True)  # like every scratch entry: the server's uid alone (the host runs as it)
        with contextlib.suppress(FileExistsError):
            (root / "adbg_host").symlink_to(target, target_is_directory=True)
    return str(root)


def host_env(seed: int = HOST_SEED) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": host_path(),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": str(seed),
        "MALLOC_ARENA_MAX": "2",
    }


class HostServer:
    """The warm path: ``adbg_host.pytest_host --serve`` in one test environment, a fork server with pytest imported,
    hashing strings with ``seed``.

    Replaced when it dies; safe from many threads (one lock around each request and its pid reply).
    """

    def __init__(self, env: TestEnv, seed: int = HOST_SEED) -> None:
        self.env = env
        self.seed = seed
        self.users = 0  # split runs holding it (VerdictHosts.for_split, .release): only an idle one is let go
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._sock: socket.socket | None = None

    def _start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._proc = spawn(lambda: subprocess.Popen(  # it dies with this process (env.sandbox.lifetime)
                [str(self.env.python), "-m", "adbg_host.pytest_host", "--serve", str(theirs.fileno())],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=scratch_root(),
                env={**host_env(self.seed), **parent_env()},
                pass_fds=(theirs.fileno(),),
                start_new_session=True,
            ))
        except BaseException:
            ours.close()
            theirs.close()
            raise
        theirs.close()
        self._sock = ours

    def spawn(self, fds: list[int]) -> int:
        with self._lock:
            for attempt in (1, 2):
                if self._proc is None or self._proc.poll() is not None:
                    self._start()
                assert self._sock is not None
                try:
                    socket.send_fds(self._sock, [b"r"], fds)
                    self._sock.settimeout(10.0)
                    return int(self._sock.recv(32))
                except (OSError, ValueError):
                    self.close()
                    if attempt == 2:
                        raise
            raise OSError("unreachable")

    def close(self) -> None:
        if self._proc is not None:
            with contextlib.suppress(OSError):
                os.killpg(self._proc.pid, signal.SIGKILL)
            self._proc.wait()
            self._proc = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None


@dataclass(frozen=True)
class SplitHosts:
    """What one split run needs of the hosts (one question, not one per part: the verdict does not walk back and
    forth between its run and their owner)."""

    sandbox: Sandbox  # the base sandbox with a test run's limits, reading the task's requirements where it has any
    tree: str  # the directory the trusted test process runs in
    server: HostServer  # the test environment's warm test host of the run's seed (started on its first request)


class VerdictHosts:
    """Everything a repository verdict reuses from one run to the next; safe from many threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._trees: dict[tuple[str, str, bool], str] = {}
        self._servers: dict[tuple[str, int], HostServer] = {}  # (test environment's key, hash seed) -> its warm host
        self._seeds = [HOST_SEED]  # VALIDATION_SEEDS distinct seeds, drawn as runs ask for them
        self._seeded_hosts: dict[tuple[str, int], None] = {}  # the validation seeds' warm hosts, least recently used first
        # base sandbox -> (test environment's key, sandboxed?) -> its test sandbox; weak: an id() key could name a later
        # sandbox after a first one is gone, which would hand it the other's limits and isolation
        self.test_sandboxes: weakref.WeakKeyDictionary[Sandbox, dict[tuple[str, bool], Sandbox]] = weakref.WeakKeyDictionary()
        self._warm: dict[int, weakref.ref[Sandbox]] = {}  # the test sandboxes whose seeded fork server is kept, oldest first

    def tree(self, task: RepoTask, graded: bool) -> str:
        """Each task's test files (and the repository's data files they may read) written once to a private directory
        the host runs in."""
        key = (task.id, str(task.folder), graded)
        with self._lock:
            if key not in self._trees:
                root = tempfile.mkdtemp(prefix=f"adbg-tests-{task.id[:40]}-", dir=scratch_root())
                for rel, text in {**task.data_files, **(task.grading_tests if graded else task.visible_tests)}.items():
                    path = Path(root, rel)
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(text, encoding="utf-8")
                self._trees[key] = root
            return self._trees[key]

    def test_sandbox(self, base: Sandbox, env: TestEnv | None, sandboxed: bool = False) -> Sandbox:
        """``base`` with a test run's limits (``Limits.for_tests``), reading the test environment's site-packages too
        when given one; ``sandboxed``: the configuration of a run where pytest itself runs in the sandbox (made once per
        environment and base sandbox)."""
        key = (env.key if env is not None else "", sandboxed)
        with self._lock:
            made = self.test_sandboxes.setdefault(base, {})
            if key not in made:
                site = [str(env.site_packages)] if env is not None else None
                if sandboxed:
                    made[key] = Sandbox(base.limits.for_tests(), base.isolation, base.tmp_root, warm=False, debug=True, site=site, host=str(HOST))
                else:  # a split run's project: a fork of the fork server hashing with its seed (repo_judge._run_split):
                    # HOST_SEED for served runs, each of VALIDATION_SEEDS for a validation's (an interpreter start per
                    # run cost a validation about a sixth of its CPU time); about 9 MB of memory of its own each, kept
                    # only for the WARM_TEST_SANDBOXES most recently used (keep_warm)
                    made[key] = Sandbox(base.limits.for_tests(), base.isolation, base.tmp_root, warm=False, site=site, seeded=VALIDATION_SEEDS)
            return made[key]

    def validation_seed(self, run: int) -> int:
        """The hash seed of a validation's run ``run`` (``VALIDATION_SEEDS``)."""
        with self._lock:
            index = run % VALIDATION_SEEDS
            while len(self._seeds) <= index:
                seed = secrets.randbelow(2**32)
                if seed not in self._seeds:
                    self._seeds.append(seed)
            return self._seeds[index]

    def host(self, env: TestEnv, seed: int = HOST_SEED) -> HostServer:
        """The warm test host of ``env`` hashing with ``seed``, started on its first request."""
        with self._lock:
            return self._host(env, seed)[0]

    def _host(self, env: TestEnv, seed: int) -> tuple[HostServer, list[HostServer]]:
        """Under the lock: the host, and the idle hosts of other validation seeds let go to make room for it."""
        key = (env.key, seed)
        if key not in self._servers:
            self._servers[key] = HostServer(env, seed)
        if seed == HOST_SEED:
            return self._servers[key], []
        self._seeded_hosts.pop(key, None)
        self._seeded_hosts[key] = None
        idle = [k for k in self._seeded_hosts if k != key and self._servers[k].users == 0]
        evicted = idle[: max(0, len(self._seeded_hosts) - WARM_VALIDATION_HOSTS)]
        for k in evicted:
            del self._seeded_hosts[k]
        return self._servers[key], [self._servers.pop(k) for k in evicted]

    def for_split(self, base: Sandbox, env: TestEnv, task: RepoTask, graded: bool, seed: int = HOST_SEED) -> SplitHosts:
        """All one split run of ``task`` needs (``graded``: on the grading tests' tree), its test host held for it until
        :meth:`release`."""
        # the project imports the task's requirements too: its sandbox reads their packages
        sandbox = self.test_sandbox(base, env if task.requirements else None)
        self.keep_warm(sandbox)
        tree = self.tree(task, graded)
        with self._lock:
            server, evicted = self._host(env, seed)
            server.users += 1
        for old in evicted:
            old.close()  # idle: no run of it is in flight (its forks die with it)
        return SplitHosts(sandbox, tree, server)

    def release(self, split: SplitHosts) -> None:
        """The split run is over: its test host may be let go."""
        with self._lock:
            split.server.users -= 1

    def keep_warm(self, sandbox: Sandbox) -> None:
        """``sandbox`` is the most recently used; the seeded fork servers beyond ``WARM_TEST_SANDBOXES`` are let go."""
        with self._lock:
            self._warm.pop(id(sandbox), None)
            self._warm[id(sandbox)] = weakref.ref(sandbox)
            evicted = [self._warm.pop(k)() for k in list(self._warm)[: max(0, len(self._warm) - WARM_TEST_SANDBOXES)]]
        for old in evicted:
            if old is not None:
                old.retire_seeded()

    def close(self) -> None:
        with self._lock:
            servers, trees = list(self._servers.values()), list(self._trees.values())
            sandboxes = [made for by_key in self.test_sandboxes.values() for made in by_key.values()]
            self._servers.clear()
            self._trees.clear()
            self.test_sandboxes.clear()
            self._warm.clear()
        for server in servers:
            server.close()
        for sandbox in sandboxes:
            sandbox.close()
        for path in trees:
            shutil.rmtree(path, ignore_errors=True)


def default_hosts() -> VerdictHosts:
    """The process's hosts, for verdicts run outside any Runtime (``env.process_state``)."""
    return process_wide("verdict_hosts", VerdictHosts)
