"""A repository run's test environment: the standard library, pytest and the task's declared requirements, in a
virtual environment of its own. Nothing of the server is in it, so no installed copy of a library (the server
needs python-dateutil, attrs, packaging ...) can stand in for the project under test.

    env = ensure(task.requirements)     # built once with uv from PyPI, then read-only; TestEnvError if it cannot be
    env.python                          # the interpreter the trusted test process runs
    python -m env.authoring prepare DIR     # builds every task's environment ahead, for servers without network

Content-addressed: the key is a hash of the Python version, the pytest pin (the server's own pytest, so a run
behaves as it did before) and the requirement set. Environments live under ENV_TEST_ENVS (default
``~/.cache/agentdebugger/test-envs``); ENV_TEST_ENVS_BUILD=off forbids building one at run time (a server without
network fails closed, naming the command that prepares it). Only the Python running the server is used: uv never
downloads an interpreter.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.metadata
import json
import os
import shutil
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from env import settings
from env.process_state import process_wide
from env.sandbox.lifetime import die_with_caller

PYTEST = f"pytest=={importlib.metadata.version('pytest')}"
PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}.{sys.version_info.micro}"
BUILD_SECONDS = 600.0


class TestEnvError(RuntimeError):
    """A test environment is missing and cannot be built here; the message names what to run."""

    __test__ = False  # not a pytest test class, whatever its name


def cache_root() -> Path:
    return settings.user_cache("ENV_TEST_ENVS", "test-envs")


@dataclass(frozen=True)
class TestEnv:
    __test__ = False

    key: str
    requirements: tuple[str, ...]
    root: Path

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    @property
    def site_packages(self) -> Path:
        return self.root / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"

    @property
    def ready(self) -> bool:
        return (self.root / "adbg-test-env.json").is_file()


def spec(requirements: Iterable[str]) -> TestEnv:
    wanted = tuple(sorted({r.strip() for r in requirements if r.strip()}))
    identity = json.dumps({"python": PYTHON, "pytest": PYTEST, "requirements": wanted}, sort_keys=True)
    key = hashlib.sha256(identity.encode()).hexdigest()[:20]
    return TestEnv(key=key, requirements=wanted, root=cache_root() / key)


RETRY_SECONDS = 60.0


class Builds:
    """This process's builds of test environments: one lock per environment, and the recent failures (a failed build
    is not retried by every run at once)."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}
        self.failed: dict[str, tuple[float, str]] = {}  # key -> (when, why)

    def lock(self, key: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(key, threading.Lock())


# The environments are directories every runtime of the host shares: their builds are the process's (env.process_state).
_BUILDS = process_wide("test_env_builds", Builds)


def ensure(requirements: Iterable[str], build: bool | None = None) -> TestEnv:
    """The environment for ``requirements``, built now if it is missing and building is allowed."""
    env = spec(requirements)
    if env.ready:
        return env
    if build is None:
        build = settings.switch("ENV_TEST_ENVS_BUILD")
    if not build:
        raise TestEnvError(
            f"the test environment for {_describe(env)} is not prepared on this server (ENV_TEST_ENVS_BUILD=off); "
            f"run `python -m env.authoring prepare <task folders>` where PyPI is reachable (it writes {env.root})"
        )
    with _BUILDS.lock(env.key), file_lock(env.root.with_suffix(".lock")):  # one build per key, across threads and processes
        failed = _BUILDS.failed.get(env.key)
        if failed and time.monotonic() - failed[0] < RETRY_SECONDS:
            raise TestEnvError(failed[1])
        if not env.ready:
            try:
                _build(env)
            except TestEnvError as exc:
                _BUILDS.failed[env.key] = (time.monotonic(), str(exc))
                raise
    return env


def _describe(env: TestEnv) -> str:
    return f"{PYTEST} with {', '.join(env.requirements)}" if env.requirements else PYTEST


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` (made if missing) across processes, for as long as the block runs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def uv() -> str:
    """The uv next to this interpreter (a dependency of the server), else one on PATH."""
    beside = Path(sys.executable).parent / "uv"
    found = str(beside) if beside.is_file() else shutil.which("uv")
    if not found:
        raise TestEnvError("uv is not installed (pip install uv): it builds the test environments of repository runs")
    return found


def _build(env: TestEnv) -> None:
    partial = env.root.with_name(f"{env.key}.building-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    tool = uv()
    commands = [
        [tool, "venv", "--quiet", "--no-python-downloads", "--python", sys.executable, str(partial)],
        [tool, "pip", "install", "--quiet", "--no-python-downloads", "--compile-bytecode", "--python", str(partial / "bin" / "python"),
         PYTEST, *env.requirements],
    ]  # fmt: skip
    try:
        for command in commands:
            done = subprocess.run(command, capture_output=True, text=True, timeout=BUILD_SECONDS, env=_uv_env(), preexec_fn=die_with_caller())
            if done.returncode != 0:
                raise TestEnvError(f"the test environment for {_describe(env)} cannot be built: {(done.stderr or done.stdout).strip()[-1500:]}")
        (partial / "adbg-test-env.json").write_text(json.dumps({"python": PYTHON, "pytest": PYTEST, "requirements": env.requirements}))
        _read_only(partial)
        partial.rename(env.root)
    except subprocess.TimeoutExpired:
        raise TestEnvError(f"building the test environment for {_describe(env)} took more than {BUILD_SECONDS:g} s") from None
    finally:
        if partial.exists():
            _writable(partial)
            shutil.rmtree(partial, ignore_errors=True)


def _uv_env() -> dict[str, str]:
    # Only what uv needs to reach PyPI and its cache; nothing of the server's own environment leaks into the build.
    keep = ("PATH", "HOME", "XDG_CACHE_HOME", "UV_CACHE_DIR", "UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_EXTRA_INDEX_URL",
            "UV_NATIVE_TLS", "SSL_CERT_FILE", "SSL_CERT_DIR", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy",
            "https_proxy", "no_proxy")  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.setdefault("UV_NATIVE_TLS", "1")  # trust the system's certificate store, as the server's own HTTPS does
    return env


def _read_only(root: Path) -> None:
    """Nothing in an environment changes once built: every run of every task with that key trusts it."""
    for folder, _, files in os.walk(root):
        for name in files:
            path = Path(folder, name)
            if not path.is_symlink():
                path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        Path(folder).chmod(Path(folder).stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def _writable(root: Path) -> None:
    for folder, _, _ in os.walk(root):
        Path(folder).chmod(Path(folder).stat().st_mode | stat.S_IWUSR)
