"""The trusted test process of a repository run: pytest here, the project's code in the sandbox.

    python -m env.verdict.pytest_host RESULT_FD   < pickled request (from env.verdict.repo_judge)

Started by the server with the task's own test files (never the agent's copies) in its working
directory. It starts one sandbox run holding the project's source files, makes the project's
top-level names importable as proxies (``env.verdict.split``), runs pytest with plugin
autoload, caches and bytecode off, and writes one JSON line per event to RESULT_FD: what was
collected, each test's outcome with a failure excerpt, and a last ``done`` line with the
sandbox's output and limits. The project's code cannot reach this process or that descriptor.
"""

from __future__ import annotations

import json
import os
import pickle
import sys
from typing import Any

import pytest

from env.sandbox.runner import Sandbox
from env.verdict.split import Remote

EXCERPT_CHARS = 2000


def _excerpt(report: Any) -> str:
    text = getattr(report, "longreprtext", "") or ""
    return text if len(text) <= EXCERPT_CHARS else "...\n" + text[-EXCERPT_CHARS:]


class Recorder:
    """A pytest plugin that reports collection and per-test outcomes as they happen."""

    def __init__(self, emit: Any, select: list[str] | None):
        self.emit, self.select = emit, select
        self.status: dict[str, str] = {}
        self.excerpt: dict[str, str] = {}

    def pytest_collection_modifyitems(self, session: Any, config: Any, items: list[Any]) -> None:
        if self.select is not None:
            wanted = set(self.select)
            deselected = [item for item in items if item.nodeid not in wanted]
            items[:] = [item for item in items if item.nodeid in wanted]
            config.hook.pytest_deselected(items=deselected)
        self.emit({"collected": [item.nodeid for item in items]})

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            self.emit({"collect_error": report.nodeid, "excerpt": _excerpt(report)})

    def pytest_runtest_logreport(self, report: Any) -> None:
        node = report.nodeid
        xfail = hasattr(report, "wasxfail")
        if report.when == "setup":
            if report.failed:
                self.status[node] = "ERROR"
            elif report.skipped:
                self.status[node] = "XFAIL" if xfail else "SKIPPED"
        elif report.when == "call":
            if report.passed:
                self.status[node] = "XPASS" if xfail else "PASSED"
            elif report.failed:
                self.status[node] = "FAILED"
            else:
                self.status[node] = "XFAIL" if xfail else "SKIPPED"
        elif report.failed:  # teardown
            self.status[node] = "ERROR"
        if report.failed and node not in self.excerpt:
            self.excerpt[node] = _excerpt(report)

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        self.emit({"test": nodeid, "status": self.status.get(nodeid, "ERROR"), "excerpt": self.excerpt.get(nodeid, "")})


def main() -> int:
    out = os.fdopen(int(sys.argv[1]), "w", encoding="utf-8")

    def emit(record: dict) -> None:
        out.write(json.dumps(record) + "\n")
        out.flush()

    request = pickle.load(sys.stdin.buffer)
    sys.dont_write_bytecode = True
    sandbox = Sandbox(request["limits"], request["isolation"], request["tmp_root"], warm=False)
    run = sandbox.start_repo(request["files"], request["paths"], request["env"])
    try:
        if run.load_error is not None or run.result.aborted:
            problem = str(run.load_error) if run.load_error else run.result.aborted
            emit({"fatal": f"the project could not be set up in the sandbox: {problem}"})
            return 0
        Remote(run).install(set(request["names"]))
        with open("pytest.ini", "w", encoding="utf-8") as handle:
            handle.write("[pytest]\n")  # the task's own settings never come from a writable place
        args = [
            "-q", "--no-header", "-p", "no:cacheprovider", "-p", "no:stepwise", "--rootdir", ".", "-c", "pytest.ini",
            "--tb=short", "-W", "ignore::DeprecationWarning", *request["paths_to_collect"],
        ]
        pytest.main(args, plugins=[Recorder(emit, request["select"])])
    finally:
        result = run.finish()
        emit({"done": True, **result.model_dump()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
