"""The isolation layers a sandbox process applies to itself before it runs anything untrusted.

Kept apart from ``child.py`` so that the sandbox child and run_bash's launcher (``shell_child.py``)
apply the same code, each in its own order. Both run under ``python -s -P -S``, with no ``env``
package to import from, so this file is never imported by name: ``child.py`` loads it by its path
at start-up (before the zygote forks, while the server's tree is still readable) and the launcher
executes the code the trusted side compiled from it. Standard library only; ``ctypes`` is imported
only when a layer needs it.
"""

import os
import resource
import sys


def apply_rlimits(limits, was_root):
    """Memory, file size, open files, no core, CPU time; processes where the server is not root."""
    pairs = (
        (resource.RLIMIT_AS, limits["memory_bytes"]),
        (resource.RLIMIT_FSIZE, limits["file_bytes"]),
        (resource.RLIMIT_NOFILE, limits["open_files"]),
        (resource.RLIMIT_CORE, 0),
    )
    for which, value in pairs:
        resource.setrlimit(which, (value, value))
    # SIGXCPU at the soft limit names the cause; the hard limit a second later is a SIGKILL.
    resource.setrlimit(resource.RLIMIT_CPU, (limits["cpu_seconds"], limits["cpu_seconds"] + 1))
    # RLIMIT_NPROC counts every process and thread of the real uid, the server's included; the
    # kernel skips it for root, but not once a user namespace has dropped root's capabilities,
    # so it is applied only where the server itself is not root.
    if not was_root:
        resource.setrlimit(resource.RLIMIT_NPROC, (limits["processes"], limits["processes"]))


def load_libc():
    """ctypes and the C library, for the system calls the os module does not offer."""
    import ctypes

    return ctypes, ctypes.CDLL(None, use_errno=True)


def unshare_network(ctypes, libc, tmpfs_bytes=0, tmpfs_files=0, mount_ns=False):
    # A fresh user namespace lets an unprivileged process own a fresh network namespace
    # whose only interface (loopback) is down: no route to anything. With tmpfs_bytes, also a
    # mount namespace in which the run's directory becomes a tmpfs of that size (and of at most
    # tmpfs_files inodes): a disk-fill attack fills the tmpfs, not the host's disk or memory. With
    # mount_ns, the mount namespace alone (run_bash's launcher mounts its workspace quota there).
    clone_newns, clone_newuser, clone_newnet = 0x00020000, 0x10000000, 0x40000000
    uid, gid = os.geteuid(), os.getegid()
    flags = clone_newuser | clone_newnet | (clone_newns if tmpfs_bytes or mount_ns else 0)
    if libc.unshare(flags) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWUSER|CLONE_NEWNET) failed")
    if not (tmpfs_bytes or mount_ns):
        return
    # Map our own ids so that files on the new tmpfs have an owner.
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open("/proc/self/" + name, "w") as handle:
            handle.write(text)
    if not tmpfs_bytes:
        return
    cwd = os.getcwd()
    ms_nosuid, ms_nodev, ms_noexec = 2, 4, 8
    # the run directory's own inode is one of them
    options = f"size={tmpfs_bytes},mode=0700".encode() + (f",nr_inodes={tmpfs_files + 1}".encode() if tmpfs_files else b"")
    if libc.mount(b"tmpfs", cwd.encode(), b"tmpfs", ms_nosuid | ms_nodev | ms_noexec, options) != 0:
        raise OSError(ctypes.get_errno(), "mounting the run's tmpfs failed")
    os.chdir(cwd)  # enter the new mount


def landlock(ctypes, libc, abi, read_only, read_write):
    # Syscall numbers are the same on x86_64 and aarch64 (generic table).
    create_ruleset, add_rule, restrict_self = 444, 445, 446
    fs_bits = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1}
    handled_fs = fs_bits.get(abi, (1 << 16) - 1)  # ABI >= 5 adds IOCTL_DEV
    handled_net = 0b11 if abi >= 4 else 0  # BIND_TCP | CONNECT_TCP, with no rule: no TCP
    scoped = 0b11 if abi >= 6 else 0  # abstract unix sockets and signals stay inside

    class RulesetAttr(ctypes.Structure):
        _fields_ = [
            ("handled_access_fs", ctypes.c_uint64),
            ("handled_access_net", ctypes.c_uint64),
            ("scoped", ctypes.c_uint64),
        ]

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    size = 8 if abi < 4 else (16 if abi < 6 else 24)
    attr = RulesetAttr(handled_fs, handled_net, scoped)
    ruleset = libc.syscall(create_ruleset, ctypes.byref(attr), size, 0)
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    execute, read_file, read_dir = 1 << 0, 1 << 2, 1 << 3
    ro_dir = execute | read_file | read_dir
    # Own directory: files and subdirectories, but no symlinks, devices, fifos or sockets.
    rw_dir = ro_dir | (1 << 1) | (1 << 4) | (1 << 5) | (1 << 7) | (1 << 8)
    if abi >= 3:
        rw_dir |= 1 << 14  # TRUNCATE
    for paths, access in ((read_only, ro_dir), (read_write, rw_dir)):
        for path in paths:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                allowed = access if os.path.isdir(path) else access & (execute | read_file | (1 << 1))
                rule = PathBeneath(allowed & handled_fs, fd)
                if libc.syscall(add_rule, ruleset, 1, ctypes.byref(rule), 0) != 0:
                    raise OSError(ctypes.get_errno(), "landlock_add_rule failed for " + path)
            finally:
                os.close(fd)
    if libc.syscall(restrict_self, ruleset, 0) != 0:
        raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    os.close(ruleset)


def seccomp(ctypes, libc, bpf):
    # The filter was compiled once by the server (libseccomp); loading raw BPF needs no library.
    # Its signal rules name a placeholder pid: this process's own, from here on (env.sandbox.seccomp).
    placeholder, own = (0x7AD5_EC01).to_bytes(4, sys.byteorder), os.getpid().to_bytes(4, sys.byteorder)
    bpf = b"".join(bpf[i:i + 4] + (own if bpf[i + 4:i + 8] == placeholder else bpf[i + 4:i + 8]) for i in range(0, len(bpf), 8))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    program = ctypes.create_string_buffer(bpf, len(bpf))
    fprog = SockFprog(len(bpf) // 8, ctypes.cast(program, ctypes.c_void_p))
    pr_set_seccomp, seccomp_mode_filter = 22, 2
    if libc.prctl(pr_set_seccomp, seccomp_mode_filter, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "loading the seccomp filter failed")


def drop_uid(uid):
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def parent_from_argv():
    """The pid this process must die with: the last argument ``env.sandbox.launch.start`` adds, removed from argv."""
    return int(sys.argv.pop())


def die_with_parent(parent):
    """SIGKILL this process when ``parent`` dies (PR_SET_PDEATHSIG); exit now if it already has. A change of uid
    clears the request: call it after ``drop_uid``."""
    if parent is None:
        return
    load_libc()[1].prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
    if os.getppid() != parent:
        os._exit(1)


def isolate(setup, parent=None):
    """The sandbox child's layers, in this order: the uid before the user namespace (inside it, the uid could no
    longer be changed), seccomp after the namespaces (its filter denies unshare and mount), rlimits last.
    ``parent``: the pid this process dies with (after the uid change, which would clear it; before seccomp)."""
    # Below the server in CPU priority, so a busy sandbox never slows the API down.
    os.nice(setup["nice"])
    was_root = os.geteuid() == 0
    layers = setup["layers"]
    if layers.get("uid") is not None and was_root:
        drop_uid(layers["uid"])
    die_with_parent(parent)
    ctypes, libc = load_libc()
    pr_set_no_new_privs = 38
    libc.prctl(pr_set_no_new_privs, 1, 0, 0, 0)
    if layers.get("netns"):
        unshare_network(ctypes, libc, layers.get("tmpfs", 0), layers.get("tmpfs_files", 0))
    if layers.get("landlock"):
        landlock(ctypes, libc, layers["landlock"], setup["read_only"], [os.getcwd(), *setup.get("read_write", ())])
    if layers.get("seccomp"):
        seccomp(ctypes, libc, layers["seccomp"])
    apply_rlimits(setup["limits"], was_root and layers.get("uid") is None)


# ---------------------------------------------------------------------------------------------
# the start-up probe: which layers this host lets a child apply (env.sandbox.isolation reads the report)


def probe_uid(uid):
    """In a throw-away fork: can ``uid`` still read the standard library it will import from?"""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            drop_uid(uid)
            stdlib = os.path.dirname(os.__file__)
            os.listdir(stdlib)
            with open(os.path.join(stdlib, "bisect.py"), "rb"):
                code = 0
        finally:
            os._exit(code)
    return os.waitpid(pid, 0)[1] == 0


def probe(bpf_path=None, uid=None):
    """Report which layers this host lets a child apply (see env.sandbox.isolation)."""
    import json  # before Landlock shuts the standard library away
    import socket

    report = {"landlock_abi": 0, "netns": False, "tmpfs": False, "landlock": False, "seccomp": False, "uid": False, "errors": []}
    if uid is not None and os.geteuid() == 0:
        report["uid"] = probe_uid(uid)
        if not report["uid"]:
            report["errors"].append(f"uid: uid {uid} cannot read the Python standard library here")
    ctypes, libc = load_libc()
    bpf = None
    if bpf_path:  # read before the tmpfs mount hides it
        with open(bpf_path, "rb") as handle:
            bpf = handle.read()
    report["landlock_abi"] = max(0, libc.syscall(444, None, 0, 1))  # LANDLOCK_CREATE_RULESET_VERSION
    libc.prctl(38, 1, 0, 0, 0)
    try:
        unshare_network(ctypes, libc, 1024 * 1024)
        report["netns"] = report["tmpfs"] = True
    except OSError as exc:
        report["errors"].append("netns: " + str(exc))
    if report["landlock_abi"]:
        try:
            landlock(ctypes, libc, report["landlock_abi"], [], [os.getcwd()])
            report["landlock"] = True
        except OSError as exc:
            report["errors"].append("landlock: " + str(exc))
    if bpf:
        try:
            seccomp(ctypes, libc, bpf)
            try:
                socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                report["errors"].append("seccomp: the filter loaded but did not deny an internet socket")
            except PermissionError:
                report["seccomp"] = True
        except OSError as exc:
            report["errors"].append("seccomp: " + str(exc))
    print(json.dumps(report))

