"""Shared fixtures: one probed runtime per test session, apps and live servers built on it."""

from __future__ import annotations

import contextlib
import functools
import os
import random
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from fastapi.testclient import TestClient

from env.config import Settings
from env.families.catalog import TaskCatalog
from env.families.classic.judge import Verdict, judge
from env.families.classic.task import TaskSpec
from env.runtime import Runtime
from env.sandbox.isolation import Isolation, probe_isolation
from env.sandbox.limits import Limits
from env.sandbox.runner import Sandbox
from env.secret import ServerSecret
from env.server.app import build_app

# -- the order files run in ------------------------------------------------------------------------------------------
# `make test` runs files in parallel (pytest-xdist, --dist loadfile: each file on one worker, its module fixtures built
# once). xdist hands files out in collection order, one more to a worker whenever it is nearly done, so a heavy file
# collected late runs alone at the end while the other workers idle. The heavy files therefore go first, heaviest
# first (longest-processing-time-first packing), and xdist's own reordering (by the number of tests in a file, which
# put the heaviest files, with few tests, last) is turned off. The weights are seconds measured in a run of the whole
# suite on 2 cores, four workers (docs/performance.md, "The test suite", 2026-12-07 at 104a361); a file not listed here
# weighs less than every listed one and keeps its place. Only the order changes: every test still runs, and each
# file still runs on one worker.
HEAVY_FILES = {
    "test_reward_integrity.py": 327,
    "test_procedural_generator.py": 213,
    "test_real_repositories.py": 206,
    "test_bundled_tasks.py": 186,
    "test_pinned_behaviour.py": 156,
    "test_catalog.py": 148,
    "test_race_family_frontrun.py": 121,
    "test_eval_ray.py": 115,
    "test_redteam.py": 114,
    "test_validator.py": 108,
    "test_demo_browser.py": 107,
    "test_types.py": 105,  # mypy without its .mypy_cache, as on a clean clone (27 with it)
    "test_failover.py": 95,
    "test_import_cost.py": 89,
    "test_race_family.py": 73,
    "test_validator_v2.py": 71,
    "test_procedural_held_out.py": 67,
    "test_architecture.py": 62,
    "test_mcp.py": 53,
    "test_mine.py": 53,
    "test_inference.py": 48,
    "test_server_ws.py": 47,
    "test_run_starvation.py": 34,
}


MAX_WORKERS = 16


def usable_cores() -> int:
    """The cores this process may use: its CPU affinity, lowered by a cgroup's CPU quota (a container's --cpus)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    for path, read in (
        ("/sys/fs/cgroup/cpu.max", lambda text: text.split()[:2]),  # cgroup v2: "<quota> <period>" or "max <period>"
        ("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", lambda text: [text.strip(), Path("/sys/fs/cgroup/cpu/cpu.cfs_period_us").read_text().strip()]),
    ):
        try:
            quota, period = read(Path(path).read_text())
            if quota not in ("max", "-1") and int(period) > 0:
                cores = min(cores, max(1, -(-int(quota) // int(period))))
        except (OSError, ValueError):
            continue
    return cores


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto`: two workers per core (at most MAX_WORKERS). Most of a test's time is spent waiting: for a server
    to start, a sandboxed run's answer, a reaper's or a drain's deadline. With one worker per core a 2-core machine
    sat idle about a third of the time (12 min for the suite); with two it is busy and the suite takes 7. Tests
    already hold under that load (a shared machine gives as much). PYTEST_XDIST_AUTO_NUM_WORKERS still decides when
    set (xdist's own hook reads it)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return min(2 * usable_cores(), MAX_WORKERS)


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist), before any worker starts
        # Every procedural task is made once per run, as on a clean clone, then read by the workers and every command
        # they start (they inherit the variable): not made again in each process that serves it.
        store = tempfile.mkdtemp(prefix="adbg-test-procedural-")
        os.environ["ENV_PROCEDURAL_CACHE"] = store
        config.add_cleanup(lambda: shutil.rmtree(store, ignore_errors=True))
    if hasattr(config.option, "loadscopereorder"):  # xdist is installed (it is in requirements-dev.txt)
        config.option.loadscopereorder = False  # keep the order pytest_collection_modifyitems gives


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Heaviest files first; within a file, and among the unlisted files, the collected order (a stable sort)."""
    items.sort(key=lambda item: -HEAVY_FILES.get(item.path.name, 0))


@pytest.fixture(scope="session")
def isolation() -> Isolation:
    """This host's isolation. Where it cannot give every guarantee, the tests that run code skip and say why (the
    refusal itself is tested by simulating each missing layer, which needs no fixture)."""
    iso = probe_isolation(disabled=set(), allow_unsafe=False)
    if not iso.can_execute:
        pytest.skip(f"this host cannot run sandboxed code: {iso.reason}")
    return iso


@pytest.fixture(scope="session")
def catalog() -> TaskCatalog:
    return TaskCatalog.builtin()


TEST_SECRET = ServerSecret("the test suite's own secret, fixed for reproducible verdicts")


@pytest.fixture(scope="session")
def runtime(isolation: Isolation, catalog: TaskCatalog) -> Runtime:
    return Runtime(catalog, Sandbox(Limits(), isolation), workers=16, secret=TEST_SECRET)


@pytest.fixture(scope="session")
def fast_sandbox(isolation: Isolation) -> Sandbox:
    """Short wall clock, for tests that provoke a timeout."""
    return Sandbox(Limits(wall_seconds=1.5, cpu_seconds=1), isolation)


@pytest.fixture()
def task(catalog: TaskCatalog, request: pytest.FixtureRequest) -> TaskSpec:
    return catalog.get(getattr(request, "param", "easy"))


def run(task: TaskSpec, source: str, sandbox: Sandbox, policy: bool = True, seed: int = 0) -> Verdict:
    return judge(task, source, sandbox, random.Random(seed), policy_enabled=policy)


@pytest.fixture(scope="session")
def app(runtime: Runtime):
    # every test that uses it is one client ("testclient"), and many leave HTTP episodes unfinished: its share is the whole store
    return build_app(runtime=runtime, settings=Settings(sessions_per_client=Settings().http_episodes))


@pytest.fixture()
def client(app) -> Iterator[TestClient]:
    with TestClient(app) as c:
        yield c


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def refusing_port() -> Iterator[int]:
    """A port that refuses every connection for as long as it is held: bound, never listening. A port ``free_port``
    gave back can be taken by any other process meanwhile (a parallel test's server once answered 405 there)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


class LiveServer:
    def __init__(self, app) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", ws_max_size=1024 * 1024)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("live server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture(scope="session")
def live_server(runtime: Runtime) -> Iterator[LiveServer]:
    # one client (127.0.0.1) plays every test against it, 64 sessions at once in one and many unfinished HTTP
    # episodes: its share is every session and the whole store
    with LiveServer(build_app(runtime=runtime, settings=Settings(max_sessions=80, sessions_per_client=Settings().http_episodes))) as server:
        yield server


# HAProxy for the balancer tests (test_deploy.py, test_k8s.py): Debian's, which `make haproxy` installs.
def _find_haproxy() -> str | None:
    candidates = (os.environ.get("HAPROXY"), shutil.which("haproxy"), "/usr/sbin/haproxy", "/usr/local/sbin/haproxy")
    return next((p for p in candidates if p and os.access(p, os.X_OK)), None)


@functools.cache
def _haproxy_or_why() -> tuple[str | None, str]:
    found = _find_haproxy()
    if found is not None:
        return found, ""
    said = "make is not installed"
    if shutil.which("make"):  # the Makefile's install step (apt-get, as root or through sudo)
        try:
            done = subprocess.run(
                ["make", "-s", "haproxy"], cwd=Path(__file__).resolve().parents[1], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600
            )
            said = (done.stderr or done.stdout).strip()[-500:] or f"it exited with {done.returncode}, saying nothing"
        except subprocess.TimeoutExpired:
            said = "make haproxy took more than 600 s"
    found = _find_haproxy()
    return found, ("" if found else f"haproxy is not installed and `make haproxy` could not install it: {said}")


@pytest.fixture(scope="session")
def haproxy() -> str:
    found, why = _haproxy_or_why()
    if found is None:
        pytest.fail(f"{why}: install Debian's haproxy package (`make haproxy`, which `make test` runs) to run the balancer tests")
    return found


# Redis for the episode store's tests (ENV_STORE: tests/test_journal.py, tests/test_failover.py): Debian's
# redis-server, which `make redis` installs, on a loopback port of this worker's own, saving nothing to disk.
def _redis_binary() -> str:
    found = shutil.which("redis-server") or next((p for p in ("/usr/bin/redis-server",) if os.access(p, os.X_OK)), None)
    if found is None and shutil.which("make"):
        subprocess.run(["make", "-s", "redis"], cwd=Path(__file__).resolve().parents[1], stdin=subprocess.DEVNULL, capture_output=True, timeout=600)
        found = shutil.which("redis-server")
    if found is None:
        pytest.fail("redis-server is not installed and `make redis` could not install it")
    return found


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    import redis

    port = free_port()
    folder = tmp_path_factory.mktemp("redis")
    proc = subprocess.Popen(
        [_redis_binary(), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(folder)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            redis.Redis(port=port).ping()
            break
        except redis.exceptions.ConnectionError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                pytest.fail("redis-server did not start")
            time.sleep(0.05)
    yield f"redis://127.0.0.1:{port}/0"
    proc.terminate()
    proc.wait(timeout=10)
