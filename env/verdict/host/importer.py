"""The project's modules imported through proxies (``ProjectFinder``), and the test environment's library copies that
import the project themselves (``LibraryCopies``).
"""

from __future__ import annotations

import builtins
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import threading
import types
from typing import Any

from .proxies import RemoteModule
from .remote_run import RemoteRun

# The test runner's own top-level modules: never the project's, whatever the project names its files.
RUNNER_NAMES = frozenset({"pytest", "_pytest", "pluggy", "py"})


def _in_tests_tree(name: str) -> bool:
    """Whether a top-level module of that name is on the path outside site-packages (a helper beside the tests). A
    directory of tests with no ``__init__.py`` is no helper: its name is the project's (``examples/`` holding tests)."""
    here = [p for p in sys.path if not p.rstrip("/").endswith("-packages")]
    try:
        found = importlib.machinery.PathFinder.find_spec(name, here)  # path entries only: no recursion
    except (ImportError, ValueError):
        return False
    return found is not None and found.origin is not None


def _tests_package(fullname: str, roots: list[str]) -> importlib.machinery.ModuleSpec | None:
    """A package of the tests' inside the project's package (``isodate.tests``: src/isodate/tests/__init__.py in the
    tests' tree, which holds the test files and never the project's): its spec, loaded here as the tests' code. Looked
    for under the project's source roots in the tests' tree (``roots``) and the path's own entries."""
    *parents, last = fullname.split(".")
    entries = roots + [p for p in sys.path if p and not p.rstrip("/").endswith("-packages")]
    here = [os.path.join(p, *parents) for p in dict.fromkeys(entries)]
    try:
        found = importlib.machinery.PathFinder.find_spec(last, here)
    except (ImportError, ValueError):
        return None
    if found is None or found.origin is None or not found.submodule_search_locations:
        return None
    # found under its last name: the same file and folder under its full one
    return importlib.util.spec_from_file_location(fullname, found.origin, submodule_search_locations=list(found.submodule_search_locations))


class LibraryCopies:
    """A library of the test environment that imports one of the project's names (hypothesis imports ``attr``) gets
    the environment's own installed copy, as the test machinery it is; the tests get the project. Each import made
    by a file in site-packages runs with the installed modules in ``sys.modules`` (kept here between imports) and the
    project's proxies put back after it, so the library's names stay bound to its copy."""

    def __init__(self, finder: ProjectFinder, tests_root: str):
        self.finder, self.tests_root = finder, tests_root
        self.copies: dict[str, types.ModuleType] = {}
        self.real_import = builtins.__import__
        self.lock = threading.RLock()
        self.depth = 0

    def install(self) -> None:
        builtins.__import__ = self.hooked

    def take_loaded(self) -> None:
        """The test environment's modules already loaded under the project's names, kept for the libraries'
        imports: the tests' imports find the project instead."""
        with self.lock:
            for key in [k for k in sys.modules if k.partition(".")[0] in self.finder.names]:
                self.copies[key] = sys.modules.pop(key)

    def hooked(self, name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        if self.depth == 0 and self._library_wants_project(name, globals, level):
            return self._import_copy(name, globals, locals, fromlist, level)
        return self.real_import(name, globals, locals, fromlist, level)

    def _library_wants_project(self, name: str, globals: Any, level: int) -> bool:
        if not isinstance(globals, dict):
            return False
        # The name first: a run makes thousands of imports (pytest's own, inside its functions), nearly none of the
        # project's, and this test is the cheap one.
        top = name if level == 0 else str(globals.get("__package__") or "")
        if top.partition(".")[0] not in self.finder.names:
            return False
        file = globals.get("__file__")
        return isinstance(file, str) and "-packages" + os.sep in file and not os.path.abspath(file).startswith(self.tests_root)

    def _import_copy(self, name: str, globals: Any, locals: Any, fromlist: Any, level: int) -> Any:
        tops = self.finder.names
        with self.lock:
            proxies = {k: m for k, m in sys.modules.items() if k.partition(".")[0] in tops}
            for key in proxies:
                del sys.modules[key]
            sys.modules.update(self.copies)
            self.finder.enabled, self.depth = False, self.depth + 1
            try:
                return self.real_import(name, globals, locals, fromlist, level)
            finally:
                self.finder.enabled, self.depth = True, self.depth - 1
                for key in [k for k in sys.modules if k.partition(".")[0] in tops]:
                    self.copies[key] = sys.modules.pop(key)
                sys.modules.update(proxies)


class ProjectFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports of the project's top-level names (and everything under them) become proxies."""

    def __init__(self, remote: RemoteRun, names: set[str], roots: list[str] | None = None):
        self.remote, self.names = remote, set(names)
        self.roots = list(roots or [])  # the project's source roots in the tests' tree (src/ ...): where its test packages are
        self.enabled = True  # off while a library of the test environment imports its own copy (LibraryCopies)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        top = fullname.partition(".")[0]
        if top not in self.names or not self.enabled:
            return None
        if top == fullname and _in_tests_tree(top):
            return None  # the tests' own helper module wins, as it does under plain pytest
        if top != fullname:
            if not isinstance(sys.modules.get(top), RemoteModule):
                return None  # a submodule of a package that is not the project's
            if not isinstance(sys.modules.get(fullname.rpartition(".")[0]), RemoteModule):
                return None  # under the tests' own package (below): found on its path, as any module of theirs
            tests = _tests_package(fullname, self.roots)
            if tests is not None:
                return tests
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        __tracebackhide__ = True
        module = self.remote.op("import", spec.name)
        if not isinstance(module, RemoteModule):
            raise ImportError(f"{spec.name} is not a module in the project")
        types.ModuleType.__setattr__(module, "__name__", spec.name)
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        """Already executed, in the sandbox."""
