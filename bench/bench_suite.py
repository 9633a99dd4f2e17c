"""Where the test suite's CPU goes: CPU seconds per test file, the file's own test process and every process it started.

    sudo python bench/bench_suite.py [PYTEST ARGS ...]     # default: make test's arguments (-n auto --dist loadfile)
    python bench/bench_suite.py --read ACCT LOG            # the table again, from a run's two files

The suite is CPU-bound on 2 cores, so its wall time is its CPU time over the cores: a file's wall time (what
``--durations`` shows) also counts the waits for a CPU that the other workers took, and a file that sleeps costs
nothing. This counts CPU instead. It turns on the kernel's process accounting (``acct(2)``: root, or
CAP_SYS_PACCT; it replaces any accounting file already set, and is turned off after) for the run of pytest, which a
small plugin (``bench/suite_plugin.py``) makes each test process log, per file, when it ran it and its own CPU. A
process the accounting recorded is then charged to the file its test process was running when the process (or the
first of its ancestors that the test process started) began: servers, sandboxed runs, test hosts, Ray's daemons,
browsers. A process whose parent ended first is re-parented and cannot be charged; nor can the machine's other
processes, which are in the accounting file too: neither is counted.

Prints the files by CPU (the whole, the test process's own, what its processes used, its wall time, the top
commands), the total charged, pytest's controller's own CPU and the run's wall time.
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import os
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAKE_TEST_ARGS = ["-q", "-n", "auto", "--dist", "loadfile"]
# struct acct_v3 (linux/acct.h): flag, version, tty, exitcode, uid, gid, pid, ppid, btime, etime (a float, in AHZ
# ticks), utime, stime, mem, io, rw, minflt, majflt, swaps (comp_t), comm[16]; 64 bytes.
RECORD = struct.Struct("<BBHIIIIIIfHHHHHHHH16s")
AHZ = 100.0
SLACK = 1.0  # a record's start time is in whole seconds


@dataclass(frozen=True)
class Process:
    pid: int
    ppid: int
    start: float
    end: float
    cpu: float
    comm: str


@dataclass(frozen=True)
class Span:
    pid: int
    file: str
    start: float
    end: float
    own: float


def comp_t(value: int) -> int:
    """comp_t: a 13-bit mantissa and a 3-bit base-8 exponent."""
    return (value & 0x1FFF) << (3 * ((value >> 13) & 7))


def read_accounting(path: Path) -> list[Process]:
    data = path.read_bytes()
    out = []
    for offset in range(0, len(data) - RECORD.size + 1, RECORD.size):
        fields = RECORD.unpack_from(data, offset)
        if fields[1] & 0x7F != 3:
            raise SystemExit(f"{path}: record {offset // RECORD.size} is accounting version {fields[1] & 0x7F}, not 3 (this kernel's format is not read here)")
        pid, ppid, btime, etime = fields[6], fields[7], fields[8], fields[9] / AHZ
        cpu = (comp_t(fields[10]) + comp_t(fields[11])) / AHZ
        out.append(Process(pid, ppid, float(btime), btime + etime, cpu, fields[18].split(b"\0")[0].decode(errors="replace")))
    return out


def read_spans(path: Path) -> list[Span]:
    spans = []
    for line in path.read_text(encoding="utf-8").splitlines():
        pid, name, start, end, own = line.split("\t")
        spans.append(Span(int(pid), name, float(start), float(end), float(own)))
    return spans


@dataclass
class Charges:
    own: collections.Counter[str]
    children: collections.Counter[str]
    commands: dict[str, collections.Counter[str]]
    wall: collections.Counter[str]


def charge(processes: list[Process], spans: list[Span]) -> Charges:
    """Each process's CPU to the file its test process ran when its first ancestor below that process started."""
    testers = {s.pid for s in spans}
    by_pid: dict[int, list[Process]] = collections.defaultdict(list)
    for p in processes:
        by_pid[p.pid].append(p)

    def parent(p: Process) -> Process | None:  # pids are reused in a long run: the parent alive when p started
        return next((q for q in by_pid.get(p.ppid, []) if q.start - SLACK <= p.start <= q.end + SLACK), None)

    charges = Charges(collections.Counter(), collections.Counter(), collections.defaultdict(collections.Counter), collections.Counter())
    for s in spans:
        charges.own[s.file] += s.own
        charges.wall[s.file] += s.end - s.start
    for p in processes:
        if p.pid in testers:
            continue  # a test process: its own CPU is in its log, per file
        node: Process | None = p
        for _ in range(64):
            if node is None or node.ppid in testers:
                break
            node = parent(node)
        if node is None or node.ppid not in testers:
            continue  # re-parented, or not the run's
        top = node
        name = next((s.file for s in spans if s.pid == top.ppid and s.start - SLACK <= top.start <= s.end + SLACK), "(between files)")
        charges.children[name] += p.cpu
        charges.commands[name][p.comm] += p.cpu
    return charges


def report(charges: Charges, run_pids: set[int], processes: list[Process], wall: float | None) -> None:
    total = charges.own + charges.children
    print(f"{'file':44s} {'CPU s':>7s} {'own':>7s} {'started':>7s} {'wall s':>7s}  commands it started (CPU s)")
    for name, cpu in total.most_common():
        top = ", ".join(f"{c} {v:.0f}" for c, v in charges.commands[name].most_common(3))
        print(f"{name:44s} {cpu:7.1f} {charges.own[name]:7.1f} {charges.children[name]:7.1f} {charges.wall[name]:7.1f}  {top}")
    charged = sum(total.values())
    runner = sum(p.cpu for p in processes if p.pid in run_pids)
    print(f"\ncharged to files: {charged:.1f} s CPU over {len(total)} files; pytest's controller: {runner:.1f} s")
    if wall is not None:
        print(f"wall time of the run: {wall:.1f} s; CPU charged / wall: {charged / wall:.2f} cores busy on average")


def run(pytest_args: list[str]) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    with tempfile.TemporaryDirectory(prefix="adbg-bench-suite-") as folder:
        acct, log = Path(folder) / "pacct", Path(folder) / "spans.tsv"
        acct.touch()
        log.touch()
        if libc.acct(str(acct).encode()) != 0:
            error = os.strerror(ctypes.get_errno())
            print(f"bench_suite: the kernel's process accounting could not be turned on ({error}): it needs root or CAP_SYS_PACCT "
                  "and a kernel built with BSD process accounting", file=sys.stderr)
            return 2
        started = time.monotonic()
        try:
            env = {**os.environ, "BENCH_SUITE_LOG": str(log), "PYTHONDONTWRITEBYTECODE": ""}  # as make test runs it
            done = subprocess.run([sys.executable, "-m", "pytest", "-p", "bench.suite_plugin", *pytest_args], cwd=ROOT, env=env)
        finally:
            libc.acct(None)
        wall = time.monotonic() - started  # accounting is off: a process ending from here on is not recorded
        kept = Path(tempfile.gettempdir()) / "adbg-bench-suite-last"
        kept.mkdir(exist_ok=True)
        for path in (acct, log):
            path.replace(kept / path.name)
        print(f"\npytest exited {done.returncode}; the accounting and the spans are kept in {kept} (--read {kept / 'pacct'} {kept / 'spans.tsv'})\n")
        processes = read_accounting(kept / "pacct")
        controller = {p.pid for p in processes if p.ppid == os.getpid()}
        report(charge(processes, read_spans(kept / "spans.tsv")), controller, processes, wall)
        return done.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--read", nargs=2, metavar=("ACCT", "LOG"), help="print the table of an earlier run")
    args, pytest_args = parser.parse_known_args()
    if args.read:
        processes = read_accounting(Path(args.read[0]))
        report(charge(processes, read_spans(Path(args.read[1]))), set(), processes, None)
        return 0
    return run(pytest_args or MAKE_TEST_ARGS)


if __name__ == "__main__":
    sys.exit(main())
