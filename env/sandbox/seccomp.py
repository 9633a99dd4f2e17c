"""The seccomp filter of every sandbox run: an allow-list, compiled once in the server (libseccomp via pyseccomp).

    bpf = compile_filter()                     # raw BPF bytes, or None where libseccomp is unavailable
    # the child puts its own pid in place of OWN_PID, then loads it with prctl (env/sandbox/inside/child.py)
    shell = compile_filter(allow_processes=True)   # the run_bash variant (env.sandbox.shell)

Only the system calls a Python run needs are allowed (CPython, its threads, the standard library,
pytest): files (Landlock decides which), memory, time, futexes, polling, signals to itself. Every
other call answers EPERM, so a new kernel interface is denied until it is added here on purpose
(the approach of Docker's default profile and nsjail's configurations, tightened for one process).
``socket()`` answers EACCES for every family and ``socketpair`` is not allowed: a run needs no
socket. ``clone`` is allowed only for a thread (``CLONE_THREAD``); ``clone3`` answers ENOSYS so
threads fall back to ``clone``, whose flags a filter can read. ``kill``, ``tgkill`` and the
``sigqueue`` calls reach only the run's own process: the filter carries a placeholder that the
child replaces with its own pid before it loads it. ``ioctl`` and ``prctl`` are allowed for a few
harmless requests only (terminal queries, close-on-exec, thread names), ``prlimit64`` only to read
or lower the run's own limits.

``allow_processes=True`` is the shell's variant: running programs and new processes are the point
of a shell, so ``execve``, ``fork``, ``vfork``, ``wait4`` and a ``clone`` without a namespace flag
are allowed, and signals go to any process the shell can see (its own PID namespace, or Landlock's
signal scoping, keeps them inside the command: see ``env.sandbox.guarantees``). Everything else is
the same list.
"""

from __future__ import annotations

import errno
import struct
import tempfile

# The system calls a Python run makes (names this architecture lacks are skipped when compiling).
ALLOWED = (
    # files and directories (Landlock decides which paths; these only name operations)
    "read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "preadv2", "pwritev2",
    "open", "openat", "openat2", "creat", "close", "close_range", "lseek", "fstat", "stat", "lstat", "newfstatat",
    "statx", "statfs", "fstatfs", "access", "faccessat", "faccessat2", "readlink", "readlinkat", "getdents",
    "getdents64", "getcwd", "chdir", "fchdir", "mkdir", "mkdirat", "rmdir", "unlink", "unlinkat", "rename",
    "renameat", "renameat2", "truncate", "ftruncate", "fsync", "fdatasync", "fallocate", "fadvise64", "chmod",
    "fchmod", "fchmodat", "fchmodat2", "utime", "utimes", "utimensat", "futimesat", "umask", "fcntl", "flock",
    "dup", "dup2", "dup3", "pipe", "pipe2", "sendfile", "copy_file_range", "getxattr", "lgetxattr", "fgetxattr",
    "listxattr", "llistxattr", "flistxattr", "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr",
    "fremovexattr",
    # the pooled child receives its run's pipes over the socket the zygote gave it (it opens none); queries
    # on a held descriptor (bash asks getpeername whether its input is a network connection: EPERM means yes)
    "recvmsg", "getpeername", "getsockname", "getsockopt",
    # memory
    "brk", "mmap", "munmap", "mprotect", "mremap", "madvise", "msync", "mincore", "membarrier",
    # signals, to and within this process only (kill and tgkill are added with the pid check below)
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending", "rt_sigsuspend", "rt_sigtimedwait",
    "sigaltstack", "pause", "alarm", "getitimer", "setitimer",
    # threads and waiting
    "futex", "futex_waitv", "set_robust_list", "get_robust_list", "set_tid_address", "rseq", "sched_yield",
    "sched_getaffinity", "sched_getparam", "sched_getscheduler", "sched_get_priority_max",
    "sched_get_priority_min", "nanosleep", "clock_nanosleep", "arch_prctl", "select", "pselect6", "poll", "ppoll",
    "epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait", "epoll_pwait2", "eventfd",
    "eventfd2",
    # time and facts about the process
    "clock_gettime", "clock_getres", "gettimeofday", "time", "times", "getrusage", "getpid", "getppid", "gettid",
    "getuid", "geteuid", "getgid", "getegid", "getgroups", "getresuid", "getresgid", "getpgrp", "getpgid",
    "getsid", "uname", "sysinfo", "getrlimit", "getcpu", "getrandom", "getpriority",
    "exit", "exit_group",
)
# What a shell adds: programs and processes of its own, and what everyday tools do to their files.
SHELL_ALLOWED = (
    "execve", "fork", "vfork", "wait4", "waitid", "setpgid", "setsid", "kill", "tkill", "tgkill",
    "rt_sigqueueinfo", "rt_tgsigqueueinfo", "setpriority", "chown", "fchown", "lchown", "fchownat",
)
CLONE_THREAD = 0x00010000
# NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET: a clone asking for any is unshare by another name.
CLONE_NEW_MASK = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
# ioctl requests a run may make: terminal queries (isatty, the window size), close-on-exec, non-blocking mode,
# bytes waiting. Never TIOCSTI (typing into a terminal) or anything that reaches a device.
IOCTLS = {"TCGETS": 0x5401, "TIOCGWINSZ": 0x5413, "TIOCGPGRP": 0x540F, "FIONREAD": 0x541B, "FIONBIO": 0x5421,
          "FIONCLEX": 0x5450, "FIOCLEX": 0x5451}
# prctl options: thread names (threading sets them), reading the dumpable and no-new-privileges flags.
PRCTLS = {"PR_GET_DUMPABLE": 3, "PR_SET_NAME": 15, "PR_GET_NAME": 16, "PR_GET_NO_NEW_PRIVS": 39}
# Replaced by the child's own pid (env/sandbox/inside/child.py): a value no pid takes (pid_max is at most 2**22).
OWN_PID = 0x7AD5_EC01
OWN_PID_CALLS = {"kill": 0, "tgkill": 0, "rt_sigqueueinfo": 0, "rt_tgsigqueueinfo": 0}  # syscall: the pid argument


def compile_filter(allow_processes: bool = False) -> bytes | None:
    """The filter as BPF for this machine's architecture, or None if libseccomp is missing."""
    try:
        import pyseccomp as sc

        sc.system_arch()
    except (ImportError, OSError, AttributeError):
        return None
    rules = sc.SyscallFilter(sc.ERRNO(errno.EPERM))

    def allow(name: str, *args) -> None:
        try:
            rules.add_rule(sc.ALLOW, name, *args)
        except (OSError, ValueError, RuntimeError):
            pass  # not a system call on this architecture

    for name in ALLOWED + (SHELL_ALLOWED if allow_processes else ()):
        allow(name)
    if allow_processes:
        allow("clone", sc.Arg(0, sc.MASKED_EQ, CLONE_NEW_MASK, 0))
    else:
        allow("clone", sc.Arg(0, sc.MASKED_EQ, CLONE_THREAD, CLONE_THREAD))
        for name, index in OWN_PID_CALLS.items():
            allow(name, sc.Arg(index, sc.EQ, OWN_PID))
    for request in IOCTLS.values():
        allow("ioctl", sc.Arg(1, sc.EQ, request))
    for option in PRCTLS.values():
        allow("prctl", sc.Arg(0, sc.EQ, option))
    allow("prlimit64", sc.Arg(0, sc.EQ, 0))  # its own limits (a lower limit is all it can set)
    rules.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    rules.add_rule(sc.ERRNO(errno.EACCES), "socket")
    with tempfile.TemporaryFile() as out:
        rules.export_bpf(out)
        out.seek(0)
        bpf = out.read()
    if not allow_processes and struct.pack("=I", OWN_PID) not in bpf:
        raise RuntimeError("the seccomp filter lost its own-pid checks")  # never load a filter that signals anyone
    return bpf

