"""The split verdict's cost per project call: what one operation on a proxy costs the test (issue 34 item 3).

    python bench/bench_split_call.py [--calls 4000] [--runs 5]

A small project and tests that each make ``--calls`` operations of one kind on it run under the split verdict
(``run_tests`` with one selected test); a test making none is the baseline. Printed per kind: the median of
(run time - baseline time) / calls, in microseconds, and the same test function run in this process (the project's
code in process, as under plain pytest) for comparison, and the split cost again with the pair of processes not
pinned to one CPU (``SANDBOX_PAIR_CPU=off``, measured in the same run, interleaved) and the ratio. Kinds:

- ``call``: ``echo(i)``, a project function given and returning an int;
- ``method``: ``counter.bump()``, a method of a project object (an attribute read and a call);
- ``attribute``: ``counter.count``, a project object's attribute;
- ``generator``: one item of ``for x in numbers(n)``, a project generator, pulled item by item;
- ``list``: one item of ``list(numbers(n))``, which takes the generator whole;
- ``constant``: ``calls.LIMIT``, a module's constant;
- ``tuple``: ``pair(i)``, a function returning a tuple.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from env.project import load_repo_task  # noqa: E402
from env.sandbox.isolation import probe_isolation  # noqa: E402
from env.sandbox.limits import Limits  # noqa: E402
from env.sandbox.runner import Sandbox  # noqa: E402
from env.verdict.repo_judge import run_tests  # noqa: E402
from tests import repo_fixture  # noqa: E402

PROJECT = '''LIMIT = 10


def echo(value):
    return value


def pair(value):
    return (value, value + 1)


def numbers(n):
    for i in range(n):
        yield i


class Counter:
    def __init__(self):
        self.count = 0

    def bump(self):
        self.count += 1
        return self.count
'''

TESTS = '''import calls
from calls import Counter, echo, numbers, pair

N = {calls}


def test_none():
    assert calls.LIMIT == 10


def test_call():
    for i in range(N):
        assert echo(i) == i


def test_method():
    counter = Counter()
    for i in range(N):
        counter.bump()  # a method's read and call


def test_attribute():
    counter = Counter()
    for i in range(N):
        assert counter.count == 0


def test_generator():
    assert sum(1 for _ in numbers(N)) == N


def test_list():
    assert len(list(numbers(N))) == N


def test_constant():
    for i in range(N):
        assert calls.LIMIT == 10


def test_tuple():
    for i in range(N):
        assert pair(i) == (i, i + 1)
'''

KINDS = ("call", "method", "attribute", "generator", "list", "constant", "tuple")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=4000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    files = {"calls/__init__.py": PROJECT, "tests/test_calls.py": TESTS.format(calls=args.calls)}
    ids = ["tests/test_calls.py::test_none"] + [f"tests/test_calls.py::test_{k}" for k in KINDS]
    with tempfile.TemporaryDirectory(prefix="adbg-bench-call-") as root:
        task = load_repo_task(repo_fixture.write_task(Path(root) / "task", files, files, FAIL_TO_PASS=ids, PASS_TO_PASS=[]))
        sandbox = Sandbox(Limits(wall_seconds=300), probe_isolation())  # room for the slowest kind

        def split(test: str, pinned: str = "on") -> float:
            os.environ["SANDBOX_PAIR_CPU"] = pinned
            started = time.perf_counter()
            verdict = run_tests(sandbox, task, files, select=[f"tests/test_calls.py::test_{test}"])
            elapsed = time.perf_counter() - started
            outcome = verdict.outcomes.get(f"tests/test_calls.py::test_{test}")
            assert outcome == "PASSED", verdict.error or verdict.outcomes
            return elapsed

        repo = Path(root) / "task" / "repo"
        sys.path.insert(0, str(repo))  # the project, importable here; the test file loaded by path (``tests`` is ours)
        spec = importlib.util.spec_from_file_location("bench_test_calls", repo / "tests" / "test_calls.py")
        assert spec is not None and spec.loader is not None
        in_process = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(in_process)

        def plain(test: str) -> float:
            function = getattr(in_process, f"test_{test}")
            started = time.perf_counter()
            function()
            return time.perf_counter() - started

        def median(fn, test: str) -> float:
            fn(test)  # warm-up
            return statistics.median(fn(test) for _ in range(args.runs))

        def medians(test: str) -> tuple[float, float]:
            """Pinned and unpinned split times of one test, runs interleaved so that load changes hit both."""
            split(test, "on"), split(test, "off")  # warm-up
            times = [(split(test, "on"), split(test, "off")) for _ in range(args.runs)]
            return statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)

        (base_on, base_off), base_plain = medians("none"), median(plain, "none")
        print(f"{args.calls} operations per test, median of {args.runs} runs; baseline run {base_on * 1000:.0f} ms split "
              f"(pinned), {base_off * 1000:.0f} ms (unpinned); load average {os.getloadavg()[0]:.1f}")
        print(f"{'kind':<10} {'split us/op':>12} {'unpinned us/op':>15} {'ratio':>6} {'in process us/op':>17}")
        for kind in KINDS:
            on, off = medians(kind)
            per_on, per_off = (on - base_on) / args.calls * 1e6, (off - base_off) / args.calls * 1e6
            per_plain = (median(plain, kind) - base_plain) / args.calls * 1e6
            ratio = per_off / per_on if per_on > 0 else float("nan")
            print(f"{kind:<10} {per_on:12.1f} {per_off:15.1f} {ratio:6.2f} {per_plain:17.2f}")


if __name__ == "__main__":
    main()
