"""The verdict of a repository run: which tests pass, from a process the project's code cannot reach.

    verdict = run_tests(sandbox, task, files)           # files: the agent's project, tests ignored
    verdict.outcomes["tests/test_pages.py::test_last"]  # "PASSED" | "FAILED" | "ERROR" | "SKIPPED" | ...
    resolution(verdict.outcomes, task.fail_to_pass, task.pass_to_pass)   # "FULL" | "PARTIAL" | "NO"

Each run starts ``env.verdict.pytest_host`` (pytest and the task's own test files, trusted) which
starts a sandbox child holding only the project's source files; tests reach the project through
proxies. Outcomes are the host's explicit per-test records; a test that never reported counts as
failed, like the SWE-bench harness does.
"""

from __future__ import annotations

import atexit
import importlib.metadata
import json
import os
import pickle
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from env.patches import Files
from env.project import RepoTask, source_only, top_level_names
from env.sandbox.runner import Sandbox
from env.scratch import scratch_root

Status = Literal["PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL", "XPASS"]
ROOT = Path(__file__).resolve().parents[2]
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


def resolution(outcomes: dict[str, str], fail_to_pass: list[str], pass_to_pass: list[str]) -> Literal["FULL", "PARTIAL", "NO"]:
    """FULL: every F2P and P2P test succeeds; PARTIAL: some F2P and every P2P; otherwise NO."""
    f2p = [f2p_ok(outcomes.get(t, "ERROR")) for t in fail_to_pass]
    p2p = all(p2p_ok(outcomes.get(t, "ERROR")) for t in pass_to_pass)
    if f2p and all(f2p) and p2p:
        return "FULL"
    if any(f2p) and p2p:
        return "PARTIAL"
    return "NO"


# -- running ------------------------------------------------------------------------------------


def missing_requirements(task: RepoTask) -> list[str]:
    missing = []
    for requirement in task.requirements:
        name = re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0]
        try:
            importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            missing.append(requirement)
    return missing


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
    missing = missing_requirements(task)
    if missing:
        return RepoVerdict(error=f"this task needs {', '.join(missing)} installed on the server (pip install {' '.join(missing)}); no test was run")
    if not sandbox.isolation.can_execute:
        return RepoVerdict(error=sandbox.isolation.reason)
    tree = _TREES.get(task, graded)
    tests = task.grading_tests if graded else task.visible_tests
    source = source_only(files)
    # Only the files the task names (SWE-bench's test directives): an unnamed file that cannot be imported never counts.
    named = task.test_directives if select is None else sorted({t.split("::")[0] for t in select})
    to_collect = [p for p in named if p in tests]
    if not to_collect:
        return RepoVerdict(error="none of the requested tests exist in the task's test files")
    request = {
        "limits": sandbox.limits,
        "isolation": sandbox.isolation,
        "tmp_root": sandbox.tmp_root,
        "files": source,
        "paths": task.source_paths,
        "env": dict(task.environment),
        "names": sorted(top_level_names(source, task.source_paths)),
        "select": select,
        "paths_to_collect": [p for p in to_collect if p.endswith(".py")],
    }
    return _host(request, tree, sandbox.limits.wall_seconds + HOST_GRACE_SECONDS)


def _host_env() -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(ROOT),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "MALLOC_ARENA_MAX": "2",
    }


class HostServer:
    """The warm path: ``pytest_host --serve``, a fork server with pytest already imported.

    Replaced when it dies; safe from many threads (one lock around each request and its pid reply).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._sock: socket.socket | None = None

    def _start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "env.verdict.pytest_host", "--serve", str(theirs.fileno())],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=str(ROOT),
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
            try:
                os.killpg(self._proc.pid, signal.SIGKILL)
            except OSError:
                pass
            self._proc.wait()
            self._proc = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None


_SERVER = HostServer()
WARM = os.environ.get("SANDBOX_HOST_WARM", "on") != "off"


def _unnamed_file(prefix: str) -> int:
    fd, path = tempfile.mkstemp(prefix=prefix, dir=scratch_root())
    os.unlink(path)
    return fd


def _host(request: dict, cwd: str, timeout: float) -> RepoVerdict:
    result_fd, err_fd = _unnamed_file("adbg-host-"), _unnamed_file("adbg-host-err-")
    started = time.monotonic()
    killed, code = False, 0
    try:
        if WARM:
            killed, code = _run_warm({**request, "cwd": cwd}, result_fd, err_fd, timeout)
        else:
            killed, code = _run_cold(request, cwd, result_fd, err_fd, timeout)
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
    verdict.duration_ms = (time.monotonic() - started) * 1000
    return verdict


def _run_warm(request: dict, result_fd: int, err_fd: int, timeout: float) -> tuple[bool, int]:
    request_fd = _unnamed_file("adbg-host-req-")
    done_r, done_w = os.pipe()
    try:
        os.write(request_fd, pickle.dumps(request))
        os.lseek(request_fd, 0, os.SEEK_SET)
        pid = _SERVER.spawn([request_fd, result_fd, done_w, err_fd])
        os.close(done_w)
        done_w = -1
        # The run holds the pipe's write end until it exits: EOF means it is over.
        ready, _, _ = select.select([done_r], [], [], timeout)
        if not ready:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            return True, -9
        return False, 0
    finally:
        for fd in (request_fd, done_r, done_w):
            if fd >= 0:
                os.close(fd)


def _run_cold(request: dict, cwd: str, result_fd: int, err_fd: int, timeout: float) -> tuple[bool, int]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "env.verdict.pytest_host", str(result_fd)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=err_fd,
        cwd=cwd,
        env=_host_env(),
        pass_fds=(result_fd,),
        start_new_session=True,
    )
    try:
        proc.communicate(pickle.dumps(request), timeout=timeout)
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
            for key in ("output", "output_truncated", "timed_out", "aborted"):
                setattr(verdict, key, record.get(key, getattr(verdict, key)))
    return verdict


def cleanup() -> None:
    """Remove the cached test trees (for tests and shutdown)."""
    with _TREES._lock:
        for path in _TREES._dirs.values():
            shutil.rmtree(path, ignore_errors=True)
        _TREES._dirs.clear()
