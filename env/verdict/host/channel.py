"""The trusted test process's end of a sandbox run: requests to the project's process, its replies, the deadline.

    channel = Channel(req_w, resp_r, status_r, pid, deadline, wall_seconds, reply_bytes, deadline_fd)   # from the server
    channel.op("getattr", args, kwargs)                                                   # one operation, its reply

The server starts the sandbox run, reads its first ("ready") reply and hands the conversation over; it watches the
child (only its parent can learn how it ended, and writes that to ``status_r``'s pipe) and finishes the run (kills
what is left, reads the output) once this process has ended. Every reason a run stops is worded as the server's. The protocol is the server's
(``env.sandbox.runner.SandboxRun``): length-prefixed ``marshal`` requests, length-prefixed JSON replies that must
carry the request's random id and stay under the reply limit. Standard library only.
"""

from __future__ import annotations

import json
import marshal
import os
import secrets
import select
import signal
import struct
import threading
import time
from typing import Any


class RunAborted(Exception):
    """The project's process can answer no more (time limit, a malformed reply, it ended)."""


class RemoteError(Exception):
    """The project's code raised: its type, message, traceback and the raw reply (class chain, arguments)."""

    def __init__(self, exc_type: str, message: str, traceback_text: str, reply: dict[str, Any]):
        super().__init__(f"{exc_type}: {message}")
        self.exc_type, self.message, self.traceback_text, self.reply = exc_type, message, traceback_text, reply


class Channel:
    def __init__(
        self, req_w: int, resp_r: int, status_r: int, pid: int, deadline: float, wall_seconds: float, reply_bytes: int, deadline_fd: int = -1,
    ):
        self.req_w, self.resp_r, self.status_r, self.pid = req_w, resp_r, status_r, pid
        self.deadline, self.wall_seconds, self.reply_bytes = deadline, wall_seconds, reply_bytes
        self.deadline_fd = deadline_fd  # where the server writes the deadline it moved for a starved run (-1: none)
        self.aborted = ""
        self.timed_out = False
        self._buffer = b""
        self._lock = threading.RLock()
        self.lock = self._lock  # held across one operation and its callbacks; a caller may hold it around op() too
        self._awaiting: set[int] = set()  # the operations this process waits for, nested by callbacks
        self._early: dict[int, dict[str, Any]] = {}  # their replies that came before they were next
        self._random, self._random_at = b"", 0  # unguessable bytes for request ids, read from the OS a page at a time

    def op(self, name: str, args: tuple[Any, ...], kwargs: Any) -> dict[str, Any]:
        """One operation; its reply (``ok``: the value, ``w``: warnings it raised). The project's exception raises
        :class:`RemoteError`. While it runs, the project may call the test's functions back (``on_callback``)."""
        with self._lock:  # the test's threads take turns: one conversation, one operation (and its callbacks) at a time
            if self.aborted:
                raise RunAborted(f"not run: {self.aborted}")
            if self._random_at + 8 > len(self._random):
                self._random, self._random_at = secrets.token_bytes(4096), 0
            rid = (int.from_bytes(self._random[self._random_at : self._random_at + 8], "big") >> 2) + 1  # 62 bits, never 0
            self._random_at += 8
            self._send({"id": rid, "op": "op", "name": name, "args": args, "kwargs": kwargs})
            return self._receive(rid)

    def on_callback(self, request: dict[str, Any]) -> dict[str, Any]:
        """Run a test function the project called (``cb``: its number, ``a``/``k``: its arguments); the reply to send."""
        raise RunAborted("the project called back a function this run never passed it")

    def _send(self, message: dict[str, Any]) -> None:
        data = marshal.dumps(message)
        data = len(data).to_bytes(4, "big") + data
        try:
            while data:
                data = data[os.write(self.req_w, data) :]
        except OSError:
            raise self._abort(self._how_it_ended()) from None

    def _read_exact(self, n: int) -> bytes:
        while len(self._buffer) < n:
            # CLOCK_MONOTONIC, the server's clock too, read so that a test freezing time (freezegun patches
            # time.monotonic) does not move the deadline
            remaining = self.deadline - time.clock_gettime(time.CLOCK_MONOTONIC)
            if remaining <= 0 and self._moved():
                continue
            if remaining <= 0:
                self.timed_out = True
                raise self._abort(f"time limit of {self.wall_seconds:g} s exceeded")
            ready, _, _ = select.select([self.resp_r], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(self.resp_r, max(65536, n - len(self._buffer)))
            if not chunk:
                raise self._abort(self._how_it_ended())
            self._buffer += chunk
        data, self._buffer = self._buffer[:n], self._buffer[n:]
        return data

    def _moved(self) -> bool:
        """Whether the server moved the run's deadline (its processes waited for a CPU that others took: the
        machine's load is not the run's time); the deadline is then the moved one."""
        if self.deadline_fd < 0:
            return False
        try:
            (moved,) = struct.unpack("d", os.pread(self.deadline_fd, 8, 0))
        except (OSError, struct.error):
            return False
        if moved <= self.deadline:
            return False
        self.deadline = moved
        return True

    def _receive(self, rid: int) -> dict[str, Any]:
        # The project's threads may answer out of order: a reply to an operation waiting further up this stack (a
        # callback's, run while this one waits) is kept for it; any other id is a protocol error.
        self._awaiting.add(rid)
        try:
            while rid not in self._early:
                size = int.from_bytes(self._read_exact(4), "big")
                if size > self.reply_bytes:
                    raise self._abort(f"a reply of {size} bytes exceeds the {self.reply_bytes}-byte limit")
                try:
                    # surrogatepass: the child writes lone surrogates (a hypothesis-drawn str) as it got them
                    reply = json.loads(self._read_exact(size).decode("utf-8", "surrogatepass"))
                except (ValueError, RecursionError):
                    raise self._abort("the code's process sent a malformed reply") from None
                if isinstance(reply, dict) and "cb" in reply and "id" not in reply:
                    self._send(self.on_callback(reply))  # then keep waiting for this request's own reply
                    continue
                if not isinstance(reply, dict) or reply.get("id") not in self._awaiting:
                    raise self._abort("the code's process sent a reply that does not match the request")
                self._early[reply["id"]] = reply
        finally:
            self._awaiting.discard(rid)
        reply = self._early.pop(rid)
        if "exc" in reply:
            raise RemoteError(str(reply.get("exc")), str(reply.get("msg")), str(reply.get("tb")), reply)
        return reply

    def _how_it_ended(self) -> str:
        """The server's account of the child's end (it writes it once the child is gone), else the plain fact."""
        if self.status_r >= 0:
            ready, _, _ = select.select([self.status_r], [], [], 2.0)
            if ready:
                told = os.read(self.status_r, 1000).decode("utf-8", "replace")
                if told:
                    return told
        return "the code's process closed its reply channel"

    def _abort(self, reason: str) -> RunAborted:
        if not self.aborted:
            self.aborted = reason
            try:  # stop it now, not when the server finishes the run: it may be spinning
                os.killpg(self.pid, signal.SIGKILL)
            except OSError:
                pass
        return RunAborted(reason)
