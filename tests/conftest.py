"""Shared fixtures: one probed runtime per test session, apps and live servers built on it."""

from __future__ import annotations

import random
import socket
import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn
from fastapi.testclient import TestClient

from env.config import Settings
from env.families.classic.judge import Verdict, judge
from env.families.classic.task import TaskSpec
from env.families.registry import TaskRegistry
from env.runtime import Runtime
from env.sandbox.isolation import Isolation, probe_isolation
from env.sandbox.limits import Limits
from env.sandbox.runner import Sandbox
from env.secret import ServerSecret
from env.server.app import build_app


@pytest.fixture(scope="session")
def isolation() -> Isolation:
    """This host's isolation. Where it cannot give every guarantee, the tests that run code skip and say why (the
    refusal itself is tested by simulating each missing layer, which needs no fixture)."""
    iso = probe_isolation(disabled=set(), allow_unsafe=False)
    if not iso.can_execute:
        pytest.skip(f"this host cannot run sandboxed code: {iso.reason}")
    return iso


@pytest.fixture(scope="session")
def registry() -> TaskRegistry:
    return TaskRegistry.builtin()


TEST_SECRET = ServerSecret("the test suite's own secret, fixed for reproducible verdicts")


@pytest.fixture(scope="session")
def runtime(isolation: Isolation, registry: TaskRegistry) -> Runtime:
    return Runtime(registry, Sandbox(Limits(), isolation), workers=16, secret=TEST_SECRET)


@pytest.fixture(scope="session")
def fast_sandbox(isolation: Isolation) -> Sandbox:
    """Short wall clock, for tests that provoke a timeout."""
    return Sandbox(Limits(wall_seconds=1.5, cpu_seconds=1), isolation)


@pytest.fixture()
def task(registry: TaskRegistry, request: pytest.FixtureRequest) -> TaskSpec:
    return registry.get(getattr(request, "param", "easy"))


def run(task: TaskSpec, source: str, sandbox: Sandbox, policy: bool = True, seed: int = 0) -> Verdict:
    return judge(task, source, sandbox, random.Random(seed), policy_enabled=policy)


@pytest.fixture(scope="session")
def app(runtime: Runtime):
    return build_app(runtime=runtime, settings=Settings())


@pytest.fixture()
def client(app) -> Iterator[TestClient]:
    with TestClient(app) as c:
        yield c


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
    with LiveServer(build_app(runtime=runtime, settings=Settings(max_sessions=80))) as server:
        yield server
