"""A pytest plugin for ``bench/bench_suite.py``: each test process appends, per test file it runs, one line to the file
named by BENCH_SUITE_LOG: its pid, the file, when the file's first test started and its last ended (epoch seconds),
and the CPU seconds the process itself used meanwhile (its threads included; its children are counted from the
kernel's process accounting instead)."""

from __future__ import annotations

import os
import resource
import time

import pytest

_current: dict[str, object] = {"file": None}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _close() -> None:
    name = _current["file"]
    if name is None:
        return
    line = f"{os.getpid()}\t{name}\t{_current['start']:.3f}\t{time.time():.3f}\t{_cpu() - float(_current['cpu']):.3f}\n"  # type: ignore[arg-type]
    with open(os.environ["BENCH_SUITE_LOG"], "a", encoding="utf-8") as log:  # one short append: lines never interleave
        log.write(line)
    _current["file"] = None


def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    if item.path.name != _current["file"]:
        _close()
        _current.update(file=item.path.name, start=time.time(), cpu=_cpu())


def pytest_sessionfinish(session: pytest.Session) -> None:
    _close()
