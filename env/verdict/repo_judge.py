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

import contextlib
import json
import os
import select
import signal
import struct
import subprocess
import tempfile
import threading
import time

from env import settings
from env.infra import InfraFailure
from env.patches import Files
from env.project import RepoTask, source_only, top_level_names
from env.sandbox.affinity import PAIRS, pin
from env.sandbox.cputime import CpuBudget, Stretch, busy, cpu_exceeded, starved_run
from env.sandbox.lifetime import parent_env, spawn
from env.sandbox.runner import STARVED_SHARE, RefusedToRun, Sandbox, SandboxRun
from env.sandbox.slots import TICK_S, Meter
from env.scratch import scratch_root
from env.timing import phase
from env.verdict.hosts import HOST_SEED, HostServer, SplitHosts, VerdictHosts, default_hosts, host_env
from env.verdict.outcome import RepoVerdict, parse_records
from env.verdict.sandboxed import run_sandboxed
from env.verdict.testenv import TestEnv, TestEnvError, ensure

HOST_GRACE_SECONDS = 30.0  # pytest's own start-up and collection, on top of the sandbox's wall clock (or its backstop)
_MAX_RESULT_BYTES = 4 * 1024 * 1024


# -- running ------------------------------------------------------------------------------------


def run_tests(
    sandbox: Sandbox, task: RepoTask, files: Files, select: list[str] | None = None, graded: bool = True, hash_seed: int | None = None,
    hosts: VerdictHosts | None = None,
) -> RepoVerdict:  # fmt: skip
    """Run the task's tests (all, or the ids in ``select``) against the project in ``files``.

    ``graded`` runs use the grading tests (hidden ``test_patch`` applied); the agent's own runs
    use the snapshot's tests. Either way the tests come from the task, never from ``files``.
    The tests the task declares ``sandboxed`` run in a sandboxed run of their own; the rest under the split, both of
    its sides hashing with ``hash_seed`` (default: the warm test process's, ``HOST_SEED``; a validation's runs vary it
    to show a flaky set or dict order, each seed with a warm test host and a fork server of its own). ``hosts``: what the run reuses,
    the Runtime's (``runtime.verdict_hosts``); without one, the process's (``default_hosts``).
    """
    hosts = default_hosts() if hosts is None else hosts
    if not sandbox.isolation.can_execute:
        return RepoVerdict(error=sandbox.isolation.reason)
    try:
        env = ensure(task.requirements)
    except TestEnvError as exc:
        return RepoVerdict(error=f"{exc}; no test was run")
    tests = task.grading_tests if graded else task.visible_tests
    # Only the files the task names (SWE-bench's test directives): an unnamed file that cannot be imported never counts.
    named = task.test_directives if select is None else sorted({t.split("::")[0] for t in select})
    to_collect = [p for p in named if p in tests]
    if not to_collect:
        return RepoVerdict(error="none of the requested tests exist in the task's test files")
    started = time.monotonic()
    # An ungraded run never names a held-out test, not even to the sandboxed run's pytest (the project shares its process).
    hidden = set() if graded else set(task.held_out)
    boxed = [
        t for t in task.sandboxed
        if t not in hidden and t.split("::")[0] in to_collect and (select is None or t in select or t.split("::")[0] in select)
    ]  # fmt: skip
    # The split collects no file whose every wanted test (named, or selected: a bare file path means the named tests
    # in it) runs sandboxed: what fails at its module level under the split would be a collection error there, and
    # would interrupt the split's whole session.
    listed = [t for t in task.fail_to_pass + task.pass_to_pass if t not in hidden]
    wanted = listed if select is None else [t for t in select if "::" in t] + [t for t in listed if t.split("::")[0] in select]
    by_file: dict[str, set[str]] = {}
    for test in wanted:
        by_file.setdefault(test.split("::")[0], set()).add(test)
    split_files = [p for p in to_collect if not by_file.get(p) or not by_file[p] <= set(task.sandboxed)]  # no wanted test: as before
    split_select = select if select is None else [t for t in select if t not in task.sandboxed and t.split("::")[0] in split_files]
    parts = []
    if split_files and (split_select is None or split_select):
        parts.append(_run_split(hosts, sandbox, env, task, files, tests, split_files, split_select, boxed, graded, hash_seed))
    if boxed:
        parts.append(run_sandboxed(sandbox, env, task, files, tests, boxed, hosts=hosts))
    verdict = merge(parts)
    verdict.duration_ms = (time.monotonic() - started) * 1000
    return verdict


def run_graded(sandbox: Sandbox, task: RepoTask, files: Files, hosts: VerdictHosts | None = None, visible: RepoVerdict | None = None) -> RepoVerdict:
    """The run that grades an agent (``submit``, and the state graded at ``max_steps``): what the agent may be shown, and
    the held-out tests' outcomes beside it (``verdict.held_out``), never mixed.

    Without held-out tests it is one graded run. With them, two runs in sandbox children of their own, the visible one first:
    the visible tests exactly as the agent's ``run_tests`` runs them (their outcomes, excerpts and the project's output
    are the report), then the held-out tests alone on the grading tree, of which only the outcomes are kept. The
    project's code sees a held-out test's inputs and could print them, stash them for a visible test's failure message
    or name them in an error: nothing of that second run but its outcomes ever leaves this function. ``visible``: the
    visible run already made on these very files (``env.verdict.reuse``), taken instead of running it again.
    """
    verdict, hidden = graded_parts(sandbox, task, files, hosts, visible)
    if hidden is not None:
        verdict.held_out = {t: hidden.outcomes[t] for t in task.held_out if t in hidden.outcomes}
        verdict.busy = "; ".join(b for b in (verdict.busy, hidden.busy) if b)  # limits counted in CPU time only: never served
    return verdict


def graded_parts(
    sandbox: Sandbox, task: RepoTask, files: Files, hosts: VerdictHosts | None = None, visible: RepoVerdict | None = None,
) -> tuple[RepoVerdict, RepoVerdict | None]:
    """The two runs of ``run_graded`` whole, for the trusted side (the validator reads the held-out run's reach too):
    the visible run (``visible`` when given), and the held-out run (None for a task without held-out tests, graded in
    one run, which ``visible`` cannot stand for)."""
    if not task.held_out:
        with phase("visible"):
            return run_tests(sandbox, task, files, hosts=hosts), None
    with phase("visible"):
        if visible is None:
            listed = task.visible_fail_to_pass + task.visible_pass_to_pass
            visible = run_tests(sandbox, task, files, graded=False, hosts=hosts) if listed else RepoVerdict()
        verdict = visible
    with phase("held_out"):
        return verdict, run_tests(sandbox, task, files, select=list(task.held_out), graded=True, hosts=hosts)


def tree_of(task: RepoTask, graded: bool, hosts: VerdictHosts | None = None) -> str:
    """The directory the trusted test process runs in for ``task`` (``graded``: the held-out tests' files too). It lies
    in the server's scratch directory, which no sandboxed run may read (``env.sandbox.readable``)."""
    return (default_hosts() if hosts is None else hosts).tree(task, graded)


def merge(parts: list[RepoVerdict]) -> RepoVerdict:
    """One verdict from a split run and a sandboxed one (each test is in one of them)."""
    if len(parts) == 1:
        return parts[0]
    merged = RepoVerdict()
    for part in parts:
        merged.outcomes.update(part.outcomes)
        merged.excerpts.update(part.excerpts)
        merged.ops.update(part.ops)
        merged.collected += part.collected
        merged.collect_errors.update(part.collect_errors)
        merged.sandboxed += part.sandboxed
        merged.output += part.output
        merged.output_truncated = merged.output_truncated or part.output_truncated
        merged.timed_out = merged.timed_out or part.timed_out
        merged.aborted = merged.aborted or part.aborted
        merged.void = merged.void or part.void
        merged.busy = "; ".join(b for b in (merged.busy, part.busy) if b)
        merged.error = "; ".join(e for e in (merged.error, part.error) if e)
    seconds = [part.cpu_seconds for part in parts]
    merged.cpu_seconds = None if None in seconds else round(sum(s for s in seconds if s is not None), 2)
    return merged


def _run_split(
    hosts: VerdictHosts, sandbox: Sandbox, env: TestEnv, task: RepoTask, files: Files, tests: Files, to_collect: list[str], select: list[str] | None,
    elsewhere: list[str], graded: bool, hash_seed: int | None = None,
) -> RepoVerdict:
    """The split: the project in a sandbox child of its own, the tests in the trusted test process it hands over to, both
    hashing with one seed (``run_tests``)."""
    seed = HOST_SEED if hash_seed is None else hash_seed
    source = source_only(files)
    hosted = hosts.for_split(sandbox, env, task, graded, seed)  # everything the run reuses, asked for once
    try:
        return _split_run(hosted, env, task, source, to_collect, select, elsewhere, seed)
    finally:
        hosts.release(hosted)


def _split_run(
    hosted: SplitHosts, env: TestEnv, task: RepoTask, source: Files, to_collect: list[str], select: list[str] | None, elsewhere: list[str], seed: int,
) -> RepoVerdict:
    sandbox = hosted.sandbox  # a test run's limits, the task's requirements readable
    try:
        # a fork of the fork server of the run's seed: the served runs' one seed, or one of a validation's
        run = sandbox.start_repo(source, task.source_paths, dict(task.environment), hash_seed=seed)
    except RefusedToRun as exc:
        return RepoVerdict(error=str(exc))
    try:
        if run.load_error is None and run.result.busy:  # the backstop stopped the set-up under its CPU limit: no outcome
            return RepoVerdict(busy=run.result.aborted, aborted=run.result.aborted)
        if run.load_error is not None or run.result.aborted:
            problem = str(run.load_error) if run.load_error else run.result.aborted
            return RepoVerdict(error=f"the project could not be set up in the sandbox: {problem}")
        req_w, resp_r, pid, deadline = run.hand_over()
        request = {
            "cwd": hosted.tree,
            "names": sorted(top_level_names(source, task.source_paths)),
            "source_paths": list(task.source_paths),  # where a test package inside the project's is, in the tests' tree
            "select": select,
            "deselect": elsewhere,  # the task's sandboxed tests: their own run reports them
            "paths_to_collect": to_collect,
            "pid": pid,
            "deadline": deadline,
            "wall_seconds": sandbox.limits.deadline_seconds,  # what the deadline is: the wall limit, or the backstop
            "reply_bytes": sandbox.limits.reply_bytes,
            "scratch": sandbox.tmp_root,  # where the sandbox's copy of the project lives: the host never opens it
        }
        status_r, status_w = os.pipe()
        stop_r, stop_w = os.pipe()  # closed when the run is over: the watcher ends at once, not at its next look
        watcher = threading.Thread(target=_watch, args=(run, pid, status_w, stop_r), daemon=True)
        watcher.start()
        try:
            with PAIRS.pinned() as cpu:  # the two ping-pong on one CPU: a wake-up across CPUs costs far more
                pin(pid, cpu)
                verdict = _host(hosted.server, env, request, [req_w, resp_r, status_r], sandbox.limits.deadline_seconds + HOST_GRACE_SECONDS, run, cpu, seed)
        finally:
            os.close(stop_w)
            watcher.join()
            os.close(stop_r)
            os.close(status_r)
        run.ended(verdict.aborted, verdict.timed_out)
    finally:
        result = run.finish()
    verdict.output, verdict.output_truncated = result.output, result.output_truncated
    verdict.timed_out = verdict.timed_out or result.timed_out
    verdict.aborted = verdict.aborted or result.aborted
    verdict.cpu_seconds = result.cpu_seconds
    return verdict


def _watch(run: SandboxRun, pid: int, status_w: int, stop_r: int) -> None:
    """Tell the test process how the sandbox child ended, the moment it does (only its parent can know); return as
    soon as ``stop_r`` is closed. (It used to look every 0.2 s, and every repository run then waited for its watcher's
    next look: about 0.1 s a run, and measurements of the split came out in 0.2 s steps.)"""
    try:
        try:
            exited: int | None = os.pidfd_open(pid)  # readable once the child has ended
        except (AttributeError, OSError):
            exited = None  # no pidfd on this kernel: look every 20 ms
        try:
            while True:
                ready, _, _ = select.select([stop_r] + ([exited] if exited is not None else []), [], [], None if exited is not None else 0.02)
                if stop_r in ready:
                    return
                code = run.exit_code(0)
                if code is not None:
                    os.write(status_w, run.exit_description(code).encode()[:1000])
                    return
                if ready:  # the pidfd says it ended but it cannot be waited for yet: do not spin
                    time.sleep(0.005)
        finally:
            if exited is not None:
                os.close(exited)
    finally:
        os.close(status_w)


def _unnamed_file(prefix: str) -> int:
    fd, path = tempfile.mkstemp(prefix=prefix, dir=scratch_root())
    os.unlink(path)
    return fd


def _host(
    server: HostServer, env: TestEnv, request: dict[str, object], channel: list[int], timeout: float, run: SandboxRun, cpu: int | None = None,
    seed: int = HOST_SEED,
) -> RepoVerdict:
    result_fd, err_fd = _unnamed_file("adbg-host-"), _unnamed_file("adbg-host-err-")
    # the run's deadline as the test process reads it once its own has passed: the server moves it for a starved run
    deadline_fd, deadline = _unnamed_file("adbg-host-deadline-"), request["deadline"]
    assert isinstance(deadline, float)
    os.pwrite(deadline_fd, struct.pack("d", deadline), 0)
    channel = [*channel, deadline_fd]
    stopped, code = "", 0
    watch = _Watch(None, run.cpu_budget(), None, deadline_fd, timeout)  # the test process joins them once it runs
    budget = watch.budget  # limits counted in CPU time: the test process joins the project's process in it
    try:
        if settings.switch("SANDBOX_HOST_WARM"):  # read now, never at import; ``server`` hashes with ``seed``
            stopped, code = _run_warm(server, request, channel, result_fd, err_fd, run, cpu, watch)
        else:  # no warm host: a test process of its own, started with the seed
            stopped, code = _run_cold(env, request, channel, result_fd, err_fd, run, cpu, watch, seed)
        verdict = parse_records(os.pread(result_fd, _MAX_RESULT_BYTES, 0).decode("utf-8", "replace"))
        limits = run.sandbox.limits
        if watch.stretch is not None and (stopped == "wall" or verdict.timed_out) and watch.stretch.starved(limits.wall_seconds, STARVED_SHARE):
            # its deadline moved as far as it may for the time its processes waited for a CPU: the machine starved it
            raise InfraFailure("run_starved", starved_run(limits.ceiling_seconds, watch.stretch.credit.total, limits.wall_seconds))
        if not stopped and not verdict.finished and not verdict.error:
            # the trusted test process writes its last record whatever the tests and the project do (a finally): one
            # that ends without it was killed from outside (no sandboxed code can signal it) or crashed
            raise InfraFailure("test_host_crashed", f"the trusted test process died before it finished (exit {code})")
        if budget is not None and (stopped == "wall" or verdict.timed_out) and budget.sample() <= budget.seconds and budget.measured:
            # the backstop (ours, or the test process's deadline) stopped a run under its CPU limit: the machine was busy
            verdict.busy = verdict.aborted = busy(run.sandbox.limits.deadline_seconds, budget.used, budget.seconds)
            verdict.timed_out = False
        elif stopped == "cpu" and budget is not None:
            verdict.timed_out = True
            verdict.aborted = verdict.aborted or f"the test run was stopped: {cpu_exceeded(budget.seconds)}"
        elif stopped:
            verdict.timed_out = True
            verdict.aborted = verdict.aborted or f"the test run exceeded {timeout:g} s and was stopped"
        elif not any([verdict.error, verdict.outcomes, verdict.collect_errors]) and (code != 0 or not verdict.collected):
            tail = os.pread(err_fd, 4000, max(0, os.fstat(err_fd).st_size - 4000)).decode("utf-8", "replace")
            verdict.error = f"the test process failed (exit {code}): {tail.strip()[-1500:]}"
    finally:
        os.close(result_fd)
        os.close(err_fd)
        os.close(deadline_fd)
    return verdict


class _Watch:
    """What the server does while a test process runs: hold the run's CPU slot only while its processes compute
    (``meter``), stop it past its CPU limit (``budget``, where limits count CPU time), and move its deadline for the
    time its processes wait for a CPU that others take (``stretch``, where they count wall clock), writing the moved
    deadline where the test process reads it (``deadline_fd``); the test process is stopped ``timeout`` seconds after
    it started, later by as much as the deadline moved."""

    def __init__(self, meter: Meter | None, budget: CpuBudget | None, stretch: Stretch | None, deadline_fd: int, timeout: float):
        self.meter, self.budget, self.stretch, self.deadline_fd, self.timeout = meter, budget, stretch, deadline_fd, timeout
        self.stop_at = time.monotonic() + timeout

    def started(self, run: SandboxRun, pid: int) -> None:
        """The test process ``pid`` runs: it joins the run's processes."""
        self.stop_at = time.monotonic() + self.timeout
        self.meter = run.meter(pid)
        if self.budget is not None:
            self.budget.add(pid)
        self.stretch = run.stretch(pid)

    @property
    def ticking(self) -> bool:
        return self.meter is not None or self.budget is not None or self.stretch is not None

    def remaining(self) -> float:
        return self.stop_at + (self.stretch.moved if self.stretch is not None else 0.0) - time.monotonic()

    def tick(self) -> bool:
        """One look while the test process runs; True once its run used more than its CPU limit."""
        if self.meter is not None:
            self.meter.tick()
        if self.stretch is not None and self.stretch.tick(time.monotonic()):
            os.pwrite(self.deadline_fd, struct.pack("d", self.stretch.deadline), 0)
        return self.budget is not None and self.budget.over()


def _wait_done(done_r: int, watch: _Watch) -> str:
    """Wait for the test process to close ``done_r`` (""), for its time to run out ("wall") or for its run to pass
    its CPU limit ("cpu"), looking every ``TICK_S`` (``watch``)."""
    while True:
        remaining = watch.remaining()
        if remaining <= 0:
            return "wall"
        ready, _, _ = select.select([done_r], [], [], min(remaining, TICK_S) if watch.ticking else remaining)
        if ready:
            return ""
        if watch.tick():
            return "cpu"


def _run_warm(
    server: HostServer, request: dict[str, object], channel: list[int], result_fd: int, err_fd: int, run: SandboxRun, cpu: int | None, watch: _Watch,
) -> tuple[str, int]:
    request_fd = _unnamed_file("adbg-host-req-")
    done_r, done_w = os.pipe()
    try:
        os.write(request_fd, json.dumps(request).encode())
        os.lseek(request_fd, 0, os.SEEK_SET)
        pid = server.spawn([request_fd, result_fd, done_w, err_fd, *channel])
        pin(pid, cpu)
        watch.started(run, pid)
        os.close(done_w)
        done_w = -1
        # The run holds the pipe's write end until it exits: EOF means it is over.
        stopped = _wait_done(done_r, watch)
        if stopped:
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
            return stopped, -9
        return "", 0
    finally:
        for fd in (request_fd, done_r, done_w):
            if fd >= 0:
                os.close(fd)


def _run_cold(
    env: TestEnv, request: dict[str, object], channel: list[int], result_fd: int, err_fd: int, run: SandboxRun, cpu: int | None, watch: _Watch,
    seed: int = HOST_SEED,
) -> tuple[str, int]:
    proc = spawn(lambda: subprocess.Popen(
        [str(env.python), "-m", "adbg_host.pytest_host", str(result_fd), *map(str, channel)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=err_fd,
        cwd=str(request["cwd"]),
        env={**host_env(seed), **parent_env()},
        pass_fds=(result_fd, *channel),
        start_new_session=True,
    ))
    pin(proc.pid, cpu)
    watch.started(run, proc.pid)
    stopped = "wall"
    try:
        assert proc.stdin is not None
        with contextlib.suppress(BrokenPipeError), proc.stdin:  # a process that died early is reported by its exit
            proc.stdin.write(json.dumps(request).encode())
        while True:
            remaining = watch.remaining()
            if remaining <= 0:
                raise subprocess.TimeoutExpired(proc.args, watch.timeout)
            try:
                return "", proc.wait(min(remaining, TICK_S) if watch.ticking else remaining)
            except subprocess.TimeoutExpired:
                if watch.tick():  # the run's CPU slot: held only while the test process or the project computes
                    stopped = "cpu"
                    raise
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return stopped, -9
