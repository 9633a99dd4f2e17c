"""The verdict of a repository run: which tests pass, from a process the project's code cannot reach.

    verdict = run_tests(sandbox, task, files)           # files: the agent's project, tests ignored
    verdict.outcomes["tests/test_pages.py::test_last"]  # "PASSED" | "FAILED" | "ERROR" | "SKIPPED" | ...
    resolution(verdict.outcomes, task.fail_to_pass, task.pass_to_pass)   # "FULL" | "PARTIAL" | "NO"

Each run starts a sandbox child holding only the project's source files, then hands its conversation to the
trusted test process (``env/verdict/host``: pytest and the task's own test files), which runs in the task's test
environment (``env.verdict.testenv``: pytest and the declared requirements, nothing of the server); tests reach the
project through proxies. Outcomes are the host's explicit per-test records; a test that never reported counts as
failed, like the SWE-bench harness does.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from env.patches import Files
from env.project import RepoTask, source_only, top_level_names
from env.sandbox.runner import RefusedToRun, Sandbox, SandboxRun
from env.scratch import scratch_root
from env.verdict.testenv import TestEnv, TestEnvError, ensure

Status = Literal["PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL", "XPASS"]
HOST = Path(__file__).with_name("host")  # started as the package adbg_host, never as part of env
HOST_GRACE_SECONDS = 30.0  # pytest's own start-up and collection, on top of the sandbox's wall clock
_MAX_RESULT_BYTES = 4 * 1024 * 1024


class RepoVerdict(BaseModel):
    outcomes: dict[str, Status] = Field(default_factory=dict)
    excerpts: dict[str, str] = Field(default_factory=dict)
    ops: dict[str, int] = Field(default_factory=dict, description="Requests each test sent to the project's code")
    collected: list[str] = Field(default_factory=list)
    collect_errors: dict[str, str] = Field(default_factory=dict)
    output: str = ""
    output_truncated: bool = False
    timed_out: bool = False
    aborted: str = ""
    error: str = Field("", description="Why no test could run (set-up failure, missing requirement)")
    duration_ms: float = 0.0

    def status(self, test_id: str) -> Status:
        return self.outcomes.get(test_id, "ERROR")


# -- SWE-bench's grading rules, as pure functions ----------------------------------------------


def f2p_ok(status: str) -> bool:
    return status in ("PASSED", "XFAIL")


def p2p_ok(status: str) -> bool:
    return status in ("PASSED", "XFAIL", "SKIPPED")


def resolution(outcomes: Mapping[str, str], fail_to_pass: list[str], pass_to_pass: list[str]) -> Literal["FULL", "PARTIAL", "NO"]:
    """FULL: every F2P and P2P test succeeds; PARTIAL: some F2P and every P2P; otherwise NO."""
    f2p = [f2p_ok(outcomes.get(t, "ERROR")) for t in fail_to_pass]
    p2p = all(p2p_ok(outcomes.get(t, "ERROR")) for t in pass_to_pass)
    if f2p and all(f2p) and p2p:
        return "FULL"
    if any(f2p) and p2p:
        return "PARTIAL"
    return "NO"


# -- running ------------------------------------------------------------------------------------


class _TestTrees:
    """Each task's test files written once to a private directory the host runs in."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._dirs: dict[tuple[str, str], str] = {}

    def get(self, task: RepoTask, graded: bool) -> str:
        key = (task.id, str(task.folder), graded)
        with self._lock:
            if key not in self._dirs:
                root = tempfile.mkdtemp(prefix=f"adbg-tests-{task.id[:40]}-", dir=scratch_root())
                for rel, text in (task.grading_tests if graded else task.visible_tests).items():
                    path = Path(root, rel)
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(text, encoding="utf-8")
                self._dirs[key] = root
            return self._dirs[key]


_TREES = _TestTrees()
atexit.register(lambda: cleanup())  # process-lifetime caches must not outlive the process on /dev/shm


def run_tests(sandbox: Sandbox, task: RepoTask, files: Files, select: list[str] | None = None, graded: bool = True) -> RepoVerdict:
    """Run the task's tests (all, or the ids in ``select``) against the project in ``files``.

    ``graded`` runs use the grading tests (hidden ``test_patch`` applied); the agent's own runs
    use the snapshot's tests. Either way the tests come from the task, never from ``files``.
    """
    if not sandbox.isolation.can_execute:
        return RepoVerdict(error=sandbox.isolation.reason)
    try:
        env = ensure(task.requirements)
    except TestEnvError as exc:
        return RepoVerdict(error=f"{exc}; no test was run")
    tree = _TREES.get(task, graded)
    tests = task.grading_tests if graded else task.visible_tests
    source = source_only(files)
    # Only the files the task names (SWE-bench's test directives): an unnamed file that cannot be imported never counts.
    named = task.test_directives if select is None else sorted({t.split("::")[0] for t in select})
    to_collect = [p for p in named if p in tests]
    if not to_collect:
        return RepoVerdict(error="none of the requested tests exist in the task's test files")
    started = time.monotonic()
    try:
        run = sandbox.start_repo(source, task.source_paths, dict(task.environment), fresh=True)
    except RefusedToRun as exc:
        return RepoVerdict(error=str(exc))
    try:
        if run.load_error is not None or run.result.aborted:
            problem = str(run.load_error) if run.load_error else run.result.aborted
            return RepoVerdict(error=f"the project could not be set up in the sandbox: {problem}")
        req_w, resp_r, pid, deadline = run.hand_over()
        request = {
            "cwd": tree,
            "names": sorted(top_level_names(source, task.source_paths)),
            "select": select,
            "paths_to_collect": to_collect,
            "pid": pid,
            "deadline": deadline,
            "wall_seconds": sandbox.limits.wall_seconds,
            "reply_bytes": sandbox.limits.reply_bytes,
            "scratch": sandbox.tmp_root,  # where the sandbox's copy of the project lives: the host never opens it
        }
        status_r, status_w = os.pipe()
        stop = threading.Event()
        watcher = threading.Thread(target=_watch, args=(run, status_w, stop), daemon=True)
        watcher.start()
        try:
            verdict = _host(env, request, [req_w, resp_r, status_r], sandbox.limits.wall_seconds + HOST_GRACE_SECONDS)
        finally:
            stop.set()
            watcher.join()
            os.close(status_r)
        run.ended(verdict.aborted, verdict.timed_out)
    finally:
        result = run.finish()
    verdict.output, verdict.output_truncated = result.output, result.output_truncated
    verdict.timed_out = verdict.timed_out or result.timed_out
    verdict.aborted = verdict.aborted or result.aborted
    verdict.duration_ms = (time.monotonic() - started) * 1000
    return verdict


def _watch(run: SandboxRun, status_w: int, stop: threading.Event) -> None:
    """Tell the test process how the sandbox child ended, the moment it does (only its parent can know)."""
    try:
        while not stop.is_set():
            code = run.exit_code(0.2)
            if code is not None:
                os.write(status_w, run.exit_description(code).encode()[:1000])
                return
    finally:
        os.close(status_w)


def _host_path() -> str:
    """A directory holding only ``adbg_host`` (a link to env/verdict/host): the test process's PYTHONPATH."""
    root = Path(scratch_root(), "host-path")
    if not (root / "adbg_host").exists():
        root.mkdir(exist_ok=True)
        with contextlib.suppress(FileExistsError):
            (root / "adbg_host").symlink_to(HOST.resolve(), target_is_directory=True)
    return str(root)


def _host_env() -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": _host_path(),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "MALLOC_ARENA_MAX": "2",
    }


class HostServer:
    """The warm path: ``adbg_host.pytest_host --serve`` in one test environment, a fork server with pytest imported.

    Replaced when it dies; safe from many threads (one lock around each request and its pid reply).
    """

    def __init__(self, env: TestEnv) -> None:
        self.env = env
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._sock: socket.socket | None = None

    def _start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._proc = subprocess.Popen(
            [str(self.env.python), "-m", "adbg_host.pytest_host", "--serve", str(theirs.fileno())],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=scratch_root(),
            env=_host_env(),
            pass_fds=(theirs.fileno(),),
            start_new_session=True,
        )
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


class _HostServers:
    """One warm host per test environment, started on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._servers: dict[str, HostServer] = {}

    def get(self, env: TestEnv) -> HostServer:
        with self._lock:
            if env.key not in self._servers:
                self._servers[env.key] = HostServer(env)
            return self._servers[env.key]

    def close(self) -> None:
        with self._lock:
            for server in self._servers.values():
                server.close()
            self._servers.clear()


_SERVERS = _HostServers()
WARM = os.environ.get("SANDBOX_HOST_WARM", "on") != "off"


def _unnamed_file(prefix: str) -> int:
    fd, path = tempfile.mkstemp(prefix=prefix, dir=scratch_root())
    os.unlink(path)
    return fd


def _host(env: TestEnv, request: dict[str, object], channel: list[int], timeout: float) -> RepoVerdict:
    result_fd, err_fd = _unnamed_file("adbg-host-"), _unnamed_file("adbg-host-err-")
    killed, code = False, 0
    try:
        if WARM:
            killed, code = _run_warm(env, request, channel, result_fd, err_fd, timeout)
        else:
            killed, code = _run_cold(env, request, channel, result_fd, err_fd, timeout)
        verdict = _parse(os.pread(result_fd, _MAX_RESULT_BYTES, 0).decode("utf-8", "replace"))
        if killed:
            verdict.timed_out = True
            verdict.aborted = verdict.aborted or f"the test run exceeded {timeout:g} s and was stopped"
        elif not any([verdict.error, verdict.outcomes, verdict.collect_errors]) and (code != 0 or not verdict.collected):
            tail = os.pread(err_fd, 4000, max(0, os.fstat(err_fd).st_size - 4000)).decode("utf-8", "replace")
            verdict.error = f"the test process failed (exit {code}): {tail.strip()[-1500:]}"
    finally:
        os.close(result_fd)
        os.close(err_fd)
    return verdict


def _run_warm(env: TestEnv, request: dict[str, object], channel: list[int], result_fd: int, err_fd: int, timeout: float) -> tuple[bool, int]:
    request_fd = _unnamed_file("adbg-host-req-")
    done_r, done_w = os.pipe()
    try:
        os.write(request_fd, json.dumps(request).encode())
        os.lseek(request_fd, 0, os.SEEK_SET)
        pid = _SERVERS.get(env).spawn([request_fd, result_fd, done_w, err_fd, *channel])
        os.close(done_w)
        done_w = -1
        # The run holds the pipe's write end until it exits: EOF means it is over.
        ready, _, _ = select.select([done_r], [], [], timeout)
        if not ready:
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
            return True, -9
        return False, 0
    finally:
        for fd in (request_fd, done_r, done_w):
            if fd >= 0:
                os.close(fd)


def _run_cold(env: TestEnv, request: dict[str, object], channel: list[int], result_fd: int, err_fd: int, timeout: float) -> tuple[bool, int]:
    proc = subprocess.Popen(
        [str(env.python), "-m", "adbg_host.pytest_host", str(result_fd), *map(str, channel)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=err_fd,
        cwd=str(request["cwd"]),
        env=_host_env(),
        pass_fds=(result_fd, *channel),
        start_new_session=True,
    )
    try:
        proc.communicate(json.dumps(request).encode(), timeout=timeout)
        return False, proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return True, -9


def _parse(text: str) -> RepoVerdict:
    verdict = RepoVerdict()
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if "test" in record:
            verdict.outcomes[record["test"]] = record["status"]
            verdict.ops[record["test"]] = int(record.get("ops", 0))
            if record.get("excerpt"):
                verdict.excerpts[record["test"]] = record["excerpt"]
        elif "collected" in record:
            verdict.collected = record["collected"]
        elif "collect_error" in record:
            verdict.collect_errors[record["collect_error"] or "<session>"] = record.get("excerpt", "")
        elif "fatal" in record:
            verdict.error = record["fatal"]
        elif record.get("done"):
            verdict.aborted = str(record.get("aborted") or "")
            verdict.timed_out = bool(record.get("timed_out"))
    return verdict


def cleanup() -> None:
    """Remove the cached test trees (for tests and shutdown)."""
    with _TREES._lock:
        for path in _TREES._dirs.values():
            shutil.rmtree(path, ignore_errors=True)
        _TREES._dirs.clear()
