"""The catalog's committed manifest: which libraries, pinned how, and per task only what regenerates it.

    libraries = read_libraries(Path("catalog/libraries.json"))      # [LibraryEntry, ...]
    tasks = read_tasks(Path("catalog/tasks.jsonl"))                  # [CatalogTask, ...]
    write_tasks(path, tasks)                                         # sorted by id, one JSON line each

No third-party source is committed: a library is its PyPI name, version and sdist sha256; a mined task is the release
pair and the files the fix touched; a synthesized task is the mutation (file, lines, operator, the mutated file's
digest), which ``env.authoring.mutate`` regenerates from the pinned sdist. Splits are per library (no library is in
two splits), so every task's split is its library's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import BaseModel, Field, model_validator

from env.contract import SPLITS, Difficulty, Source, Split

__all__ = ["SPLITS", "CatalogTask", "LibraryEntry", "Mutation", "ReleasePair", "Source", "Split", "ValidationRecord"]

MAX_SHARE = 0.10  # no library gives more than this share of the catalog's tasks
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class SynthesisYield(BaseModel):
    """What a library's last synthesis decided: the candidates it tried and those that proved valid."""

    valid: int = Field(ge=0)
    tried: int = Field(ge=1)


class LibraryEntry(BaseModel):
    """One library of the catalog: the release tasks are synthesized from, and the releases bugs are mined from."""

    name: str = Field(description="the PyPI project name")
    version: str = Field(description="the release synthesized tasks are planted in")
    sdists: dict[str, str] = Field(description="release -> sha256 of its sdist archive: every release the catalog downloads")
    topic: str = Field(description="what the library is for: parsing, dates, text, data structures, configuration, CLI, URLs ...")
    split: Split
    requirements: list[str] = Field(default_factory=list, description="what the tests import besides pytest (exact pins)")
    tests: list[str] = Field(default_factory=list, description="test files or folders (empty: pytest's naming)")
    environment: dict[str, str] = Field(default_factory=dict, description="what the tests need, e.g. PYTHONPATH=src")
    synthesis: SynthesisYield | None = Field(
        default=None, description="written by `catalog synthesize`: its last synthesis's yield (the calibration's valid share)"
    )

    @model_validator(mode="after")
    def _pinned(self) -> LibraryEntry:
        if self.version not in self.sdists:
            raise ValueError(f"{self.name}: the release {self.version} has no sdist hash in 'sdists'")
        for release, digest in self.sdists.items():
            if not _SHA256.match(digest):
                raise ValueError(f"{self.name} {release}: {digest!r} is not a sha256 (64 lowercase hex digits)")
        return self

    @property
    def pin(self) -> str:
        return f"{self.name}=={self.version}"


class Mutation(BaseModel):
    """What regenerates a synthesized task: the mutant of ``path`` in the library's release whose digest this is."""

    path: str
    operator: str
    start: int
    end: int
    digest: str = Field(description="env.authoring.mutate.Mutant.digest: the mutated file at this path")


class ReleasePair(BaseModel):
    """What regenerates a mined task: ``buggy`` has the bug, ``fixed`` fixed it in ``code``; the tests are ``fixed``'s."""

    buggy: str
    fixed: str
    code: list[str] = Field(description="the source files the fix changed: the gold patch is their diff between the releases")
    test_files: list[str] = Field(description="the later release's test files the task runs")


class ValidationRecord(BaseModel):
    """How the task was proven valid: runs of each state, and what the proof cost."""

    runs: int
    cpu_seconds: float
    wall_seconds: float


class CatalogTask(BaseModel):
    id: str
    library: str
    source: Source
    mutation: Mutation | None = None
    pair: ReleasePair | None = None
    fail_to_pass: list[str]
    pass_to_pass: list[str]
    held_out: list[str] = Field(default_factory=list)
    sandboxed: list[str] | None = Field(
        None, description="listed tests the split cannot run, run sandboxed as placement decided (a mined task's; none: all under the split)"
    )  # fmt: skip
    requirements: list[str] | None = Field(
        None, description="what a mined task's tests import besides pytest, as mining pinned them (none: the library's requirements)"
    )  # fmt: skip
    validation: ValidationRecord
    difficulty: Difficulty
    difficulty_score: float = Field(ge=0.0, le=1.0, description="env.authoring.difficulty's estimate")
    problem_statement: str = Field(
        "", description="the statement as first written: a rerun of the failing tests can print other object addresses (empty: "
        "the build writes one from the failing tests' output)",
    )  # fmt: skip

    @model_validator(mode="after")
    def _regenerable(self) -> CatalogTask:
        if (self.source == "synthesized") != (self.mutation is not None) or (self.source == "mined") != (self.pair is not None):
            raise ValueError(f"{self.id}: a synthesized task needs 'mutation', a mined one 'pair' (and not the other)")
        return self


def read_libraries(path: Path) -> list[LibraryEntry]:
    entries = [LibraryEntry.model_validate(item) for item in json.loads(path.read_text(encoding="utf-8"))]
    seen: set[str] = set()
    for entry in entries:
        if entry.name in seen:
            raise ValueError(f"{path}: the library {entry.name} is listed twice")
        seen.add(entry.name)
    return entries


def write_libraries(path: Path, entries: list[LibraryEntry]) -> None:
    data = [entry.model_dump(exclude_defaults=True) for entry in sorted(entries, key=lambda e: e.name.lower())]
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def read_tasks(path: Path) -> list[CatalogTask]:
    if not path.is_file():
        return []
    tasks = [CatalogTask.model_validate_json(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    ids = [t.id for t in tasks]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise ValueError(f"{path}: task ids listed twice: {', '.join(duplicated[:5])}")
    return tasks


def write_tasks(path: Path, tasks: list[CatalogTask]) -> None:
    lines = [task.model_dump_json(exclude_none=True) for task in sorted(tasks, key=lambda t: t.id)]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def share_cap(counts: dict[str, int], share: float = MAX_SHARE) -> int:
    """The most tasks one library may give when the libraries could give ``counts``, so that none gives more than
    ``share`` of the catalog: the largest c with c <= share * sum(min(n, c)). With fewer than 1/share libraries it is 0:
    no library can be at most a tenth of a catalog of fewer than ten libraries."""
    best = 0
    for c in range(1, max(counts.values(), default=0) + 1):
        if c <= share * sum(min(n, c) for n in counts.values()) + 1e-9:
            best = c
    return best
