"""A classic task's module and tests as files, so shell, debugger and file tools work on it too.

    bench = Workbench(task, runtime, current_code)
    bench.ctx                       # a ToolContext: view_file binary_search.py, debug_start test_binary_search.py::...
    bench.submitted(new_code)       # after submit_fix: the module file holds the submitted code
    bench.close()

Files: ``<module>.py`` (the buggy code, then each submission), ``test_<module>.py`` (the task's
visible tests) and a ``conftest.py`` whose ``sol`` fixture is the module, as in graded runs.
Nothing here is graded: verdicts still come from ``submit_fix`` and the trusted judge.
"""

from __future__ import annotations

from typing import Any

from env.debugger.session import Project
from env.families.classic.task import TaskSpec
from env.tools.base import ToolContext
from env.workspace import Workspace

CONFTEST = '''"""The `sol` fixture: the module under test (graded runs give the same name to the sandboxed module)."""
import importlib

import pytest


@pytest.fixture
def sol():
    return importlib.import_module({module!r})
'''

# The tests' helper module, for a workbench: plain exceptions instead of the verdict's remote ones.
CHECKS = '''from contextlib import contextmanager


@contextmanager
def raises(exc_type):
    """Passes only if the code under test raised an exception of this type name."""
    try:
        yield
    except Exception as exc:
        if type(exc).__name__ != exc_type:
            raise AssertionError(f"expected {exc_type}, but the code raised {type(exc).__name__}: {exc}") from None
        return
    raise AssertionError(f"expected {exc_type} to be raised, but nothing was raised")
'''


class Workbench:
    def __init__(self, task: TaskSpec, runtime: Any, code: str):
        self.task = task
        self.test_file = f"test_{task.module}.py"
        files = {
            task.filename: code,
            self.test_file: task.test_source,
            "conftest.py": CONFTEST.format(module=task.module),
            "env/__init__.py": "",
            "env/families/__init__.py": "",
            "env/families/classic/__init__.py": "",
            "env/families/classic/checks.py": CHECKS,
        }
        self.workspace = Workspace.from_files(files, runtime.sandbox.tmp_root)
        project = Project(
            files=self.workspace.files,
            paths=["."],
            environ={},
            tests=[f"{self.test_file}::{name}" for name, _ in task.tests],
            test_files=[self.test_file],
        )
        self.ctx = ToolContext(task, self.workspace, runtime, project)

    def submitted(self, code: str) -> None:
        (self.workspace.root / self.task.filename).write_text(code, encoding="utf-8")
        if self.ctx.has_debugger:
            self.ctx.debugger.code_changed()

    def close(self) -> None:
        self.ctx.close()
        self.workspace.close()
