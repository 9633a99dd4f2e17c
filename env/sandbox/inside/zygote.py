"""The warm path: a pre-imported, single-threaded fork server ("zygote") keeping pre-isolated children ready; the
server's side of it is ``env/sandbox/zygote.py``."""

import marshal
import os
import resource
import sys

from . import LAYERS, framing
from .runs import name_process, prepare, run

# Imported once in the zygote so that no run pays for them; none holds a secret.
ZYGOTE_PRELOAD = (
    "ctypes", "_json", "json", "types", "traceback", "linecache", "threading", "hashlib", "hmac", "shutil",
    "tempfile", "bisect", "math", "typing", "collections", "functools", "itertools", "heapq", "dataclasses", "re",
    "datetime", "decimal", "operator", "importlib", "enum",
)


def _pooled_child(config, own, scratch, explorer, parent):
    """A pre-isolated child: every layer applied (it dies with the zygote, ``parent``), then it waits for a run's
    fds and setup."""
    import signal
    import socket

    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    fd = own.fileno()
    os.closerange(3, fd)  # nothing of the zygote's: its control socket, other children's sockets
    os.closerange(fd + 1, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    os.setsid()  # its own process group: the server kills the whole group
    os.chdir(scratch)
    LAYERS.isolate(config, parent)
    name_process(b"adbg-idle")
    _, fds, _, _ = socket.recv_fds(own, 64, 3)
    own.close()
    if len(fds) != 3:
        return  # the zygote is shutting down
    req_fd, resp_fd, out_fd = fds
    os.dup2(out_fd, 1)
    os.dup2(out_fd, 2)
    os.close(out_fd)
    framing.REQ_FD, framing.RESP_FD = req_fd, resp_fd
    sys.argv = [sys.argv[0], str(req_fd), str(resp_fd)]
    run(framing.recv(), explorer)


def zygote(ctrl_fd, parent):
    """Keep a few pre-isolated children ready and hand each run's fds to one of them.

    The first message on the SOCK_SEQPACKET control socket is the sandbox's configuration; each
    later one is a run, with its three fds attached (SCM_RIGHTS). The reply is the child's pid;
    when a run's child exits, its status follows. This process stays single-threaded, never runs
    submitted code, and removes each child's scratch directory once it has exited.

    It dies with the server (``parent``), and its children with it. A ``stop`` message (the server
    replaces this zygote) leaves the runs in flight to the server; the socket closing without one
    means the server is gone, and every child is killed.
    """
    LAYERS.die_with_parent(parent)
    import collections
    import json
    import select
    import shutil
    import signal
    import socket
    import tempfile

    for name in ZYGOTE_PRELOAD:
        __import__(name)
    ctrl = socket.socket(fileno=ctrl_fd)
    config = marshal.loads(ctrl.recv(1 << 20))
    explorer = prepare(config)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    pool = collections.deque()  # (pid, socket, scratch) of idle, pre-isolated children
    running = {}  # pid -> scratch of children serving a run
    uid = config["layers"].get("uid")
    me = os.getpid()
    abandoned = False

    def fork_pooled():
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        scratch = tempfile.mkdtemp(prefix="adbg-run-", dir=config["tmp_root"])
        if uid is not None:
            os.chown(scratch, uid, uid)
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                ours.close()
                _pooled_child(config, theirs, scratch, explorer, me)
                sys.stdout.flush()
            except BaseException:
                __import__("traceback").print_exc()  # into the run's output, if it got one
                code = 1
            os._exit(code)
        theirs.close()
        pool.append((pid, ours, scratch))

    def reap():
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid in running:
                shutil.rmtree(running.pop(pid), ignore_errors=True)
                ctrl.send(json.dumps({"exit": pid, "status": os.waitstatus_to_exitcode(status)}).encode())
            else:  # an idle child died: drop it, a new one replaces it
                for entry in [e for e in pool if e[0] == pid]:
                    pool.remove(entry)
                    entry[1].close()
                    shutil.rmtree(entry[2], ignore_errors=True)

    def hand_over(fds):
        while True:
            if not pool:
                fork_pooled()
            pid, sock, scratch = pool.popleft()
            try:
                socket.send_fds(sock, [b"run"], fds)
            except OSError:
                continue  # that child is gone; the next one takes the run
            finally:
                sock.close()
            running[pid] = scratch
            return pid

    try:
        while len(pool) < config["pool"]:
            fork_pooled()
        while True:
            ready = select.select([ctrl, wake_r], [], [])[0]
            if wake_r in ready:
                os.read(wake_r, 4096)
                reap()
            if ctrl in ready:
                message, fds, _, _ = socket.recv_fds(ctrl, 65536, 3)
                if not message:
                    abandoned = True  # the server is gone
                    return
                request = marshal.loads(message)
                if request.get("stop"):
                    return
                pid = hand_over(fds)
                for fd in fds:
                    os.close(fd)
                ctrl.send(json.dumps({"id": request["id"], "pid": pid}).encode())
                while len(pool) < config["pool"]:
                    fork_pooled()
    finally:
        for pid, sock, scratch in pool:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            sock.close()
            running[pid] = scratch
        # Runs still in flight end by their server-side deadline at the latest, or now if nobody is left to read them.
        for pid, scratch in running.items():
            if abandoned:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
            shutil.rmtree(scratch, ignore_errors=True)
