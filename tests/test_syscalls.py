"""The seccomp allow-list, tried from a full-tier run and from run_bash: every socket family, the kernel
interfaces no fix needs, and signals to the server. Each answer is the exact errno the filter gives."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pyseccomp as sc
import pytest

from env.sandbox.limits import Limits
from env.sandbox.runner import Sandbox
from env.sandbox.shell import ShellLimits, ShellRunner
from env.scratch import scratch_root

FAMILIES = {"AF_INET": 2, "AF_INET6": 10, "AF_UNIX": 1, "AF_NETLINK": 16, "AF_PACKET": 17, "AF_VSOCK": 40, "AF_ALG": 38,
            "AF_BLUETOOTH": 31, "AF_XDP": 44}
# Each call with arguments that would succeed (or fail with another errno than EPERM) were it allowed.
KERNEL_CALLS = ("io_uring_setup", "bpf", "perf_event_open", "userfaultfd", "ptrace", "keyctl", "add_key", "mount", "unshare",
                "setns", "process_vm_readv", "socketpair", "kexec_load", "init_module", "acct", "swapon", "pivot_root", "chroot")
ARCH = sc.system_arch()

PROBE = '''
import ctypes, errno, json, os, socket, sys, threading

libc = ctypes.CDLL(None, use_errno=True)

def _errno(result):
    return "allowed" if result >= 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))

def families(table):
    out = {}
    for name, number in table.items():
        try:
            socket.socket(number, socket.SOCK_STREAM if number in (1, 2, 10, 40) else socket.SOCK_RAW).close()
            out[name] = "allowed"
        except OSError as exc:
            out[name] = errno.errorcode.get(exc.errno, str(exc.errno))
    return out

def calls(table):
    out = {}
    for name, number in table.items():
        ctypes.set_errno(0)
        if name == "unshare":
            out[name] = _errno(libc.syscall(number, 0x40000000))  # CLONE_NEWNET
        elif name == "io_uring_setup":
            params = ctypes.create_string_buffer(120)
            out[name] = _errno(libc.syscall(number, 8, params))
        elif name == "userfaultfd":
            out[name] = _errno(libc.syscall(number, 0))
        else:
            out[name] = _errno(libc.syscall(number, 0, 0, 0, 0, 0))
    return out

def signals(server, numbers):
    own = os.getpid()
    result = {"kill_own": _errno(libc.syscall(numbers["kill"], own, 0)),
              "kill_server": _errno(libc.syscall(numbers["kill"], server, 0)),
              "kill_group": _errno(libc.syscall(numbers["kill"], 0, 0)),
              "kill_everyone": _errno(libc.syscall(numbers["kill"], -1, 0)),
              "tgkill_own_thread": _errno(libc.syscall(numbers["tgkill"], own, threading.get_native_id(), 0)),
              "tgkill_server": _errno(libc.syscall(numbers["tgkill"], server, server, 0)),
              "pidfd_open_server": _errno(libc.syscall(numbers["pidfd_open"], server, 0)),
              "pidfd_send_signal": _errno(libc.syscall(numbers["pidfd_send_signal"], 0, 0, 0, 0))}
    try:
        open("/proc/%d/environ" % server, "rb").read()
        result["proc_environ"] = "allowed"
    except OSError as exc:
        result["proc_environ"] = errno.errorcode.get(exc.errno, str(exc.errno))
    return result

if __name__ == "__main__":
    print(json.dumps({"families": families(json.loads(sys.argv[1])), "calls": calls(json.loads(sys.argv[2])),
                      "signals": signals(int(sys.argv[3]), json.loads(sys.argv[2]))}))
'''


def numbers(*names: str) -> dict[str, int]:
    return {name: sc.resolve_syscall(ARCH, name) for name in names}


CALL_NUMBERS = numbers(*KERNEL_CALLS)
SIGNAL_NUMBERS = numbers("kill", "tgkill", "pidfd_open", "pidfd_send_signal")


@pytest.fixture(scope="module")
def run(isolation):
    sandbox = Sandbox(Limits(), isolation)
    with sandbox.start(PROBE, "probe.py", "probe") as live:
        yield live
    sandbox.close()


def test_a_run_may_open_no_socket_of_any_family(run):
    assert run.call("families", FAMILIES) == dict.fromkeys(FAMILIES, "EACCES")


def test_a_run_reaches_no_kernel_interface_a_fix_does_not_need(run):
    assert run.call("calls", CALL_NUMBERS) == dict.fromkeys(KERNEL_CALLS, "EPERM")


def test_a_run_signals_only_itself(run):
    assert run.call("signals", os.getpid(), {**CALL_NUMBERS, **SIGNAL_NUMBERS}) == {
        "kill_own": "allowed", "kill_server": "EPERM", "kill_group": "EPERM", "kill_everyone": "EPERM",
        "tgkill_own_thread": "allowed", "tgkill_server": "EPERM", "pidfd_open_server": "EPERM", "pidfd_send_signal": "EPERM",
        "proc_environ": "EACCES",
    }


def test_each_run_signals_only_itself_not_another_run(isolation):
    """Runs share a uid: the filter, not the uid, keeps one from signalling another."""
    sandbox = Sandbox(Limits(), isolation)
    source = "import os, signal\ndef pid():\n    return os.getpid()\ndef poke(other):\n    try:\n        os.kill(other, 0)\n        return 'allowed'\n    except OSError as exc:\n        return type(exc).__name__\n"
    with sandbox.start(source, "m.py", "m") as first, sandbox.start(source, "m.py", "m") as second:
        assert first.call("poke", second.call("pid")) == "PermissionError"
        assert first.call("poke", first.call("pid")) == "allowed"
    sandbox.close()


@pytest.fixture()
def workspace() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="adbg-test-ws-", dir=scratch_root()))
    (root / "probe.py").write_text(PROBE)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def test_run_bash_opens_no_socket_and_reaches_no_kernel_interface(isolation, workspace):
    import shlex
    import sys

    shell = ShellRunner(isolation, ShellLimits())
    if shell.refusal:
        pytest.skip(shell.refusal)
    args = " ".join(shlex.quote(json.dumps(x)) for x in (FAMILIES, {**CALL_NUMBERS, **SIGNAL_NUMBERS}))
    result = shell.run(workspace, f"{shlex.quote(sys.executable)} -I probe.py {args} {os.getpid()}")
    assert result.exit_code == 0, result.output
    found = json.loads(result.output.strip().splitlines()[-1])
    assert found["families"] == dict.fromkeys(FAMILIES, "EACCES")
    assert {name: found["calls"][name] for name in KERNEL_CALLS} == dict.fromkeys(KERNEL_CALLS, "EPERM")
    # The shell may signal its own processes; the server is outside its PID namespace or Landlock's signal scope.
    assert found["signals"]["kill_server"] in ("ESRCH", "EPERM")
    assert found["signals"]["tgkill_server"] in ("ESRCH", "EPERM")
    assert {k: found["signals"][k] for k in ("kill_own", "pidfd_open_server", "pidfd_send_signal", "proc_environ")} == {
        "kill_own": "allowed", "pidfd_open_server": "EPERM", "pidfd_send_signal": "EPERM", "proc_environ": "EACCES"}
