"""The shell launcher: isolates itself, then runs one ``/bin/bash -c COMMAND`` in the workspace.

``env.sandbox.shell`` starts this file as ``python -s -P -S -B -X utf8 shell_child.py SETUP_FD STATUS_FD PARENT``
with the workspace as its working directory, stdin on /dev/null and stdout/stderr on one pipe that
the parent reads and caps. The setup (command, environment, layers, limits, Landlock paths) arrives as
``marshal`` data on SETUP_FD, written by the trusted parent only; the launcher answers on STATUS_FD
with ``P<pid> <pidns> <quota>\n`` once the command's process exists, ``E<message>`` if a layer failed, or
``O`` if the workspace does not fit in its quota (then the command never runs). Where the launcher holds
the workspace's quota (``shell_quota.py``, in its mount namespace: ``<quota>`` is 1), one ``Q...`` record
follows once the command has ended and its changes are copied back, or not. A command the server runs for itself
(``trace_report``'s tracer) may get a record pipe too: it is fd 3 of bash and its programs, read apart from the
output.

The isolation layers are the sandbox child's own: ``layers.py``, compiled from its path by the
parent once and executed here as a module (not copied, and not compiled again on every call).
On top of them, a PID namespace. Its pid 1 is a minimal init forked from the launcher, with
PR_SET_PDEATHSIG: it forks bash and exits with bash's status, and when pid 1 exits (or dies with the
launcher at the deadline) the kernel kills everything left in the namespace: background jobs,
``setsid`` escapes and daemons included. Bash itself is not pid 1: ``bash -c`` execs a lone command
in place, and pid 1 ignores default-action signals from inside its namespace, so ``yes`` would never
get its SIGPIPE. Standard library only: this runs on every command.
"""

import marshal
import os
import signal
import sys

CLONE_NEWPID = 0x20000000
PR_SET_PDEATHSIG, PR_SET_NAME, PR_SET_NO_NEW_PRIVS = 1, 15, 38
RECORD_FD = 3  # a server-owned command's record pipe (trace_report's call record): never stdout or stderr


def _read_all(fd):
    chunks = []
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


def _module(name, code):
    """A module from its code object, compiled by the parent from one of its files (no compile here)."""
    module = type(sys)(name)
    module.__file__ = code.co_filename
    exec(code, module.__dict__)
    return module


class Quota:
    """The workspace's quota, where the kernel holds it (``shell_quota.py``): set up, then settled after the command."""

    def __init__(self, setup):
        self.spec = setup.get("quota")  # None: the server counts instead (no mount namespace on this host)
        self.code = _module("_adbg_shell_quota", marshal.loads(setup["quota_code"])) if self.spec else None
        self.real = self.marker = None

    def enter(self, ctypes, libc):
        spec = self.spec
        self.real, self.marker = self.code.enter(ctypes, libc, spec["workspace"], spec["tmp"], spec["bytes"], spec["files"])

    def paths(self):
        """What the launcher itself must reach after Landlock: the real workspace, to copy the changes back into."""
        return ["/proc/self/fd/%d" % self.real] if self.real is not None else []

    def leave(self):
        spec = self.spec
        if self.real is None:
            return b""
        try:
            return self.code.leave(self.real, spec["workspace"], spec["tmp"], spec["bytes"], spec["files"], self.marker)
        except BaseException as exc:  # reported, never raised: the command has run
            return ("Qerror " + type(exc).__name__ + ": " + str(exc)).encode("utf-8", "replace")[:2000]


def _isolate(iso, setup, parent, quota):
    """Every layer the host offers, with ``iso`` (layers.py), in the order the kernel needs; returns whether a PID
    namespace exists. With ``quota``'s spec, the workspace's quota is mounted in the launcher's own namespaces."""
    os.umask(0o022)  # what the command creates stays readable by the server
    os.nice(setup["nice"])
    layers = setup["layers"]
    was_root = os.geteuid() == 0
    dropped = layers.get("uid") is not None and was_root
    ctypes, libc = iso.load_libc()  # imported while the standard library is surely readable
    if dropped:
        iso.drop_uid(layers["uid"])
    iso.die_with_parent(parent)  # after the uid change, which would clear it
    libc.prctl(PR_SET_NAME, b"adbg-shell", 0, 0, 0)
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    if layers.get("netns"):
        iso.unshare_network(ctypes, libc, mount_ns=bool(quota.spec))  # no run tmpfs: the workspace is the agent's to change
        if quota.spec:
            quota.enter(ctypes, libc)
    # Inside our own user namespace this needs no privilege on the host; it must come before the
    # seccomp filter, which denies unshare.
    pid_ns = bool(setup.get("pid_namespace", True)) and libc.unshare(CLONE_NEWPID) == 0
    if layers.get("landlock"):
        iso.landlock(ctypes, libc, layers["landlock"], setup["read_only"], setup["read_write"] + quota.paths())
    if layers.get("seccomp"):
        iso.seccomp(ctypes, libc, layers["seccomp"])
    # RLIMIT_NPROC only binds a uid other than root's, and counts only this run's processes once they
    # live in their own user namespace; outside one it would count every process of the uid (the
    # server's threads, other runs). The trusted side adds a pids cgroup where it can make one.
    counted = (dropped or not was_root) and bool(layers.get("netns"))
    iso.apply_rlimits(setup["limits"], not counted)
    return pid_ns, libc


def _exec_bash(setup, libc):
    """In a forked child; never returns."""
    try:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        # Python ignores these two; the command's programs expect the defaults (``yes | head`` ends).
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        os.execve("/bin/bash", ["bash", "-c", setup["command"]], setup["env"])
    except BaseException as exc:  # reported in the command's output
        os.write(2, ("run_bash: could not start bash: " + str(exc) + "\n").encode("utf-8", "replace"))
    os._exit(127)


def _status(status):
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code  # killed by signal N: 128 + N, as a shell reports it


def _init(setup, libc):
    """Pid 1 of the command's namespace: runs bash, reaps orphans, exits with bash's status; never returns."""
    try:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # the launcher killed: so is the namespace
        bash = os.fork()
        if bash == 0:
            _exec_bash(setup, libc)
        while True:
            pid, status = os.waitpid(-1, 0)
            if pid == bash:
                os._exit(_status(status))
    except BaseException as exc:
        os.write(2, ("run_bash: the namespace's init failed: " + str(exc) + "\n").encode("utf-8", "replace"))
    os._exit(126)


def _kill_own_domain():
    """Without a PID namespace: SIGKILL every process of this sandbox, ``setsid`` escapes included.

    ``kill(-1)`` is confined by Landlock's signal scope (ABI 6) to this launcher's own domain, which
    every process the command started inherited. Only where the scope is shown to hold: the server,
    outside the domain, must be out of reach of a signal, else nothing is sent."""
    try:
        os.kill(os.getppid(), 0)
        return  # no signal scope here: kill(-1) would reach the server and other runs
    except PermissionError:
        pass
    except OSError:
        return
    try:
        os.kill(-1, signal.SIGKILL)
    except OSError:
        pass


def _record_on_fd3(setup, status_fd):
    """A server-owned command's record pipe (``ShellRunner.run(record=True)``) on fd 3, which bash and its programs
    inherit; its own number closed. Returns the status pipe's number, moved first if it was 3."""
    record = setup.get("record_fd")
    if record is None:
        return status_fd
    if status_fd == RECORD_FD:
        status_fd = os.dup(status_fd)  # not inheritable, like the original
        os.close(RECORD_FD)
    if record != RECORD_FD:
        os.dup2(record, RECORD_FD)  # inheritable: the command's programs get it
        os.close(record)
    else:
        os.set_inheritable(RECORD_FD, True)
    return status_fd


def main():
    quota = None
    setup_fd, status_fd, parent = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])  # parent: env.sandbox.launch
    os.set_inheritable(status_fd, False)  # bash and its children never see the status pipe
    try:
        setup = marshal.loads(_read_all(setup_fd))
        status_fd = _record_on_fd3(setup, status_fd)
        quota = Quota(setup)
        pid_ns, libc = _isolate(_module("_adbg_layers", marshal.loads(setup["layers_code"])), setup, parent, quota)
        pid = os.fork()
    except BaseException as exc:  # fail closed: the command does not run
        full = quota is not None and quota.code is not None and isinstance(exc, quota.code.Full)
        os.write(status_fd, b"O" if full else ("E" + type(exc).__name__ + ": " + str(exc)).encode("utf-8", "replace")[:4000])
        os._exit(125)
    if pid == 0:
        if pid_ns:
            _init(setup, libc)
        _exec_bash(setup, libc)
    # At the deadline the parent asks with SIGTERM, before it kills the process group: the command ends here (with
    # its namespace's pid 1, or this sandbox's Landlock domain), so that its changes can still be copied back.
    running = [True]

    def stop(*_):
        if not running[0]:
            return  # reaped: its pid may belong to another process by now
        try:
            os.kill(pid, signal.SIGKILL) if pid_ns else _kill_own_domain()
        except OSError:
            pass

    signal.signal(signal.SIGTERM, stop)
    os.write(status_fd, b"P%d %d %d\n" % (pid, int(pid_ns), int(bool(quota.spec))))
    if not quota.spec:
        os.close(status_fd)
    code = _status(os.waitpid(pid, 0)[1])
    running[0] = False
    if not pid_ns:
        _kill_own_domain()
    if quota.spec:  # every process of the command is gone: its tmpfs holds what it left
        os.write(status_fd, quota.leave())
        os.close(status_fd)
    os._exit(code)


if __name__ == "__main__":
    main()
