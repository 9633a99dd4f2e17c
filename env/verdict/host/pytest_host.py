"""The trusted test process of a repository run: pytest here, the project's code in the sandbox.

    python -m adbg_host.pytest_host RESULT_FD REQ_W RESP_R STATUS_R  < JSON request (from env.verdict.repo_judge)
    python -m adbg_host.pytest_host --serve FD               (the warm path: a fork server, one fork per run)

Started by the server, in the task's test environment (``env.verdict.testenv``), with the task's own test files
(never the agent's copies) in its working directory. The server has started the sandbox run holding the project's
source files and hands over its descriptors; this process makes the project's top-level names importable as proxies
(``split``), runs pytest with caches and bytecode off, and writes one JSON line per event to RESULT_FD: what was
collected, each test's outcome with a failure excerpt, and a last ``done`` line saying whether the run stopped
answering. The project's code cannot reach this process or that descriptor.

Nothing here outlives the server: this process dies with the server named in ``ADBG_PARENT`` (env.sandbox.lifetime),
and each fork of the warm path with this process (PR_SET_PDEATHSIG, then a check that the parent is still there).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import pytest

from . import guard
from .channel import Channel
from .conversation import Remote

EXCERPT_CHARS = 2000
# Caches and reports nobody reads, and the end-of-session gc passes that cost ~150 ms a run.
# (doctest stays: real suites' conftests use its doctest_namespace fixture.)
UNUSED_PLUGINS = ("cacheprovider", "stepwise", "unraisableexception", "threadexception", "faulthandler", "pastebin", "junitxml", "setuponly", "setupplan")
# Every run's arguments but the paths it collects (pytest.ini: written by the run, empty).
ARGUMENTS = ["-q", "--no-header", "--rootdir", ".", "-c", "pytest.ini", "--tb=short", "-W", "ignore::DeprecationWarning"]
ARGUMENTS += [argument for plugin in UNUSED_PLUGINS for argument in ("-p", f"no:{plugin}")]
WARM_UP_TEST = "def test_warm_up():\n    assert [1] == [1]\n"


def die_with(parent: int | None) -> None:
    """SIGKILL this process when ``parent`` dies; exit now if it already has."""
    if parent is None:
        return
    import ctypes
    import signal

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(1)


def _excerpt(report: Any) -> str:
    text = getattr(report, "longreprtext", "") or ""
    return text if len(text) <= EXCERPT_CHARS else "...\n" + text[-EXCERPT_CHARS:]


class Recorder:
    """A pytest plugin that reports collection and per-test outcomes as they happen."""

    def __init__(self, emit: Any, select: list[str] | None, remote: Any, deselect: list[str] | None = None):
        self.emit, self.select, self.remote = emit, select, remote
        self.deselect = set(deselect or ())  # tests another run reports (a task's sandboxed ones)
        self.status: dict[str, str] = {}
        self.excerpt: dict[str, str] = {}
        self.ops_before: dict[str, int] = {}

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        self.ops_before[nodeid] = self.remote.ops

    def pytest_collection_modifyitems(self, session: Any, config: Any, items: list[Any]) -> None:
        wanted = set(self.select) if self.select is not None else None  # node ids, or whole test files

        def keep(item: Any) -> bool:
            if item.nodeid in self.deselect:
                return False
            return wanted is None or item.nodeid in wanted or item.nodeid.split("::")[0] in wanted

        if wanted is not None or self.deselect:
            deselected = [item for item in items if not keep(item)]
            items[:] = [item for item in items if keep(item)]
            config.hook.pytest_deselected(items=deselected)
        self.emit({"collected": [item.nodeid for item in items]})

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            self.emit({"collect_error": report.nodeid, "excerpt": _excerpt(report)})

    def pytest_runtest_logreport(self, report: Any) -> None:
        node = report.nodeid
        xfail = hasattr(report, "wasxfail")
        if report.when == "setup":
            if report.failed:
                self.status[node] = "ERROR"
            elif report.skipped:
                self.status[node] = "XFAIL" if xfail else "SKIPPED"
        elif report.when == "call":
            if report.passed:
                # A unittest test whose subtests failed ends with a passing report of its own: it stays failed.
                if self.status.get(node) != "FAILED":
                    self.status[node] = "XPASS" if xfail else "PASSED"
            elif report.failed:
                self.status[node] = "FAILED"
            else:
                self.status[node] = "XFAIL" if xfail else "SKIPPED"
        elif report.failed:  # teardown
            self.status[node] = "ERROR"
        if report.failed and node not in self.excerpt:
            self.excerpt[node] = _excerpt(report)

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        ops = self.remote.ops - self.ops_before.get(nodeid, self.remote.ops)
        self.emit({"test": nodeid, "status": self.status.get(nodeid, "ERROR"), "excerpt": self.excerpt.get(nodeid, ""), "ops": ops})


def host(request: dict[str, Any], result_fd: int, req_w: int, resp_r: int, status_r: int, deadline_fd: int) -> None:
    """One test run against the sandbox run whose descriptors the server handed over; records go to ``result_fd``."""
    out = os.fdopen(result_fd, "w", encoding="utf-8")

    def emit(record: dict[str, Any]) -> None:
        out.write(json.dumps(record) + "\n")
        out.flush()

    # The tests tree is this side's own (VerdictHosts.tree writes it once per task): pytest keeps each test module's
    # rewritten bytecode there, so a task's next run neither rewrites nor compiles its tests again.
    sys.dont_write_bytecode = False
    guard.install(request["scratch"], os.getcwd())
    channel = Channel(req_w, resp_r, status_r, request["pid"], request["deadline"], request["wall_seconds"], request["reply_bytes"], deadline_fd)
    try:
        remote = Remote(channel)
        remote.install(set(request["names"]), request.get("source_paths", ()))
        with open("pytest.ini", "w", encoding="utf-8") as handle:
            handle.write("[pytest]\n")  # the task's own settings never come from a writable place
        pytest.main(ARGUMENTS + request["paths_to_collect"], plugins=[Recorder(emit, request["select"], remote, request.get("deselect"))])
    finally:
        emit({"done": True, "aborted": channel.aborted, "timed_out": channel.timed_out})


def warm_up() -> int:
    """One pytest session of one trivial test, here, before any fork: what pytest does once per process (the imports
    and caches its first configuration, collection and assertion rewriting fill) is then done once for every run:
    measured per fork over 16 runs of three bundled tasks, 12-50 ms less of this side's CPU a run (8-22%). What the
    session left importable (its folder on sys.path, the test module) goes with the folder. Returns the session's
    exit code (0: its test ran and passed)."""
    import contextlib
    import io
    import tempfile

    saved_path, saved_modules, cwd = list(sys.path), set(sys.modules), os.getcwd()
    with tempfile.TemporaryDirectory(prefix="adbg-host-warm-up-") as folder:
        try:
            os.chdir(folder)
            with open("pytest.ini", "w", encoding="utf-8") as handle:
                handle.write("[pytest]\n")
            with open("test_warm_up.py", "w", encoding="utf-8") as handle:
                handle.write(WARM_UP_TEST)
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                return int(pytest.main([*ARGUMENTS, "test_warm_up.py"]))
        finally:
            os.chdir(cwd)
            sys.path[:] = saved_path
            for name in set(sys.modules) - saved_modules:
                if str(getattr(sys.modules[name], "__file__", "") or "").startswith(folder):
                    del sys.modules[name]
            for entry in [entry for entry in sys.path_importer_cache if entry.startswith(folder)]:
                del sys.path_importer_cache[entry]


def serve(sock_fd: int) -> None:
    """Fork one host per request; everything slow to import is already imported.

    Each request is a one-byte message carrying eight fds (SCM_RIGHTS): the JSON request (a file),
    the result file, a pipe whose write end the run holds until it exits, its stderr, the
    sandbox run's request and reply descriptors, the pipe telling how the sandbox child ended, and the file
    holding the run's deadline as the server moves it. The reply is the run's pid. Single-threaded;
    exited runs are reaped as they exit (SIGCHLD), so their CPU time adds to this process's children's.
    """
    import contextlib
    import gc
    import signal
    import socket

    def reap(*_: object) -> None:  # reaped here, not by the kernel: a run's CPU time then counts in this process's tree
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass

    signal.signal(signal.SIGCHLD, reap)
    me = os.getpid()
    sock = socket.socket(fileno=sock_fd)
    try:
        code = warm_up()
        if code != 0:
            print(f"adbg_host: the warm-up's pytest session ended with exit code {code}; serving without it", file=sys.stderr)
    except Exception:  # noqa: BLE001  (only speed depends on it: every run still configures pytest itself)
        __import__("traceback").print_exc()
    gc.collect()
    gc.freeze()  # what was imported stays shared with every fork, untouched by the collector
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(sock, 16, 8)
        except OSError:
            return
        if not message or len(fds) != 8:
            return  # the server is gone
        request_fd, result_fd, done_fd, err_fd, req_w, resp_r, status_r, deadline_fd = fds
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                die_with(me)
                sock.close()
                os.setsid()  # the server kills the run's whole group on a timeout
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                os.dup2(err_fd, 2)
                os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
                with os.fdopen(request_fd, "rb") as handle:
                    request = json.load(handle)
                os.chdir(request["cwd"])
                host(request, result_fd, req_w, resp_r, status_r, deadline_fd)
            except BaseException:
                __import__("traceback").print_exc()
                code = 1
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)  # done_fd closes with the process: the server sees EOF
        for fd in fds:
            os.close(fd)
        sock.send(str(pid).encode())


def main() -> int:
    parent = os.environ.pop("ADBG_PARENT", "")
    die_with(int(parent) if parent.isdigit() else None)
    if sys.argv[1] == "--serve":
        serve(int(sys.argv[2]))
        return 0
    host(json.load(sys.stdin.buffer), *map(int, sys.argv[1:7]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
