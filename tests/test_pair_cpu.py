"""A split run's two processes on one CPU (issue 34 item 3): the trusted test host and the sandbox child that runs the
project ping-pong on every project call, and a wake-up across CPUs costs far more than one on the same CPU. Pairs
are spread over the CPUs, least used first; ``SANDBOX_PAIR_CPU=off`` turns it off; a refusal is no failure."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

import pytest

from env.project import load_repo_task
from env.sandbox.affinity import CpuPairs, pin
from env.verdict.repo_judge import run_tests
from tests import repo_fixture

ALLOWED = sorted(os.sched_getaffinity(0))
two_cpus = pytest.mark.skipif(len(ALLOWED) < 2, reason="pinning a pair chooses among at least two CPUs")


def test_pairs_go_to_the_least_used_cpu_and_give_it_back(monkeypatch):
    monkeypatch.delenv("SANDBOX_PAIR_CPU", raising=False)
    pairs = CpuPairs({3, 5, 7})
    with pairs.pinned() as first, pairs.pinned() as second, pairs.pinned() as third, pairs.pinned() as fourth:
        assert (first, second, third, fourth) == (3, 5, 7, 3)
        assert pairs.in_use() == {3: 2, 5: 1, 7: 1}
        with pairs.pinned() as fifth:
            assert fifth == 5
    assert pairs.in_use() == {3: 0, 5: 0, 7: 0}


def test_a_cpu_is_given_back_when_the_run_raises(monkeypatch):
    monkeypatch.delenv("SANDBOX_PAIR_CPU", raising=False)
    pairs = CpuPairs({0, 1})
    with pytest.raises(RuntimeError), pairs.pinned():
        raise RuntimeError("the run failed")
    assert pairs.in_use() == {0: 0, 1: 0}


def test_off_or_a_single_cpu_pins_nothing(monkeypatch):
    monkeypatch.setenv("SANDBOX_PAIR_CPU", "off")
    with CpuPairs({0, 1}).pinned() as cpu:
        assert cpu is None
    monkeypatch.delenv("SANDBOX_PAIR_CPU")
    with CpuPairs({4}).pinned() as cpu:
        assert cpu is None
    assert pin(os.getpid(), None) is False


@two_cpus
def test_pin_reaches_every_thread_and_process_below():
    code = "import subprocess, sys, threading, time; threading.Thread(target=time.sleep, args=(30,), daemon=True).start(); " \
           "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)']); print(child.pid, flush=True); time.sleep(30)"
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        grandchild = int(parent.stdout.readline())
        assert pin(parent.pid, ALLOWED[-1]) is True
        threads = os.listdir(f"/proc/{parent.pid}/task")
        assert len(threads) == 2
        assert [os.sched_getaffinity(int(t)) for t in threads] == [{ALLOWED[-1]}] * 2
        assert os.sched_getaffinity(grandchild) == {ALLOWED[-1]}
    finally:
        subprocess.run(["pkill", "-KILL", "-P", str(parent.pid)], check=False)
        parent.kill()
        parent.wait()


def test_a_refused_pin_is_reported_not_raised():
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    assert pin(int(done.stdout), ALLOWED[0]) is False  # it has ended
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert pin(sleeper.pid, 4096) is False  # no such CPU: the kernel refuses, the process runs on as it was
        assert os.sched_getaffinity(sleeper.pid) == set(ALLOWED)
    finally:
        sleeper.kill()
        sleeper.wait()


PROJECT = "import os\n\n\ndef cpus():\n    return sorted(os.sched_getaffinity(0))\n"
TESTS = '''import os

from where import cpus


def test_one_cpu_for_both():
    raise AssertionError(f"host {sorted(os.sched_getaffinity(0))} project {cpus()}")
'''


def _placement(runtime, tmp_path) -> str:
    files = {"where/__init__.py": PROJECT, "tests/test_where.py": TESTS}
    test = "tests/test_where.py::test_one_cpu_for_both"
    task = load_repo_task(repo_fixture.write_task(tmp_path / "task", files, files, FAIL_TO_PASS=[test], PASS_TO_PASS=[]))
    verdict = run_tests(runtime.sandbox, task, files)
    assert verdict.trust(test) == "split", verdict.error or verdict.collect_errors
    excerpt = verdict.excerpts[test]
    return excerpt[excerpt.rindex("host ["):].splitlines()[0]


@two_cpus
def test_a_split_run_puts_the_test_host_and_the_project_on_one_cpu(runtime, tmp_path, monkeypatch):
    monkeypatch.delenv("SANDBOX_PAIR_CPU", raising=False)
    placed = _placement(runtime, tmp_path)
    host, project = placed.removeprefix("host ").split(" project ")
    assert host == project and len(ast.literal_eval(host)) == 1 and ast.literal_eval(host)[0] in ALLOWED, placed


@two_cpus
def test_off_leaves_both_where_the_server_may_run(runtime, tmp_path, monkeypatch):
    monkeypatch.setenv("SANDBOX_PAIR_CPU", "off")
    assert _placement(runtime, tmp_path) == f"host {ALLOWED} project {ALLOWED}"
