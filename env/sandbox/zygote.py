"""The warm execution path: a pre-imported fork server that starts each sandbox child in ~1 ms.

    zygote = Zygote(config, max_runs=2000)
    child = zygote.spawn(req_r, resp_w, out_fd)             # -> ZygoteChild(pid)
    child.wait(timeout=1.0)                                 # exit code, or None if not yet known

The zygote is ``child.py --zygote``: started with an empty environment, it imports what runs
need, stays single-threaded, and keeps a few children forked and already isolated (every layer
is applied in the child, after the fork); a run's pipes go to one of them. It is replaced after
``max_runs`` children or on any anomaly (it died, or a request went unanswered). Safe to use
from many threads.
"""

from __future__ import annotations

import json
import marshal
import socket
import subprocess
import threading
from concurrent.futures import Future

from env.sandbox.launch import CHILD, start

SPAWN_TIMEOUT_S = 10.0
CLOSE_GRACE_S = 5.0  # Zygote.close: how long runs in flight may keep the zygote before it is killed (and they with it)


class ZygoteError(RuntimeError):
    pass


class ZygoteChild:
    """A child forked by the zygote: the zygote reaps it and reports its exit status."""

    def __init__(self, pid: int, process: _ZygoteProcess):
        self.pid = pid
        self._process = process
        self.returncode: int | None = None

    def wait(self, timeout: float | None) -> int | None:
        if self.returncode is None:
            self.returncode = self._process.exit_code(self.pid, timeout)
        return self.returncode

    def orphaned(self) -> str:
        """Why the child died with its zygote, when it did ("" otherwise): the zygote crashed, or was killed as the
        server closed its sandbox, before it reported the child's exit."""
        if self.returncode is not None:
            return ""
        return "crashed" if self._process.crashed else "closed" if self._process.killed else ""

    def forget(self) -> None:
        """The run no longer needs the exit status (it killed a child that answered everything)."""
        if self.returncode is None:
            self._process.forget(self.pid)


class _ZygoteProcess:
    """One zygote: its process, control socket and reader thread."""

    def __init__(self, config: dict, hash_seed: int | None = None) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.proc = start(
            CHILD, "--zygote", str(theirs.fileno()),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={"MALLOC_ARENA_MAX": "2"}, pass_fds=(theirs.fileno(),),
            hash_seed=hash_seed,
        )
        theirs.close()
        self.sock = ours
        self.sock.send(marshal.dumps(config))  # what every child applies to itself
        self.runs = 0
        self.alive = True
        self.stopped = False  # asked to stop (replaced or closed): its end is ours, not a crash
        self.crashed = False  # it ended without being asked: its children died with it
        self.killed = False  # stopped, its runs in flight outlived the grace, and it was killed with them
        self._send_lock = threading.Lock()
        self._state = threading.Condition()
        self._pending: dict[int, Future[int]] = {}
        self._exits: dict[int, int] = {}
        self._forgotten: set[int] = set()
        self._next_id = 0
        threading.Thread(target=self._read, name="adbg-zygote-reader", daemon=True).start()

    def _read(self) -> None:
        try:
            while True:
                data = self.sock.recv(65536)
                if not data:
                    break
                message = json.loads(data)
                with self._state:
                    if "exit" in message:
                        pid = int(message["exit"])
                        if pid in self._forgotten:
                            self._forgotten.discard(pid)
                        else:
                            self._exits[pid] = int(message["status"])
                            self._state.notify_all()
                    else:
                        future = self._pending.pop(int(message["id"]), None)
                        if future is not None:
                            future.set_result(int(message["pid"]))
        except (OSError, ValueError):
            pass
        with self._state:
            self.alive = False
            self.crashed = not self.stopped
            for future in self._pending.values():
                future.set_exception(ZygoteError("the zygote exited"))
            self._pending.clear()
            self._state.notify_all()

    def spawn(self, fds: tuple[int, int, int]) -> ZygoteChild:
        future: Future[int] = Future()
        with self._state:
            if not self.alive:
                raise ZygoteError("the zygote is not running")
            self._next_id += 1
            request_id = self._next_id
            self._pending[request_id] = future
        with self._send_lock:
            socket.send_fds(self.sock, [marshal.dumps({"id": request_id})], list(fds))
            self.runs += 1
        pid = future.result(timeout=SPAWN_TIMEOUT_S)
        return ZygoteChild(pid, self)

    def forget(self, pid: int) -> None:
        with self._state:
            if self._exits.pop(pid, None) is None:
                self._forgotten.add(pid)

    def exit_code(self, pid: int, timeout: float | None) -> int | None:
        with self._state:
            self._state.wait_for(lambda: pid in self._exits or not self.alive, timeout)
            return self._exits.pop(pid, None)

    def stop(self, grace: float | None = None) -> None:
        """Ask the zygote to exit once its runs in flight are over; after ``grace`` seconds (None: never), kill it,
        and with it those runs (its children die with it)."""
        self.stopped = True
        self.alive = False
        try:
            # "stop": the runs in flight are still ours (they kill their children); a bare EOF would mean we are gone.
            with self._send_lock:
                self.sock.send(marshal.dumps({"stop": 1}))
            # shutdown, not just close: it wakes our blocked reader and the zygote sees EOF and exits.
            self.sock.shutdown(socket.SHUT_RDWR)
            self.sock.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self.killed = True
            self.proc.kill()
            self.proc.wait()


class Zygote:
    """Hands out children from a healthy zygote, replacing it after ``max_runs`` or a failure.

    ``config`` is what every child applies to itself before it is handed a run (isolation layers,
    limits, read-only paths, where scratch directories go, how many children to keep ready).
    ``hash_seed``: the string-hash seed of the zygote's interpreter, which its children share (None: one it draws).
    """

    def __init__(self, config: dict, max_runs: int = 2000, hash_seed: int | None = None):
        self.config = config
        self.max_runs = max_runs
        self.hash_seed = hash_seed
        self._lock = threading.Lock()
        self._current: _ZygoteProcess | None = None
        self.restarts = 0

    def _get(self) -> _ZygoteProcess:
        with self._lock:
            current = self._current
            if current is None or not current.alive or current.runs >= self.max_runs:
                if current is not None:  # replaced: its runs in flight finish (their own deadlines kill them)
                    threading.Thread(target=current.stop, daemon=True).start()
                    self.restarts += 1
                current = self._current = _ZygoteProcess(self.config, self.hash_seed)
            return current

    def retire(self) -> None:
        """Let the zygote go, in the background: its runs in flight finish (their own deadlines kill them); a later
        ``spawn`` starts another."""
        with self._lock:
            current, self._current = self._current, None
        if current is not None:
            threading.Thread(target=current.stop, daemon=True).start()

    def spawn(self, req_r: int, resp_w: int, out_fd: int) -> ZygoteChild:
        process = self._get()
        try:
            return process.spawn((req_r, resp_w, out_fd))
        except (OSError, ZygoteError, TimeoutError) as exc:
            process.alive = False  # an anomaly: the next run gets a fresh zygote
            raise ZygoteError(f"the zygote failed to start a run: {exc}") from exc

    @property
    def pid(self) -> int | None:
        return self._current.proc.pid if self._current else None

    def close(self) -> None:
        with self._lock:
            if self._current is not None:
                self._current.stop(CLOSE_GRACE_S)
                self._current = None
