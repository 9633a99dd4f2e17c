"""The seccomp filter of every sandbox run, compiled once in the server (libseccomp via pyseccomp).

    bpf = compile_filter()       # raw BPF bytes, or None where libseccomp is unavailable
    # the child loads them with prctl(PR_SET_SECCOMP) after its other layers: cheap, no library
    shell = compile_filter(allow_processes=True)   # the run_bash variant (env.sandbox.shell)

Denied (EPERM unless noted): running programs, new processes (``clone`` without
``CLONE_THREAD``; ``clone3`` answers ENOSYS so threads fall back to ``clone``), internet, netlink
packet and Unix sockets (EACCES), tracing other processes, mounting and namespace changes, symlinks,
hard links and device nodes, and kernel interfaces no fix needs. Everything else is allowed:
threads, files in the run's directory (Landlock decides which), ``socketpair``.

``allow_processes=True`` is the shell's variant: running programs and new processes are the point
of a shell, so ``execve``, ``fork``, ``vfork`` and ``clone`` are allowed, except a ``clone`` that
asks for a new namespace (that would be ``unshare`` by another name). Every other denial stays;
the shell loads it after its own namespaces are set up.
"""

from __future__ import annotations

import errno
import tempfile

DENIED = (
    "execve", "execveat", "fork", "vfork", "ptrace", "process_vm_readv", "process_vm_writev",
    "mount", "umount2", "unshare", "setns", "pivot_root", "chroot", "open_tree", "move_mount",
    "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    "symlink", "symlinkat", "link", "linkat", "mknod", "mknodat",
    "bpf", "perf_event_open", "userfaultfd", "kexec_load", "kexec_file_load", "init_module",
    "finit_module", "delete_module", "reboot", "swapon", "swapoff", "acct", "keyctl", "add_key",
    "request_key", "io_uring_setup", "io_uring_enter", "io_uring_register", "name_to_handle_at",
    "open_by_handle_at", "personality",
)
PROCESS_CALLS = ("execve", "execveat", "fork", "vfork")
CLONE_THREAD = 0x00010000
# NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET (CLONE_NEWTIME exists only for clone3/unshare).
CLONE_NEW_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
# AF_UNIX too: Landlock does not govern connecting to a socket file elsewhere on the host.
DENIED_SOCKET_FAMILIES = {"AF_UNIX": 1, "AF_INET": 2, "AF_INET6": 10, "AF_NETLINK": 16, "AF_PACKET": 17}


def compile_filter(allow_processes: bool = False) -> bytes | None:
    """The filter as BPF for this machine's architecture, or None if libseccomp is missing."""
    try:
        import pyseccomp as sc

        sc.system_arch()
    except (ImportError, OSError, AttributeError):
        return None
    rules = sc.SyscallFilter(sc.ALLOW)
    for name in DENIED:
        if allow_processes and name in PROCESS_CALLS:
            continue
        try:
            rules.add_rule(sc.ERRNO(errno.EPERM), name)
        except (OSError, ValueError):
            continue  # not a syscall on this architecture
    if allow_processes:
        for flag in CLONE_NEW_FLAGS:  # rules on one syscall are alternatives: any of these bits denies
            rules.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    else:
        rules.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, CLONE_THREAD, 0))
    rules.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    for family in DENIED_SOCKET_FAMILIES.values():
        rules.add_rule(sc.ERRNO(errno.EACCES), "socket", sc.Arg(0, sc.EQ, family))
    with tempfile.TemporaryFile() as out:
        rules.export_bpf(out)
        out.seek(0)
        return out.read()
