"""A shell command in an episode's workspace, isolated: the trusted side of the ``run_bash`` tool.

    shell = ShellRunner(probe_isolation(), ShellLimits.from_env())
    result = shell.run(workspace.root, "python -m pytest -q", env={"PYTHONPATH": "/ws/src"})
    result.output, result.exit_code, result.timed_out       # "3 passed in 0.02s\\n", 0, False

Each call starts a fresh launcher (``shell_child.py``) that applies every layer the host offers
(see ``Isolation``) and runs ``/bin/bash -c COMMAND`` with the workspace as its directory:

* its own user and network namespace (no network at all) and PID namespace (a minimal init is
  pid 1 and bash pid 2, so nothing the command starts outlives it); where the host has no PID
  namespace, a process group, plus a ``kill(-1)`` that Landlock's signal scope confines to the run;
* Landlock (required, with seccomp: without every guarantee of ``env.sandbox.guarantees`` ``run``
  refuses and names what is missing, unless SANDBOX_ALLOW_UNSAFE=1): system
  directories read-only (executables included), the workspace and a private temporary directory
  writable, nothing else: not the project's source tree (it holds the tasks' fixes), not other
  workspaces, not /proc, /tmp or /dev/shm, and of /etc only what the tools read; no TCP;
* seccomp (``compile_filter(allow_processes=True)``): the run's allow-list plus programs and
  processes; no socket of any family, no ptrace, mounts or namespaces;
* rlimits, and where the server is root a pids cgroup per call (RLIMIT_NPROC does not bind root);
* the workspace's quota (``WorkspaceQuota``, its temporary directory counted with it): with the namespace layer the
  command runs on a copy of the workspace in a tmpfs of the quota's size (``inside/shell_quota.py``), copied back
  only if it fits; without it the server counts while the command runs, stops it past the quota and puts back the
  copy it kept (``_Counted``). Either way a command that fills the quota is undone and ``run`` raises
  ``QuotaExceeded``, a ``ShellError`` naming the quota;
* uid 65534 where the server is root and that uid can read Python (the workspace is chowned to it).

The output is one pipe (stdout and stderr together) that the server reads and caps. A command the server
runs for itself (``trace_report``'s tracer: ``run(..., record=True)``) gets a second pipe on fd 3, read
apart into ``ShellResult.record``: nothing printed reaches it, so no printed line can pose as the record. The wall
clock kills the launcher's process group; PDEATHSIG and the PID namespace take the rest down, and
``run`` returns only once every process of the command is gone. Safe to call from many threads.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from env import settings
from env.sandbox.cgroup import PidsCgroup, pids_cgroup_parent
from env.sandbox.guarantees import assess, refusal
from env.sandbox.isolation import Isolation, scratch_exposure
from env.sandbox.launch import LAYERS, SHELL_CHILD, SHELL_QUOTA, kill_group, start
from env.sandbox.limits import WorkspaceQuota, rlimits_of
from env.sandbox.quota import Usage, measure
from env.sandbox.readable import shell_paths
from env.sandbox.runner import RefusedToRun
from env.sandbox.seccomp import compile_filter
from env.sandbox.slots import TICK_S, Claim, Meter, current_claim
from env.scratch import scratch_root
from env.settings import setting

MiB = 1024 * 1024
KILL_WAIT_SECONDS = 5.0
COPY_BACK_SECONDS = 10.0  # a command stopped at its deadline (or quota): how long its launcher may copy its changes back
QUOTA_POLL_SECONDS = 0.02  # where the server counts the quota: how often, while a command runs
STATUS_BYTES = 8192
NOT_RUN = "O"  # the launcher's record for a workspace already over its quota: the command did not run
RECORD_BYTES = 256 * 1024  # a record pipe's cap: the rest is not read (the record is then cut, and says so)


class ShellError(RuntimeError):
    """The command did not run (the launcher could not apply an isolation layer the probe reported), or its changes
    were undone; the message says which and why."""


class QuotaExceeded(ShellError):
    """The command filled the workspace's quota, so its changes were undone (or the workspace was over it already, so
    the command did not run). ``result`` is what the command printed, as far as it got."""

    def __init__(self, message: str, result: ShellResult):
        super().__init__(message)
        self.result = result


class ShellLimits(BaseModel):
    """Limits of one ``run_bash`` command. RLIMIT_AS is per process: a shell runs several programs."""

    timeout_seconds: float = setting("SHELL_TIMEOUT_SECONDS", "Wall clock; every process of the command is killed", gt=0)
    output_bytes: int = setting("SHELL_OUTPUT_BYTES", "Output shown (stdout and stderr together); the rest is cut and marked", gt=0)
    memory_bytes: int = Field(1024 * MiB, gt=0, description="RLIMIT_AS of each process")
    cpu_seconds: int = Field(10, gt=0, description="RLIMIT_CPU of each process")
    file_bytes: int = Field(8 * MiB, gt=0, description="RLIMIT_FSIZE: largest file a process may write, the output included")
    processes: int = Field(64, gt=0, description="Processes and threads at once (pids cgroup, or RLIMIT_NPROC where it binds)")
    open_files: int = Field(256, gt=0, description="RLIMIT_NOFILE of each process")
    quota: WorkspaceQuota = Field(default_factory=WorkspaceQuota, description="What the workspace and the temporary directory may hold")

    @classmethod
    def from_env(cls) -> ShellLimits:
        return settings.load(cls, quota=WorkspaceQuota.from_env())

    def for_child(self) -> dict[str, int]:
        """What the launcher applies to itself as rlimits (bash and its programs inherit them)."""
        return rlimits_of(self)


class ShellResult(BaseModel):
    output: str
    output_truncated: bool = False
    exit_code: int | None = Field(None, description="bash's status (128+N if killed by signal N); None after a timeout")
    timed_out: bool = False
    duration_ms: float = 0.0
    note: str = ""
    record: bytes | None = Field(None, description="What the command wrote to fd 3 (run with record=True), at most RECORD_BYTES")
    record_truncated: bool = False


# -- files ---------------------------------------------------------------------------------------


def _chown_tree(root: Path, uid: int) -> None:
    os.chown(root, uid, uid)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            os.chown(os.path.join(dirpath, name), uid, uid, follow_symlinks=False)


def _restore_access(root: Path) -> None:
    """Owner read/write (and search on directories) everywhere: a ``chmod 000`` must not lock the server out."""
    with contextlib.suppress(OSError):
        os.chmod(root, os.lstat(root).st_mode | 0o700)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:  # before os.walk descends into them
            with contextlib.suppress(OSError):
                path = os.path.join(dirpath, name)
                mode = os.lstat(path).st_mode
                if mode & 0o700 != 0o700:
                    os.chmod(path, mode | 0o700, follow_symlinks=False)
        for name in filenames:
            with contextlib.suppress(OSError):
                path = os.path.join(dirpath, name)
                mode = os.lstat(path).st_mode
                if mode & 0o600 != 0o600:
                    os.chmod(path, mode | 0o600, follow_symlinks=False)


def _remove_tree(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)
    if os.path.exists(path):
        _restore_access(Path(path))
        shutil.rmtree(path, ignore_errors=True)


class _Capture:
    """The output pipe's head and tail (a test run's summary is at its end); the middle is counted, not kept."""

    def __init__(self, cap: int, hard_stop: int):
        self.cap, self.tail_cap, self.hard_stop = cap, cap // 4, hard_stop
        self.head, self.tail = bytearray(), bytearray()
        self.size = 0

    def feed(self, chunk: bytes) -> bool:
        """Keep ``chunk``; False once the output passed the hard stop (the pipe is then closed)."""
        self.size += len(chunk)
        if len(self.head) < self.cap:
            self.head += chunk[: self.cap - len(self.head)]
        self.tail += chunk
        if len(self.tail) > 2 * self.tail_cap:
            del self.tail[: -self.tail_cap]
        return self.size <= self.hard_stop

    def text(self) -> tuple[str, bool]:
        if self.size <= self.cap:
            return self.head.decode("utf-8", "replace"), False
        head = self.head[: self.cap - self.tail_cap].decode("utf-8", "replace")
        tail = self.tail[len(self.tail) - self.tail_cap :].decode("utf-8", "replace")
        return f"{head}\n... [output cut: {self.size - self.cap} bytes not shown] ...\n{tail}", True


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (OSError, AttributeError):
        return None


def _ready(fds: list[int], seconds: float) -> set[int]:
    """The fds readable (or hung up) within ``seconds``: poll, since a busy server's fds pass select's 1024."""
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    return {fd for fd, _ in poller.poll(max(0, int(seconds * 1000) + 1))}


def _wait_gone(pidfd: int, seconds: float) -> None:
    """Until that process has exited; reaps it if it was re-parented to us (a server that is pid 1)."""
    _ready([pidfd], seconds)
    with contextlib.suppress(ChildProcessError, OSError, AttributeError):
        os.waitid(os.P_PIDFD, pidfd, os.WEXITED | os.WNOHANG)


# -- the quota -----------------------------------------------------------------------------------


def filled(quota: WorkspaceQuota, used: Usage) -> str:
    return (
        f"the command filled the workspace's quota of {quota.describe()}, its temporary directory counted with it "
        f"(it reached {used.describe()}), so its changes were undone: the workspace is as it was before the command"
    )


def already_over(quota: WorkspaceQuota, used: Usage) -> str:
    return f"the workspace already holds {used.describe()}, more than its quota of {quota.describe()}, so the command did not run"


def _empty(root: Path) -> None:
    for entry in list(root.iterdir()):
        if entry.is_dir() and not entry.is_symlink():
            _remove_tree(str(entry))
        else:
            entry.unlink()


class _Counted:
    """The quota where no kernel holds it (no mount namespace): the server keeps a copy of the workspace, counts the
    workspace and the temporary directory while the command runs (every ``QUOTA_POLL_SECONDS``, stopping the count
    as soon as it is over), stops the command once they pass the quota, and then puts the copy back. The command can
    write past the quota for as long as one count and one interval last: docs/sandbox.md gives the figure."""

    def __init__(self, quota: WorkspaceQuota, root: Path, tmp: str, scratch: str):
        self.quota, self.root, self.tmp = quota, root, tmp
        self.used: Usage | None = None
        self.snapshot: Path | None = None
        self.next_count = 0.0
        if measure([root], quota).over(quota):
            self.used = measure([root])  # counted to the end, for the message
            return
        self.snapshot = Path(tempfile.mkdtemp(prefix="adbg-snap-", dir=scratch))
        shutil.copytree(root, self.snapshot, symlinks=True, dirs_exist_ok=True)

    @property
    def refusal(self) -> str:
        """Why the command may not run at all: the workspace is over its quota already ("" if it is not)."""
        return already_over(self.quota, self.used) if self.snapshot is None and self.used is not None else ""

    def over(self, now: float | None = None) -> bool:
        """Whether the command passed the quota. Counted at most every QUOTA_POLL_SECONDS, and never for more than
        half the time (a count of a large tree is spaced by its own length); ``now=None`` counts at once."""
        if self.used is None and (now is None or now >= self.next_count):
            started = time.monotonic()
            used = measure([self.root, self.tmp], self.quota)
            self.used = used if used.over(self.quota) else None
            self.next_count = time.monotonic() + max(QUOTA_POLL_SECONDS, time.monotonic() - started)
        return self.used is not None

    def settle(self) -> str:
        """After the command (every process gone): the quota's error, with the workspace put back, or ""."""
        try:
            if self.snapshot is None or not self.over():
                return ""
            _restore_access(self.root)
            _empty(self.root)
            shutil.copytree(self.snapshot, self.root, symlinks=True, dirs_exist_ok=True)
            assert self.used is not None
            return filled(self.quota, self.used)
        finally:
            if self.snapshot is not None:
                _remove_tree(str(self.snapshot))


# -- the runner ----------------------------------------------------------------------------------


class ShellRunner:
    """Runs shell commands in workspaces; configuration is fixed at construction and shared read-only."""

    def __init__(self, isolation: Isolation, limits: ShellLimits | None = None, tmp_root: str | None = None, pid_namespace: bool = True):
        """``pid_namespace=False`` simulates a host without PID namespaces (the process-group fallback)."""
        self.isolation = isolation
        self.pid_namespace = pid_namespace
        self.limits = limits or ShellLimits()
        self.tmp_root = tmp_root or scratch_root()
        if tmp_root and scratch_exposure(tmp_root):
            raise ValueError(scratch_exposure(tmp_root))
        layers = isolation.for_child(0)  # tmpfs 0: the workspace itself is what the command changes
        if layers["seccomp"] is not None:
            layers["seccomp"] = compile_filter(allow_processes=True)
        self.layers = layers
        self.read_only = shell_paths()
        self.bin_dir = os.path.dirname(sys.executable)
        # Fail closed: every guarantee of a run, and for commands that fork, signals kept inside the
        # command by Landlock's scoping or a PID namespace of its own.
        self.refusal = isolation.reason if not isolation.can_execute else ""
        if not self.refusal and isolation.tier != "unsafe":
            active = {**isolation.active(), "netns": isolation.netns and pid_namespace}
            self.refusal = refusal(assess(active, isolation.landlock, "shell"), "shell commands")
        # The launcher applies the sandbox child's isolation layers, and holds the quota; compiled once, here.
        self.layers_code = marshal.dumps(compile(LAYERS.read_text(encoding="utf-8"), str(LAYERS), "exec"))
        self.quota_code = marshal.dumps(compile(SHELL_QUOTA.read_text(encoding="utf-8"), str(SHELL_QUOTA), "exec"))

    @property
    def quota_held_by(self) -> str:
        """What holds a command to the workspace's quota here: the kernel (a tmpfs in the launcher's mount namespace),
        or the server's count."""
        return "tmpfs" if self.layers["netns"] else "server count"

    @property
    def process_limit(self) -> str:
        """What holds the command's process count to ``limits.processes`` on this host ("" if nothing does)."""
        if pids_cgroup_parent() is not None:
            return "pids cgroup"
        # As in the launcher: RLIMIT_NPROC binds a uid other than root's, counted per user namespace.
        if (self.layers["uid"] is not None or os.geteuid() != 0) and self.layers["netns"]:
            return "RLIMIT_NPROC"
        return ""

    def environment(self, tmp: str, extra: dict[str, str]) -> dict[str, str]:
        env = {
            "PATH": ":".join(dict.fromkeys([self.bin_dir, "/usr/local/bin", "/usr/bin", "/bin"])),
            "HOME": tmp,
            "TMPDIR": tmp,
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTEST_ADDOPTS": "-p no:cacheprovider",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",  # as in graded runs: the server's pytest plugins are not the project's
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
            # An identity, so `git stash` and `git commit` work in the workspace.
            "GIT_AUTHOR_NAME": "agent",
            "GIT_AUTHOR_EMAIL": "agent@agentdebugger.invalid",
            "GIT_COMMITTER_NAME": "agent",
            "GIT_COMMITTER_EMAIL": "agent@agentdebugger.invalid",
        }
        for key, value in extra.items():
            if not key or "=" in key or "\0" in key or "\0" in value:
                raise ValueError(f"not a valid environment variable: {key!r}")
            env[key] = value
        return env

    def run(self, workspace: Path, command: str, env: dict[str, str] | None = None, record: bool = False) -> ShellResult:
        """Run ``command`` with bash in ``workspace``; returns once every process it started is gone. ``record``: the
        command gets a pipe on fd 3, returned as ``ShellResult.record`` (for the server's own commands, never run_bash's)."""
        if self.refusal:
            raise RefusedToRun(self.refusal)
        root = Path(workspace).resolve()
        if not root.is_dir():
            raise ValueError(f"the workspace {root} is not a directory")
        if "\0" in command:
            raise ValueError("the command contains a NUL character")
        # Outside the workspace, so nothing written there becomes part of the agent's patch.
        tmp = tempfile.mkdtemp(prefix="adbg-sh-", dir=self.tmp_root)
        claim = current_claim()  # a CPU slot for the episode, before the command's clock starts (env.sandbox.slots)
        counted = None
        try:
            if not self.layers["netns"]:
                counted = _Counted(self.limits.quota, root, tmp, self.tmp_root)
                if counted.refusal:
                    raise QuotaExceeded(counted.refusal, ShellResult(output=""))
            if claim is not None:
                claim.hold()
            result, outcome = self._run(root, command, self.environment(tmp, env or {}), tmp, claim, counted, record)
            if counted is not None:
                outcome = counted.settle()
                counted = None
            elif outcome == NOT_RUN:  # the launcher found the workspace over its quota before the command
                outcome = already_over(self.limits.quota, measure([root]))
            if outcome:
                raise QuotaExceeded(outcome, result)
            return result
        finally:
            if counted is not None:  # the command failed to start: the workspace is as it was
                counted.settle()
            if claim is not None:
                claim.release()
            _remove_tree(tmp)
            if self.isolation.uid is not None:
                # Back to the server's uid: a later command of another episode under the same uid finds nothing it owns.
                _chown_tree(root, os.geteuid())
            if os.geteuid() != 0:
                _restore_access(root)

    def _run(
        self, root: Path, command: str, env: dict[str, str], tmp: str, claim: Claim | None, counted: _Counted | None, record: bool = False
    ) -> tuple[ShellResult, str]:
        """The command's result, and what the launcher's quota records say (``_Supervisor.quota_outcome``)."""
        uid = self.isolation.uid
        quota = self.limits.quota
        if uid is not None:
            _chown_tree(root, uid)
            os.chown(tmp, uid, uid)
        setup = {
            "layers_code": self.layers_code,
            "quota_code": self.quota_code,
            "quota": None if counted is not None else {"workspace": str(root), "tmp": tmp, "bytes": quota.bytes, "files": quota.files},
            "command": command,
            "env": env,
            "layers": self.layers,
            "read_only": self.read_only,
            "read_write": [str(root), tmp, os.devnull],
            "limits": self.limits.for_child(),
            "nice": 10,
            "pid_namespace": self.pid_namespace,
        }
        # A pipe, not a file: reopening /dev/stdout with O_TRUNC cannot erase earlier output, and a
        # flood costs no disk; the parent keeps the head and the tail.
        out_r, out_w = os.pipe()
        setup_r, setup_w = os.pipe()
        status_r, status_w = os.pipe()
        record_r, record_w = os.pipe() if record else (-1, -1)
        if record:
            setup["record_fd"] = record_w
        cgroup = PidsCgroup.create(self.limits.processes)
        started = time.monotonic()
        owned = [out_r, setup_w, status_r] + ([record_r] if record else [])  # closed exactly once: a second close could hit another thread's fd
        try:
            try:
                passed = (setup_r, status_w) + ((record_w,) if record else ())
                popen = start(SHELL_CHILD, str(setup_r), str(status_w), stdout=out_w, stderr=out_w, env={}, pass_fds=passed, cwd=root)
            finally:
                for fd in (out_w, setup_r, status_w, record_w):
                    if fd >= 0:
                        os.close(fd)
            if cgroup is not None:
                try:
                    cgroup.add(popen.pid)  # before it has read its setup, so before it has forked
                except OSError:
                    cgroup.remove()
                    cgroup = None
            owned.remove(setup_w)  # the supervisor closes it once the setup is written
            meter = claim.meter(lambda: [popen.pid]) if claim is not None else None
            supervisor = _Supervisor(self.limits, popen, cgroup is not None, out_r, status_r, started, meter, record_r)
            supervisor.over_quota = counted.over if counted is not None else None
            return supervisor.run(setup, setup_w), supervisor.quota_outcome()
        finally:
            for fd in owned:
                os.close(fd)
            if cgroup is not None:
                cgroup.kill_all(KILL_WAIT_SECONDS)
                cgroup.remove()


class _Supervisor:
    """One call, from the launcher's start until every process of the command is gone."""

    def __init__(
        self, limits: ShellLimits, popen: subprocess.Popen, in_cgroup: bool, out_r: int, status_r: int, started: float, meter: Meter | None = None,
        record_r: int = -1,
    ):
        self.limits, self.popen, self.in_cgroup, self.meter = limits, popen, in_cgroup, meter
        self.out_r, self.status_r, self.record_r, self.started = out_r, status_r, record_r, started
        self.capture = _Capture(limits.output_bytes, max(limits.file_bytes, limits.output_bytes))
        self.status = b""
        self.record = bytearray()
        self.out_open = self.status_open = True
        self.record_open = record_r >= 0
        self.init_fd: int | None = None  # pid 1 of the command's namespace, as the host sees it
        self.init_seen = False
        # where the server counts the quota (``_Counted.over``): asked while the command runs
        self.over_quota: Callable[[float], bool] | None = None
        self.stopped_over_quota = False
        for fd in (out_r, status_r, record_r):
            if fd >= 0:
                os.set_blocking(fd, False)

    @property
    def started_fields(self) -> list[bytes]:
        """The launcher's ``P<pid> <pidns> <quota>`` line, split, once it is complete ([] before, or if it failed)."""
        if not self.status.startswith(b"P") or b"\n" not in self.status:
            return []
        return self.status[1:].split(b"\n", 1)[0].split()

    @property
    def pid_ns(self) -> bool:
        return self.started_fields[1:2] == [b"1"]

    @property
    def holds_quota(self) -> bool:
        """The launcher holds the workspace's quota (a tmpfs in its mount namespace) and copies the changes back."""
        return self.started_fields[2:3] == [b"1"]

    @property
    def quota_record(self) -> bytes:
        """The launcher's ``Q...`` record, after the command (b"" if none came)."""
        return self.status.split(b"\n", 1)[1] if self.started_fields else b""

    def read_status(self) -> None:
        try:
            chunk = os.read(self.status_r, STATUS_BYTES)
        except BlockingIOError:
            return
        self.status += chunk
        if not chunk or len(self.status) > STATUS_BYTES:
            self.status_open = False
        if not self.init_seen and self.started_fields:
            self.init_seen = True
            if self.pid_ns:  # open now, while the launcher is alive and has not reaped it
                self.init_fd = _pidfd(int(self.started_fields[0]))

    def read_output(self) -> None:
        try:
            chunk = os.read(self.out_r, 65536)
        except BlockingIOError:
            return
        if not chunk:
            self.out_open = False
        elif not self.capture.feed(chunk):
            self.out_open = False
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, self.out_r)  # the pipe's last reader is gone: writers get SIGPIPE; the fd number stays ours
            os.close(null)

    def read_record(self) -> None:
        try:
            chunk = os.read(self.record_r, 65536)
        except BlockingIOError:
            return
        self.record += chunk[: RECORD_BYTES + 1 - len(self.record)]
        if not chunk or len(self.record) > RECORD_BYTES:
            self.record_open = False
            if chunk:  # past the cap, as for the output: the pipe's reader goes, so writers get EPIPE, never block
                null = os.open(os.devnull, os.O_RDONLY)
                os.dup2(null, self.record_r)
                os.close(null)

    def drain(self) -> None:
        """After the launcher: what is still in the pipes (every writer is gone, or is being killed)."""
        while self.status_open:
            before = len(self.status)
            self.read_status()
            if self.status_open and len(self.status) == before:
                break
        while self.out_open:
            before = self.capture.size
            self.read_output()
            if self.out_open and self.capture.size == before:
                break
        while self.record_open:
            before = len(self.record)
            self.read_record()
            if self.record_open and len(self.record) == before:
                break

    def run(self, setup: dict, setup_w: int) -> ShellResult:
        timeout = self.limits.timeout_seconds
        deadline = self.started + timeout
        launcher_fd: int | None = None
        try:
            try:
                with contextlib.suppress(BrokenPipeError):  # a launcher that died is reported below
                    data = marshal.dumps(setup)
                    while data:
                        data = data[os.write(setup_w, data) :]
            finally:
                os.close(setup_w)  # EOF: the launcher starts
            launcher_fd = _pidfd(self.popen.pid)
            timed_out = False
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    timed_out = True
                    break
                if self.over_quota is not None and self.over_quota(time.monotonic()):
                    self.stopped_over_quota = True
                    break
                pipes = ((self.out_r, self.out_open), (self.status_r, self.status_open), (self.record_r, self.record_open))
                watch = [fd for fd, is_open in pipes if is_open]
                if launcher_fd is not None:
                    watch.append(launcher_fd)
                wait = remaining if launcher_fd is not None else min(remaining, 0.05)
                if self.meter is not None:
                    wait = min(wait, TICK_S)
                ready = _ready(watch, wait if self.over_quota is None else min(wait, QUOTA_POLL_SECONDS))
                if self.meter is not None:
                    self.meter.tick()  # a command that only waits (sleep, a blocked read) holds no CPU slot
                if self.status_r in ready:
                    self.read_status()
                if self.out_r in ready:
                    self.read_output()
                if self.record_open and self.record_r in ready:
                    self.read_record()
                if (launcher_fd in ready) if launcher_fd is not None else self.popen.poll() is not None:
                    break
            if timed_out or self.stopped_over_quota:
                if self.holds_quota or (self.started_fields and not self.pid_ns):
                    # The launcher ends the command first (its namespace's pid 1, or without a namespace its Landlock
                    # domain, setsid escapes too), then copies the changes back if it holds the quota.
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(self.popen.pid, signal.SIGTERM)
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        self.popen.wait(timeout=COPY_BACK_SECONDS if self.holds_quota else 1.0)
                kill_group(self.popen.pid)  # the launcher and bash; PDEATHSIG and the namespace take the rest
            self.popen.wait()
            self.drain()
            if self.init_fd is not None:
                _wait_gone(self.init_fd, KILL_WAIT_SECONDS)
            if not self.pid_ns:
                kill_group(self.popen.pid)  # background jobs still in the launcher's process group
            self.drain()
        finally:
            for fd in (launcher_fd, self.init_fd):
                if fd is not None:
                    os.close(fd)
        if self.status.startswith(b"E"):
            raise ShellError("the shell could not be isolated, so the command did not run: " + self.status[1:].decode("utf-8", "replace"))
        output, truncated = self.capture.text()
        notes = []
        if timed_out:
            notes.append(f"timed out after {timeout:g} s")
        if self.stopped_over_quota:
            notes.append("stopped: the workspace passed its quota")
        if self.capture.size > self.capture.hard_stop:
            notes.append(f"the output passed {self.capture.hard_stop} bytes, so its pipe was closed")
        if self.status.startswith(b"P") and not self.pid_ns:
            how = "its process group and its pids cgroup" if self.in_cgroup else "its process group (and Landlock's signal scope, if any)"
            notes.append(f"no PID namespace on this host: processes left behind were killed through {how}")
        code = self.popen.returncode
        return ShellResult(
            output=output,
            output_truncated=truncated,
            exit_code=None if timed_out or self.stopped_over_quota else (code if code >= 0 else 128 - code),
            timed_out=timed_out,
            duration_ms=(time.monotonic() - self.started) * 1000,
            note="; ".join(notes),
            record=bytes(self.record[:RECORD_BYTES]) if self.record_r >= 0 else None,
            record_truncated=len(self.record) > RECORD_BYTES,
        )

    def quota_outcome(self) -> str:
        """What the launcher's quota records say ("" when the command's changes are in the workspace, or where the
        launcher does not hold the quota)."""
        quota = self.limits.quota
        if self.status == b"O":
            return NOT_RUN
        if not self.holds_quota:
            return ""
        kind, _, detail = self.quota_record.partition(b" ")
        text = detail.decode("utf-8", "replace")
        if kind == b"Qok":
            return ""
        if kind == b"Qfull":
            used_bytes, used_files = (int(n) for n in detail.split())
            return filled(quota, Usage(bytes=used_bytes, files=used_files))
        if kind == b"Qerror":
            return f"the command's files could not be read back ({text}), so its changes were undone: the workspace is as it was before the command"
        if kind == b"Qpartial":
            return f"copying the command's changes back into the workspace failed part of the way ({text}): some of them may be missing"
        return "the command's launcher was stopped before it had copied the command's changes back: some or all of them may be missing"
