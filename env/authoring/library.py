"""A project to synthesize tasks from: a PyPI release's sdist or a folder, its code, its tests, what they need.

    lib = load_library("parse==1.20.2")            # or a folder; requirements and test paths optional
    lib.files, lib.tests, lib.environment, lib.pin, lib.slug
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from env.authoring import sdist
from env.patches import Files

LOCAL = "local"  # the version of a project given as a folder


class SynthesisError(RuntimeError):
    """The library cannot be synthesized from (no tests, none passing, the verdict cannot run here ...)."""


@dataclass
class Library:
    """A project to synthesize from: its files, where its code and tests are, what its tests need."""

    name: str
    version: str
    files: Files
    source_root: str = "."
    tests: list[str] = field(default_factory=list)
    requirements: list[str] = field(default_factory=list)

    @property
    def environment(self) -> dict[str, str]:
        return {} if self.source_root == "." else {"PYTHONPATH": self.source_root}

    @property
    def pin(self) -> str:
        """``name==version`` of a PyPI release; empty for a local folder (nothing to download it from)."""
        return "" if self.version == LOCAL else f"{self.name}=={self.version}"

    @property
    def slug(self) -> str:
        return re.sub(r"[^A-Za-z0-9._-]+", "-", f"{self.name}-{self.version}")


def load_library(source: str, requirements: list[str] | None = None, tests: list[str] | None = None) -> Library:
    """``NAME==VERSION`` (its sdist from PyPI) or a folder holding a project; its test files are pytest's defaults."""
    path = Path(source)
    if path.is_dir():
        tree, name, version = path, path.resolve().name, LOCAL
    else:
        name, version = sdist.parse_pin(source)
        tree = sdist.fetch(name, version)
    files = sdist.tree_files(tree)
    found = sdist.pytest_files(files, tests)
    if not found:
        raise SynthesisError(f"{source}: no test files (test_*.py or *_test.py){' under ' + ', '.join(tests) if tests else ''}")
    return Library(name, version, files, sdist.source_root(tree), found, list(requirements or []))
