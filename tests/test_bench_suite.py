"""bench/bench_suite.py: the kernel's accounting records read exactly, and each process charged to the right file."""

from __future__ import annotations

from bench.bench_suite import RECORD, Process, Span, charge, comp_t, read_accounting


def record(pid: int, ppid: int, btime: int, etime_s: float, utime: int, stime: int, comm: bytes) -> bytes:
    return RECORD.pack(0, 3, 0, 0, 0, 0, pid, ppid, btime, etime_s * 100, utime, stime, 0, 0, 0, 0, 0, 0, comm)


def test_comp_t_is_a_13_bit_mantissa_and_a_base_8_exponent():
    assert comp_t(0) == 0
    assert comp_t(8191) == 8191
    assert comp_t((1 << 13) | 5) == 40
    assert comp_t((2 << 13) | 3) == 192


def test_records_are_read_with_their_cpu_in_seconds(tmp_path):
    path = tmp_path / "pacct"
    path.write_bytes(record(7, 1, 1000, 2.5, 150, (1 << 13) | 5, b"python") + record(8, 7, 1001, 0.5, 3, 0, b"adbg-run"))
    assert read_accounting(path) == [Process(7, 1, 1000.0, 1002.5, 1.9, "python"), Process(8, 7, 1001.0, 1001.5, 0.03, "adbg-run")]


def test_a_process_is_charged_to_the_file_its_test_process_ran_as_its_first_ancestor_started():
    spans = [Span(100, "test_a.py", 10.0, 20.0, 4.0), Span(100, "test_b.py", 20.0, 30.0, 1.0), Span(101, "test_c.py", 10.0, 40.0, 0.5)]
    processes = [
        Process(100, 50, 5.0, 45.0, 99.0, "python"),  # the test process itself: its own CPU is in its spans
        Process(200, 100, 12.0, 35.0, 1.0, "python"),  # a server started during test_a.py, ended later
        Process(300, 200, 28.0, 29.0, 2.0, "adbg-run"),  # its child, started while test_b.py ran: still test_a.py's
        Process(400, 100, 25.0, 26.0, 0.25, "git"),
        Process(500, 1, 15.0, 16.0, 7.0, "python"),  # re-parented, or another user's: nobody's
        Process(200, 101, 36.0, 38.0, 3.0, "python"),  # pid 200 again, a child of the other test process
        Process(600, 200, 37.0, 37.5, 0.5, "adbg-run"),  # a child of the second pid 200
    ]
    charges = charge(processes, spans)
    assert dict(charges.own) == {"test_a.py": 4.0, "test_b.py": 1.0, "test_c.py": 0.5}
    assert dict(charges.children) == {"test_a.py": 3.0, "test_b.py": 0.25, "test_c.py": 3.5}
    assert dict(charges.commands["test_a.py"]) == {"python": 1.0, "adbg-run": 2.0}
    assert dict(charges.wall) == {"test_a.py": 10.0, "test_b.py": 10.0, "test_c.py": 30.0}
