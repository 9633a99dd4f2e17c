"""Runs submitted code in a separate, limited process and talks to it over private pipes.

    sandbox = Sandbox(Limits(), probe_isolation())
    with sandbox.start(source, filename="search.py", module="search") as run:
        run.call("binary_search", [1, 3, 5], 5)      # -> 2, computed in the child
    run.result.output                                # what the code printed (capped)

The trusted side (this module and ``env.verdict``) never imports, unmarshals or evaluates anything
the child sends: replies are JSON with a size cap, matched to a fresh random request id. Values
that are not plain data come back as :class:`RemoteHandle` objects that compare by identity,
so an object whose ``__eq__`` always answers True cannot satisfy a test.
"""

from __future__ import annotations

import json
import marshal
import os
import secrets
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from env import settings
from env.infra import InfraFailure, from_os_error
from env.process_state import process_wide
from env.sandbox.cputime import CpuBudget, Stretch, WaitCredit, busy, cpu_exceeded, own_seconds, starved_run
from env.sandbox.isolation import Isolation, scratch_exposure
from env.sandbox.launch import CHILD, compile_child_scripts, kill_group, python_env, start
from env.sandbox.lifetime import Stopping, stopping
from env.sandbox.limits import Limits
from env.sandbox.readable import debug_paths, run_paths, site_paths
from env.sandbox.slots import TICK_S, Claim, Meter, current_claim
from env.sandbox.zygote import Zygote, ZygoteChild, ZygoteError
from env.scratch import scratch_root
from env.timing import phase


class RunObservers:
    """Who is told each finished run's wall seconds: bound methods, held weakly (their objects may go)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._refs: list[weakref.WeakMethod[Callable[[float], None]]] = []

    def add(self, method: Callable[[float], None]) -> None:
        with self._lock:
            self._refs = [ref for ref in self._refs if ref() is not None]
            self._refs.append(weakref.WeakMethod(method))  # type: ignore[arg-type]

    def tell(self, seconds: float) -> None:
        for ref in list(self._refs):
            method = ref()
            if method is not None:
                method(seconds)


_OBSERVERS = process_wide("run_observers", RunObservers)  # the process's metrics count every run (env.process_state)


def observe_runs(method: Callable[[float], None]) -> None:
    """Call ``method`` (a bound method, held weakly: its object may go) with each finished run's wall seconds."""
    _OBSERVERS.add(method)


_PLAIN = frozenset({int, float, str, bool, type(None)})  # what a request carries as it is
STARVED_SHARE = 0.5  # a run that times out while its trusted thread waited this share of its time for a CPU: the machine's


def run_delay(since: float | None = 0.0) -> float | None:
    """Seconds this thread has spent runnable but not running (the kernel's schedstat), minus ``since``; None where the
    kernel does not say (or ``since`` is None)."""
    if since is None:
        return None
    try:
        with open("/proc/thread-self/schedstat", encoding="ascii") as handle:
            return int(handle.read().split()[1]) / 1e9 - since
    except (OSError, ValueError, IndexError):
        return None


class RunAborted(Exception):
    """The run cannot answer any more calls (it exited, timed out or broke the protocol)."""


class RefusedToRun(Exception):
    """The host cannot give every guarantee a run needs (env.sandbox.guarantees) and unsafe execution is not enabled."""


class RemoteError(Exception):
    """The submitted code raised; carries its type name, message and its own frames."""

    def __init__(self, exc_type: str, message: str, traceback_text: str, reply: dict | None = None):
        super().__init__(f"{exc_type}: {message}")
        self.exc_type = exc_type
        self.message = message
        self.traceback_text = traceback_text
        self.reply = reply or {}  # repository mode: the raw reply (class chain, args, handle)


@dataclass(eq=False)
class RemoteHandle:
    """A non-data value that stayed in the child; equal only to itself."""

    run: SandboxRun
    handle: int
    type_name: str

    def __repr__(self) -> str:
        return f"<{self.type_name} object>"


class RunResult(BaseModel):
    """What the trusted side observed about one run, apart from test outcomes."""

    output: str = ""
    output_truncated: bool = False
    timed_out: bool = False
    exit_code: int | None = None
    aborted: str = ""
    duration_ms: float = 0.0
    busy: bool = Field(
        False, description="Limits counted in CPU time only: the wall-clock backstop stopped the run under its CPU limit, so the "
                           "machine was too busy and the run has no outcome of its own (``aborted`` says so)",
    )  # fmt: skip
    cpu_seconds: float | None = Field(
        None, description="Limits counted in CPU time only: what the run's processes used (a test process that took its "
                          "conversation over included), as last sampled",
    )  # fmt: skip


class FreshChild:
    """A child started as a fresh interpreter (the slow path, and the benchmark's baseline)."""

    def __init__(self, popen: subprocess.Popen):
        self.pid = popen.pid
        self._popen = popen

    def wait(self, timeout: float | None) -> int | None:
        try:
            return self._popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def forget(self) -> None:
        self._popen.wait()  # our own child: reap it now (it was just killed)


class Sandbox:
    """Shared runner configuration: safe to use from many threads at once.

    ``warm=True`` (the default; ``SANDBOX_ZYGOTE=off`` disables it) starts children from a
    pre-imported fork server; otherwise each run starts a fresh interpreter. ``seeded``: for how many string-hash
    seeds a fork server of their own may serve the runs asked for with that seed and not ``fresh`` (a split run's
    project, hashing as its test process does); a run with another seed starts a fresh interpreter with it.
    """

    def __init__(
        self, limits: Limits, isolation: Isolation, tmp_root: str | None = None, warm: bool | None = None, debug: bool = False,
        site: list[str] | None = None, host: str | None = None, seeded: int = 0,
    ):
        self.limits = limits
        self.isolation = isolation
        if isolation.can_execute:
            compile_child_scripts()
        self.tmp_root = tmp_root or scratch_root()  # probe_isolation checked scratch_root(); a chosen one is checked here
        if tmp_root and scratch_exposure(tmp_root):
            raise ValueError(scratch_exposure(tmp_root))
        # What every child applies to itself before it sees a submission.
        self.config = {
            "layers": isolation.for_child(limits.disk_bytes, limits.disk_files),
            "read_only": run_paths(),
            "limits": limits.for_child(),
            "nice": 10,
            "tmp_root": self.tmp_root,
            "pool": settings.integer("SANDBOX_POOL"),
        }
        if site is not None and not debug:
            # A verdict run whose project needs installed packages (a task's requirements): read-only, after its paths.
            self.config.update(site=site, read_only=sorted({*run_paths(), *site}))
        if debug:
            # Debugging sessions run pytest inside the child, so they also read the installed
            # packages (read-only; nothing there is secret). Verdict runs never get them.
            # pytest's logging plugin opens /dev/null for writing. ``site``: a test environment's
            # packages instead of the server's (a sandboxed verdict run); ``host``: the directory of
            # the trusted test process's modules, whose pytest plugin such a run reports with.
            packages = site if site is not None else site_paths()
            read_only = sorted({*run_paths(), *packages}) if site is not None else debug_paths()
            self.config.update(debug=True, site=packages, read_only=read_only, read_write=["/dev/null"], pool=1)
            if host is not None:
                self.config["host"] = host
        zygotes = settings.switch("SANDBOX_ZYGOTE")
        self._zygote_runs = settings.integer("SANDBOX_ZYGOTE_RUNS")
        self.zygote: Zygote | None = Zygote(self.config, self._zygote_runs) if (zygotes if warm is None else warm) else None
        self._seeded_cap = seeded if zygotes else 0
        self._seeded: dict[int, Zygote] = {}  # hash seed -> its fork server, made on the seed's first run
        self._seeded_lock = threading.Lock()
        weakref.finalize(self, _retire_all, self._seeded, self._seeded_lock)  # a sandbox dropped unclosed leaves no fork server

    def launch(
        self, req_r: int, resp_w: int, out_fd: int, fresh: bool = False, hash_seed: int | None = None
    ) -> tuple[FreshChild | ZygoteChild, str | None]:  # fmt: skip
        """Start a child for one run (``fresh``: a new interpreter even where a zygote is warm); with ``hash_seed``, one
        whose strings hash with that seed: a fork of that seed's own zygote (``seeded``), else a new interpreter.
        Returns the child and the directory to remove afterwards, if any."""
        with phase("fork"):
            return self._launch(req_r, resp_w, out_fd, fresh, hash_seed)

    def _launch(self, req_r: int, resp_w: int, out_fd: int, fresh: bool, hash_seed: int | None) -> tuple[FreshChild | ZygoteChild, str | None]:
        zygote = None if fresh else self.zygote if hash_seed is None else self._seeded_zygote(hash_seed)
        if zygote is not None:
            try:
                return zygote.spawn(req_r, resp_w, out_fd), None
            except ZygoteError:
                pass  # the zygote is replaced on the next run; this one starts cold
        run_dir = tempfile.mkdtemp(prefix="adbg-run-", dir=self.tmp_root)
        if self.isolation.uid is not None:
            os.chown(run_dir, self.isolation.uid, self.isolation.uid)
        try:
            popen = start(
                CHILD, str(req_r), str(resp_w),
                stdout=out_fd, stderr=out_fd, env={"MALLOC_ARENA_MAX": "2"}, pass_fds=(req_r, resp_w), cwd=run_dir, hash_seed=hash_seed,
            )  # fmt: skip
        except BaseException:
            shutil.rmtree(run_dir, ignore_errors=True)
            raise
        return FreshChild(popen), run_dir

    def _seeded_zygote(self, hash_seed: int) -> Zygote | None:
        """The fork server whose interpreter hashes with ``hash_seed``, made on first use; None once ``seeded`` seeds
        have one (a run with another seed starts a fresh interpreter)."""
        with self._seeded_lock:
            zygote = self._seeded.get(hash_seed)
            if zygote is None and len(self._seeded) < self._seeded_cap:
                python_env({}, hash_seed)  # a seed out of range is refused here, as a fresh interpreter refuses it
                # two children kept ready, not SANDBOX_POOL: a split run takes one at a time (its held-out run follows it)
                config = {**self.config, "pool": min(2, self.config["pool"])}
                zygote = self._seeded[hash_seed] = Zygote(config, self._zygote_runs, hash_seed)
            return zygote

    def seeded_zygotes(self) -> dict[int, int | None]:
        """Each hash seed with a fork server of its own, and that server's pid (None until its first run starts it)."""
        with self._seeded_lock:
            return {seed: zygote.pid for seed, zygote in self._seeded.items()}

    def retire_seeded(self) -> None:
        """Let the seeded fork servers go once their runs in flight are over; a later run with a seed makes its own again."""
        _retire_all(self._seeded, self._seeded_lock)

    def close(self) -> None:
        if self.zygote is not None:
            self.zygote.close()
        for zygote in _take_all(self._seeded, self._seeded_lock):
            zygote.close()

    def for_validity(self) -> Sandbox:
        """This (base) sandbox with its limits counted in CPU time (``Limits.for_validity``), for the runs that decide
        whether a task, a test or a mutant is valid; itself when they already are."""
        if self.limits.clock == "cpu":
            return self
        return Sandbox(self.limits.for_validity(), self.isolation, self.tmp_root, warm=self.zygote is not None)

    def start(self, source: str, filename: str, module: str) -> SandboxRun:
        """A run that loads one submitted module and answers calls on its names."""
        if not self.isolation.can_execute:
            raise RefusedToRun(self.isolation.reason)
        return SandboxRun(self, {"filename": filename, "module": module, "source": source})

    def start_repo(
        self, files: dict[str, str | bytes], paths: list[str], environ: dict[str, str], fresh: bool = False, hash_seed: int | None = None
    ) -> SandboxRun:  # fmt: skip
        """A run holding a project's source files; its objects are reached with :meth:`SandboxRun.op`. ``fresh``: a
        new interpreter, with its own string-hash seed (children of one zygote share theirs) or ``hash_seed``: a split
        run's is its test process's (a project's hash of a string is the tests'), varied over a validation's runs for
        flaky set and dict orders to show up. ``hash_seed`` without ``fresh``: a fork of that seed's zygote where the
        sandbox keeps one (``seeded``: the served runs' seed and a validation's few), else a new interpreter."""
        if not self.isolation.can_execute:
            raise RefusedToRun(self.isolation.reason)
        return SandboxRun(self, {"mode": "repo", "files": files, "paths": paths, "env": environ}, fresh=fresh, hash_seed=hash_seed)

    def start_pytest(
        self, files: dict[str, str | bytes], paths: list[str], environ: dict[str, str], collect: list[str], select: list[str],
        coverage: bool = False,
    ) -> SandboxRun:
        """A sandboxed test run: pytest on ``collect`` (keeping the ids in ``select``) with the project, all in the
        child; ``run.ready`` is its records. Needs a sandbox made with ``debug`` and ``host``. ``coverage`` adds a
        record of the lines each test executed (the test environment must hold the coverage package)."""
        if not self.isolation.can_execute:
            raise RefusedToRun(self.isolation.reason)
        setup = {"mode": "pytest", "files": files, "paths": paths, "env": environ, "collect": collect, "select": select, "coverage": coverage}
        return SandboxRun(self, setup, fresh=True)

    def start_debug(
        self,
        files: dict[str, str | bytes],
        paths: list[str],
        environ: dict[str, str],
        target: dict[str, str],
        breakpoints: list[tuple[str, int, str | None]],
        stop_at_entry: bool = True,
    ) -> SandboxRun:
        """A debugging session: ``target`` ({"kind": "test", "id": ...} or {"kind": "script", "path": ...})
        runs under the tracer; ``run.ready`` is its first stop (or its end), :meth:`SandboxRun.command` the rest."""
        if not self.isolation.can_execute:
            raise RefusedToRun(self.isolation.reason)
        setup = {"mode": "debug", "files": files, "paths": paths, "env": environ, "target": target,
                 "breakpoints": [list(b) for b in breakpoints], "stop_at_entry": stop_at_entry}
        return SandboxRun(self, setup)


def _take_all(seeded: dict[int, Zygote], lock: threading.Lock) -> list[Zygote]:
    with lock:
        zygotes = list(seeded.values())
        seeded.clear()
    return zygotes


def _retire_all(seeded: dict[int, Zygote], lock: threading.Lock) -> None:
    for zygote in _take_all(seeded, lock):
        zygote.retire()


@dataclass
class SandboxRun:
    sandbox: Sandbox
    setup: dict[str, Any]
    result: RunResult = field(default_factory=RunResult)
    load_error: RemoteError | None = None
    ready: Any = None  # the child's first reply ("ready"; a debugging session's first stop)
    fresh: bool = False  # a new interpreter, never a zygote's fork
    hash_seed: int | None = None  # the child's PYTHONHASHSEED (a split run's: its test process's); else its own

    def __post_init__(self) -> None:
        limits = self.sandbox.limits
        # A CPU slot for the run's owner (env.sandbox.slots), taken before the wall clock starts; given back while the
        # child only waits, and at the end.
        self.claim: Claim | None = current_claim()
        self._meter: Meter | None = None
        self._budget: CpuBudget | None = None  # limits counted in CPU time: the run's processes' CPU time against them
        if self.claim is not None:
            self.claim.hold()
        # The output file has no name: only this process and the child hold it.
        try:
            handle, path = tempfile.mkstemp(prefix="adbg-out-", dir=self.sandbox.tmp_root)
        except OSError as exc:
            if self.claim is not None:
                self.claim.release()
            raise from_os_error(exc, "starting a sandbox run") or InfraFailure("sandbox_start", f"a sandbox run could not start: {exc}") from None
        os.unlink(path)
        self._out_fd = handle
        req_r, self._req_w = os.pipe()
        self._resp_r, resp_w = os.pipe()
        self._started = time.monotonic()
        self._deadline = self._started + limits.deadline_seconds  # with limits counted in CPU time, only a backstop
        self._waited_for_cpu = run_delay()  # this (trusted) thread's time runnable but not running, from the kernel
        self._thread = threading.get_native_id()  # ... read again only in this thread (a debug session moves between threads)
        self._buffer = b""
        self._finished = False
        self._finished_talking = False
        try:
            self._child, self._dir = self.sandbox.launch(req_r, resp_w, self._out_fd, self.fresh, self.hash_seed)
        except BaseException as exc:
            for fd in (req_r, resp_w, self._req_w, self._resp_r, self._out_fd):
                os.close(fd)
            if self.claim is not None:
                self.claim.release()
            if isinstance(exc, Stopping):
                raise InfraFailure("replica_stopping", "the server is shutting down and starts no more runs") from None
            if isinstance(exc, OSError):
                raise from_os_error(exc, "starting a sandbox run") or InfraFailure("sandbox_start", f"a sandbox run could not start: {exc}") from None
            raise
        if self.claim is not None:
            child = self._child.pid
            self._meter = self.claim.meter(lambda: [child])
        if limits.cpu_budget is not None:
            self._budget = CpuBudget(limits.cpu_budget, [self._child.pid])
        # a wall-clock run: the time its code waited for a CPU moves its deadline (up to the ceiling), never the agent's
        self._credit = WaitCredit(self._child.pid) if limits.clock == "wall" else None
        self._ceiling = self._started + limits.ceiling_seconds
        os.close(req_r)
        os.close(resp_w)
        # the child loading the submission or the project (a sandboxed pytest run's whole run is its answer: no load)
        with phase("load" if self.setup.get("mode") != "pytest" else "visible"):
            self._send({"config": self.sandbox.config, **self.setup})
            try:
                self.ready = self._receive(0, undecoded=self.setup.get("mode") in ("debug", "pytest"))
            except RemoteError as exc:
                self.load_error = exc
            except RunAborted:
                pass  # reported through result.aborted / timed_out
        if self.setup.get("mode") == "debug" and self.claim is not None:
            self.claim.release()  # at its first stop the session waits for the agent's commands

    # -- protocol --------------------------------------------------------------------------

    def _send(self, message: dict) -> None:
        data = marshal.dumps(message)
        data = len(data).to_bytes(4, "big") + data
        try:
            while data:
                data = data[os.write(self._req_w, data) :]
        except OSError:
            raise self._abort(self._exit_description()) from None

    def _read_exact(self, n: int) -> bytes:
        ticking = self._meter is not None or self._budget is not None
        while len(self._buffer) < n:
            remaining = self._deadline - time.monotonic()
            if remaining <= 0:
                if self._credited():
                    continue
                raise self._out_of_time()
            ready, _, _ = select.select([self._resp_r], [], [], min(remaining, TICK_S) if ticking else remaining)
            if not ready:
                if self._meter is not None:
                    self._meter.tick()  # an idle child gives its slot back; one computing again takes one
                if self._budget is not None and self._budget.over():
                    self.result.timed_out = True
                    raise self._abort(cpu_exceeded(self._budget.seconds))
                continue
            chunk = os.read(self._resp_r, max(65536, n - len(self._buffer)))
            if not chunk:
                raise self._abort(self._exit_description())
            self._buffer += chunk
        data, self._buffer = self._buffer[:n], self._buffer[n:]
        return data

    def _credited(self) -> bool:
        """At the deadline of a wall-clock run: move it by the time the run's processes waited for a CPU since the last
        look (``WaitCredit``), as far as the ceiling; whether it moved."""
        if self._credit is None or self._deadline >= self._ceiling:
            return False
        owed = self._credit.owed()
        if owed <= 0:
            return False
        self._deadline = min(self._ceiling, self._deadline + owed)
        return True

    def _out_of_time(self) -> RunAborted:
        """The deadline passed: a time-out, or with limits counted in CPU time the backstop, which stops a run under its
        CPU limit only because the machine was too busy (unless /proc could not tell what it used)."""
        limits = self.sandbox.limits
        if self._budget is not None and self._budget.sample() <= self._budget.seconds and self._budget.measured:
            self.result.busy = True
            return self._abort(busy(limits.deadline_seconds, self._budget.used, self._budget.seconds))
        waited = run_delay(self._waited_for_cpu) if threading.get_native_id() == self._thread else None
        if waited is not None and waited >= STARVED_SHARE * limits.deadline_seconds:
            # the server's side of the run (this thread: it sends the code its requests) waited for a CPU most of the
            # time; the code's own processes, niced below it, cannot keep it waiting that long
            self.result.aborted = self.result.aborted or "the server's side of the run was starved of the CPU"
            self._kill()
            raise InfraFailure(
                "trusted_time", f"the run's {limits.deadline_seconds:g} s ran out while the server's side of it waited {waited:.1f} s for a CPU: the machine is too busy"
            )
        if self._credit is not None and self._deadline >= self._ceiling and self._credit.total >= STARVED_SHARE * limits.wall_seconds:
            # its deadline moved as far as it may for the time the code waited for a CPU: the machine starved the run
            self.result.aborted = self.result.aborted or "the run's processes were starved of the CPU"
            self._kill()
            raise InfraFailure("run_starved", starved_run(limits.ceiling_seconds, self._credit.total, limits.wall_seconds))
        self.result.timed_out = True
        return self._abort(f"time limit of {limits.deadline_seconds:g} s exceeded")

    def cpu_budget(self, *others: int) -> CpuBudget | None:
        """For whoever waits on the run after :meth:`hand_over`: the run's CPU limit over the child and ``others`` (the
        process that took the conversation over), what the child used so far included; None where limits count wall
        clock."""
        if self._budget is None:
            return None
        for pid in others:
            self._budget.add(pid)
        return self._budget

    def _receive(self, rid: int, undecoded: bool = False) -> Any:
        size = int.from_bytes(self._read_exact(4), "big")
        if size > self.sandbox.limits.reply_bytes:
            raise self._abort(f"a reply of {size} bytes exceeds the {self.sandbox.limits.reply_bytes}-byte limit")
        raw = self._read_exact(size)
        try:
            reply = json.loads(raw)
        except (ValueError, RecursionError):
            raise self._abort("the code's process sent a malformed reply") from None
        if not isinstance(reply, dict) or reply.get("id") != rid:
            raise self._abort("the code's process sent a reply that does not match the request")
        if "exc" in reply:
            raise RemoteError(str(reply.get("exc")), str(reply.get("msg")), str(reply.get("tb")), reply)
        return reply.get("ok") if undecoded else self._decode(reply.get("ok"))

    def _decode(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self._decode(v) for v in value]
        if isinstance(value, dict):
            if "h" in value:
                return RemoteHandle(self, int(value["h"]), str(value.get("t", "object")))
            return {str(k): self._decode(v) for k, v in value.get("d", [])}
        return value

    def _encode(self, value: Any) -> Any:
        if isinstance(value, RemoteHandle):
            if value.run is not self:
                raise ValueError("a handle from another run")
            return {"$h": value.handle}
        if isinstance(value, (list, tuple)):
            if all(type(v) in _PLAIN for v in value):  # a list of numbers or words: as it is, without a call per item
                return list(value)
            return [self._encode(v) for v in value]
        if isinstance(value, dict):
            return {k: self._encode(v) for k, v in value.items()}
        return value

    def _request(self, message: dict, undecoded: bool = False) -> Any:
        if self.result.aborted:
            raise RunAborted(f"not run: {self.result.aborted}")
        if self._finished or self._finished_talking:
            raise RunAborted("the run has finished" if self._finished else "another process holds the run's conversation")
        if self.load_error is not None:
            raise RunAborted("the module failed to load")
        rid = secrets.randbits(62) + 1
        if self.claim is not None:
            self._deadline += self.claim.hold()  # the child waits for this request: waiting for a slot is not its time
        self._send({"id": rid, **message})
        return self._receive(rid, undecoded)

    # -- public calls ------------------------------------------------------------------------

    def call(self, name: str, *args: Any, handle: RemoteHandle | None = None, **kwargs: Any) -> Any:
        message: dict[str, Any] = {"op": "call", "name": name, "args": self._encode(list(args)), "kwargs": self._encode(kwargs)}
        if handle is not None:
            message["handle"] = self._encode(handle)["$h"]
        return self._request(message)

    def get(self, name: str, handle: RemoteHandle | None = None) -> Any:
        message: dict[str, Any] = {"op": "getattr", "name": name}
        if handle is not None:
            message["handle"] = self._encode(handle)["$h"]
        return self._request(message)

    def op(self, name: str, args: tuple, kwargs: dict | None = None) -> Any:
        """Repository mode: apply one operation (``call``, ``getattr``, ``eq`` ...) in the child.

        Arguments must already be in the child's wire form (``env/verdict/host/codec.py`` builds it);
        the reply comes back as parsed JSON, undecoded.
        """
        return self._request({"op": "op", "name": name, "args": args, "kwargs": kwargs or {None: ("d", [])}}, undecoded=True)

    def hand_over(self) -> tuple[int, int, int, float]:
        """For a trusted process that takes over the conversation (a repository run's test host): the request and
        reply descriptors, the child's process group and the run's deadline (``time.monotonic``). This object sends
        and reads nothing more; :meth:`ended` and :meth:`finish` close the run once that process is done."""
        self._finished_talking = True
        return self._req_w, self._resp_r, self._child.pid, self._deadline

    def stretch(self, *others: int) -> Stretch | None:
        """For whoever waits on the run after :meth:`hand_over`: its deadline, moved as this run's own would be by the
        time its child and ``others`` (the process that took the conversation over) wait for a CPU that others take;
        None where limits count CPU time."""
        if self._credit is None:
            return None
        return Stretch(WaitCredit(self._child.pid, *others), self._deadline, self._ceiling)

    def give_back_slot(self) -> None:
        """The trusted side waits on something other than this run (which waits for its next request): no CPU slot
        until the next request takes one again. Holding one here could wait forever on a run that needs it."""
        if self.claim is not None:
            self.claim.release()

    def meter(self, *others: int) -> Meter | None:
        """For whoever waits on the run after :meth:`hand_over`: its claim's meter over the child and ``others`` (the
        process that took the conversation over); None when the run claims no slot."""
        if self.claim is None:
            return None
        child = self._child.pid
        return self.claim.meter(lambda: [child, *others])

    def ended(self, aborted: str, timed_out: bool) -> None:
        """What the process that took the conversation over saw: why the run stopped answering, if it did."""
        if aborted and not self.result.aborted:
            self.result.aborted = aborted
        self.result.timed_out = self.result.timed_out or timed_out

    def command(self, message: dict, seconds: float | None = None) -> Any:
        """Debug mode: one command; the wall-clock budget (default: the run's limit) restarts with it."""
        now, limits = time.monotonic(), self.sandbox.limits
        self._deadline = now + (seconds or limits.wall_seconds)
        self._ceiling = max(self._deadline, now + limits.ceiling_seconds)
        if self._credit is not None:
            self._credit.restart()
        try:
            return self._request(message, undecoded=True)
        finally:
            if self.claim is not None:
                self.claim.release()  # a session waits between commands (at a breakpoint, for the agent): no slot

    def output_from(self, offset: int) -> tuple[str, int]:
        """What the code printed since ``offset`` (capped), and the new offset."""
        size = os.fstat(self._out_fd).st_size
        data = os.pread(self._out_fd, min(self.sandbox.limits.output_bytes, max(0, size - offset)), offset)
        text = data.decode("utf-8", "replace")
        if size - offset > len(data):
            text += f"\n... [output cut: {size - offset - len(data)} more bytes not shown]"
        return text, size

    def shown(self) -> RunResult:
        """The run as it stands (its output, time and state so far), for a caller that goes on with requests whose
        output and outcome nobody may see: held-out cases after the visible tests (``env.families.classic.judge``)."""
        now = self.result.model_copy()
        now.output, now.output_truncated = self._read_output()  # the child flushes its output before every reply
        now.duration_ms = (time.monotonic() - self._started) * 1000
        if self._budget is not None:
            now.cpu_seconds = round(self._budget.sample(), 2)
        return now

    def next_phase(self) -> bool:
        """Go on with a phase that must get what a fresh run would: its wall clock (and its CPU budget) start again.
        False, and nothing changes, when the run cannot take it: it ended, or its process used over half its CPU
        limit (``RLIMIT_CPU`` counts the whole process, so the phase would get less than half a run's CPU)."""
        if self.result.aborted or self.load_error is not None or self._finished or self._finished_talking:
            return False
        used = own_seconds(self._child.pid)
        if used is None or used[1] > self.sandbox.limits.cpu_seconds / 2:
            return False
        now = time.monotonic()
        self._deadline, self._ceiling = now + self.sandbox.limits.deadline_seconds, now + self.sandbox.limits.ceiling_seconds
        if self._credit is not None:
            self._credit.restart()
        if self._budget is not None and self.sandbox.limits.cpu_budget is not None:
            self._budget.seconds = self._budget.sample() + self.sandbox.limits.cpu_budget
        if threading.get_native_id() == self._thread:
            self._waited_for_cpu = run_delay()
        return True

    def explore(self, plan: dict[str, Any]) -> Any:
        """Run the race explorer's scenarios (env/sandbox/inside/explorer.py) on the loaded module; its observations."""
        return self._request({"op": "explore", "plan": plan})

    def hammer(self, plan: dict[str, Any]) -> Any:
        """Real threads on the loaded module, no tracer (env/sandbox/inside/explorer.py's ``hammer``); what they left."""
        return self._request({"op": "hammer", "plan": plan})

    # -- teardown ----------------------------------------------------------------------------

    def _exit_description(self) -> str:
        code = self.exit_code(max(0.0, min(1.0, self._deadline - time.monotonic())))
        if stopping():  # the server is shutting down: it killed the run (and its fork server)
            self.result.aborted = self.result.aborted or "the server is shutting down"
            raise InfraFailure("replica_stopping", "the server is shutting down: it stopped the run")
        orphaned = self._child.orphaned() if code is None and isinstance(self._child, ZygoteChild) else ""
        if orphaned:  # the fork server ended and took its children with it: the run ended through no act of the code
            self._kill()
            if orphaned == "closed":
                self.result.aborted = self.result.aborted or "the server closed its sandbox"
                raise InfraFailure("replica_stopping", "the server closed its sandbox (it is shutting down) during the run")
            self.result.aborted = self.result.aborted or "the sandbox's fork server died"
            raise InfraFailure("fork_server_died", "the sandbox's fork server died during the run")
        return "the code's process closed its reply channel" if code is None else self.exit_description(code)

    def exit_code(self, timeout: float) -> int | None:
        """The child's exit status, waiting at most ``timeout`` seconds; None while it runs."""
        return self._child.wait(timeout=timeout)

    def exit_description(self, code: int) -> str:
        """Why the child ended, for the agent; a CPU-limit kill counts as a time-out."""
        self.result.exit_code = code
        if code < 0:
            name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
            hint = {"SIGXCPU": " (CPU time limit)", "SIGXFSZ": " (file size limit)", "SIGKILL": ""}.get(name, "")
            self.result.timed_out = self.result.timed_out or name == "SIGXCPU"  # a spin, caught by the CPU clock
            return f"the code's process was killed by {name}{hint}"
        return f"the code's process exited with status {code}"

    def _abort(self, reason: str) -> RunAborted:
        if not self.result.aborted:
            self.result.aborted = reason
        self._kill()
        return RunAborted(reason)

    def _kill(self) -> None:
        kill_group(self._child.pid)

    def finish(self) -> RunResult:
        if self._finished:
            return self.result
        with phase("reap"):
            return self._finish()

    def _finish(self) -> RunResult:
        self._finished = True
        # The child flushed its output before its last reply, so nothing is lost by killing it
        # now; killing the group also reaps anything the code left behind in it.
        if self._budget is not None:
            self.result.cpu_seconds = round(self._budget.sample(), 2)  # its last reading, while it still lives
        self._kill()
        if self.claim is not None:
            self.claim.release()
        if self.result.aborted:
            code = self._child.wait(timeout=5.0)
            if self.result.exit_code is None:
                self.result.exit_code = code
        else:
            self._child.forget()  # it answered everything; its exit status (SIGKILL) says nothing
        self.result.duration_ms = (time.monotonic() - self._started) * 1000
        _OBSERVERS.tell(self.result.duration_ms / 1000)
        self.result.output, self.result.output_truncated = self._read_output()
        for fd in (self._req_w, self._resp_r, self._out_fd):
            os.close(fd)
        if self._dir is not None:  # the fresh path's directory; the zygote cleans its own
            shutil.rmtree(self._dir, ignore_errors=True)
        return self.result

    def _read_output(self) -> tuple[str, bool]:
        cap = self.sandbox.limits.output_bytes
        size = os.fstat(self._out_fd).st_size
        data = os.pread(self._out_fd, cap, 0)
        text = data.decode("utf-8", "replace")
        if size > cap:
            text += f"\n... [output cut: {size - cap} more bytes not shown]"
        return text, size > cap

    def __enter__(self) -> SandboxRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.finish()
