"""Nothing outlives the process that started it: fork servers, test hosts and sandbox children die with it.

    popen = spawn(lambda: subprocess.Popen(..., env={**env, **parent_env()}, start_new_session=True))
    die_with_parent()           # first thing in a child started so (a server under the validator)
    exit_cleanly_on_sigterm()   # in a command's main thread: SIGTERM kills our children, then exits normally
    started()                   # at a command's start: die_with_parent, and sweep the scratch of dead processes
    sys.exit(command(main))     # a command's __main__: both, then main(); 143 after a SIGTERM, however main ended

Each child we start asks the kernel for SIGKILL when its parent dies (``PR_SET_PDEATHSIG``, set by the child
itself: ``layers.die_with_parent`` in sandbox processes, ``adbg_host.pytest_host`` in test hosts) and checks
that the parent named in ``ADBG_PARENT`` is still its parent (it may have died before the request). That covers
SIGKILL and crashes, where no code of ours runs. The kernel sends it when the *thread* that forked the child
ends, not the process: a child started from a worker thread that idles out would be killed with it, so every
long-lived child is started on the main thread or on one thread kept for this (``spawn``). The fork servers
also end their own children when their control socket closes, and each fork of theirs asks for the same signal.

SIGTERM (``timeout``, Docker, systemd) would end a command without running ``atexit``: ``exit_cleanly_on_sigterm``
first kills every process group ``spawn`` started and refuses new ones (so worker threads blocked on a run fail
at once instead of holding the exit up), then raises SystemExit so the scratch directory goes too; a process
still alive ``EXIT_GRACE_S`` later exits anyway (the next start sweeps what it left, ``env.scratch.sweep``).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import queue
import signal
import subprocess
import threading
from collections.abc import Callable
from concurrent.futures import Future
from types import FrameType
from typing import TypeVar

from env.scratch import sweep

PARENT = "ADBG_PARENT"  # the environment variable naming the pid a child must die with
PR_SET_PDEATHSIG = 1
EXIT_GRACE_S = 10.0
SIGTERM_EXIT = 128 + signal.SIGTERM  # what a shell reports for a process ended by SIGTERM
T = TypeVar("T")


class Stopping(OSError):
    """This process is shutting down: it starts no more children."""


_lock = threading.Lock()
_children: dict[int, tuple[subprocess.Popen, bool]] = {}  # pid -> (process, leads its own group) to kill on SIGTERM
_stopping = False
_terminated = False
_thread: threading.Thread | None = None
_thread_pid = 0
_jobs: queue.SimpleQueue[tuple[Callable[[], object], Future]] = queue.SimpleQueue()


def parent_env() -> dict[str, str]:
    return {PARENT: str(os.getpid())}


def _serve() -> None:
    while True:
        job, future = _jobs.get()
        try:
            future.set_result(job())
        except BaseException as exc:
            future.set_exception(exc)


def _on_spawner(job: Callable[[], T]) -> T:
    global _thread, _thread_pid
    if threading.current_thread() is threading.main_thread() or threading.current_thread() is _thread:
        return job()  # both live as long as the process
    with _lock:
        if _thread is None or _thread_pid != os.getpid():  # a forked child has no copy of the thread
            _thread = threading.Thread(target=_serve, name="adbg-spawner", daemon=True)
            _thread_pid = os.getpid()
            _thread.start()
    future: Future[T] = Future()
    _jobs.put((job, future))
    return future.result()


def spawn(start: Callable[[], subprocess.Popen]) -> subprocess.Popen:
    """Run ``start`` (it makes a Popen in a session of its own, with ``parent_env()``) where PDEATHSIG stays
    meaningful, and remember its process group for ``stop_children``."""
    if _stopping:
        raise Stopping("this process is shutting down")
    popen = _on_spawner(start)
    _remember(popen, group=True)
    return popen


def adopt(popen: subprocess.Popen) -> None:
    """Kill ``popen`` (not its group) with ``stop_children`` too: a child started elsewhere (the validator's server)."""
    _remember(popen, group=False)


def _remember(popen: subprocess.Popen, group: bool) -> None:
    with _lock:
        _children[popen.pid] = (popen, group)
        for pid in [pid for pid, (p, _) in _children.items() if p.returncode is not None]:
            del _children[pid]  # reaped by its owner: its pid may be reused


def stopping() -> bool:
    """This process is shutting down (its children were killed, or are being)."""
    return _stopping


def stop_children() -> None:
    """SIGKILL every child ``spawn`` started (its whole group) or ``adopt`` took that is not yet reaped; start no more."""
    global _stopping
    _stopping = True
    with _lock:
        alive = [(pid, group) for pid, (p, group) in _children.items() if p.returncode is None]
    for pid, group in alive:
        with contextlib.suppress(OSError):
            if group:
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)


def die_with_parent() -> None:
    """In a child whose environment has ``ADBG_PARENT``: SIGKILL when that parent dies; exit now if it already has."""
    expected = os.environ.pop(PARENT, "")
    if not expected.isdigit():
        return
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != int(expected):  # it died before the request took effect
        os._exit(1)


def die_with_caller() -> Callable[[], None]:
    """A ``preexec_fn`` for ``subprocess.run`` of a program we do not write (uv): SIGKILL when this process dies. The
    calling thread waits in ``run`` until the program ends, so the signal following that thread is right here. (It
    forks instead of vfork: about 5 ms, fine for a build, too slow for a sandbox run's start.)"""
    parent = os.getpid()
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # resolved before the fork

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return preexec


def exit_cleanly_on_sigterm(code: int = SIGTERM_EXIT) -> None:
    """SIGTERM: kill our children, exit through SystemExit (atexit runs), and for certain within ``EXIT_GRACE_S``."""

    def stop(signum: int, frame: FrameType | None) -> None:
        global _terminated
        _terminated = True
        stop_children()
        timer = threading.Timer(EXIT_GRACE_S, os._exit, (code,))
        timer.daemon = True
        timer.start()
        raise SystemExit(code)

    if threading.current_thread() is threading.main_thread():  # a handler can only be set there
        signal.signal(signal.SIGTERM, stop)


def started() -> None:
    """At the start of a command (the server, env.authoring, env.eval, the validator): die with the parent that asked
    for it, and remove the scratch folders of processes killed outright (``env.scratch.sweep``)."""
    die_with_parent()
    sweep()


def command(main: Callable[[], int]) -> int:
    """A command's whole run (``sys.exit(command(main))`` in its ``__main__``): ``started``, the SIGTERM handler, then
    ``main``; its exit status, or ``SIGTERM_EXIT`` once a SIGTERM came, whatever ``main`` did next. The SystemExit the
    handler raises may surface as another exception (a cleanup on its way up failing because the children are gone),
    or be caught and turned into "checks failed": the status says what happened, not what followed."""
    started()
    exit_cleanly_on_sigterm()
    try:
        code = main()
    except BaseException:
        if _terminated:
            return SIGTERM_EXIT
        raise
    return SIGTERM_EXIT if _terminated else code
