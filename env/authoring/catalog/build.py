"""``python -m env.authoring catalog build``: every task of the manifest made a repository task folder in DIR.

    summary = build(Path("catalog"), Path("~/.cache/agentdebugger/catalog"), only=[], workers=2, ray=None)

For each task: the sdists it needs, checked against their sha256 (``env.authoring.sdist.fetch``), the task folder
regenerated (``env.authoring.catalog.materialise``), its test environment prepared (``env.verdict.testenv.ensure``,
once per library, here: where the catalog is served). Jobs run in this process, in ``--jobs`` processes or on Ray
(``env.authoring.catalog.pool``); each returns the folder's files and what it cost, and this process writes them.

Resumable: ``DIR/.build/ledger.jsonl`` gets one line per task tried (built or error, the reason, CPU and wall
seconds), after its folder is in place. A task whose last line says built, from the same manifest entry and library
entry (a hash of both, ``key_of``), with its folder present, is skipped; a task that failed is tried again. One bad
entry (an sdist whose hash differs, a mutant that no longer regenerates, a suite that cannot run) is recorded with
its reason and skipped, never a stop of the build. Then ``DIR/catalog.json`` (``env.authoring.catalog.index``) lists
the folders built from the current manifest; a folder the build made for a task the manifest no longer has is removed.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field
from tqdm import tqdm

from env.authoring.baseline import write_tree
from env.authoring.catalog import materialise
from env.authoring.catalog.index import CatalogEntry, write_index
from env.authoring.catalog.manifest import CatalogTask, LibraryEntry, read_libraries, read_tasks
from env.authoring.catalog.pool import run
from env.authoring.cost import Meter
from env.authoring.ledger import append
from env.authoring.library import Library, SynthesisError
from env.authoring.synthesize import authoring_sandbox
from env.project import read_tree
from env.sandbox.runner import Sandbox
from env.verdict.testenv import TestEnvError, ensure

FORMAT = 1  # what a task folder holds: a change here rebuilds every task
STATE = ".build"


class Job(BaseModel):
    task: CatalogTask
    library: LibraryEntry
    key: str


class Built(BaseModel):
    """One line of the build's ledger (``files`` only travels from the worker, it is never written there)."""

    id: str
    key: str
    library: str
    status: Literal["built", "error"]
    detail: str = ""
    cpu_seconds: float = 0.0
    wall_seconds: float = 0.0
    files: dict[str, str] = Field(default_factory=dict, exclude=True)


class BuildSummary(BaseModel):
    tasks: int
    built: int
    unchanged: int
    errors: dict[str, str] = Field(description="task id -> why it was not built")
    removed: list[str]
    index: str


def key_of(task: CatalogTask, entry: LibraryEntry) -> str:
    """What a built folder depends on: the task's entry, its library's (less the topic and split, which only the index
    holds), and the folder format."""
    pinned = entry.model_dump(mode="json", exclude={"topic", "split"})
    text = json.dumps([FORMAT, task.model_dump(mode="json"), pinned], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


_sandbox: Sandbox | None = None
_libraries: dict[str, Library] = {}  # one worker builds many tasks of a library: its files read once


def _worker_sandbox() -> Sandbox:
    global _sandbox
    if _sandbox is None:
        # Its runs check what synthesis and mining decided, under their limits, counted in CPU time: every failing test
        # of a task at once (165 for one) takes longer than a served run may (each task's own runs were proven there).
        try:
            _sandbox = authoring_sandbox()
        except SynthesisError as exc:
            raise materialise.MaterialiseError(str(exc)) from None
    return _sandbox


def build_one(job: Job) -> Built:
    """One task folder, made in a scratch folder (in whichever process or Ray worker runs it) and returned as files."""
    task, entry = job.task, job.library
    files: dict[str, str] = {}
    detail = ""
    with Meter() as cost, tempfile.TemporaryDirectory(prefix="adbg-catalog-") as scratch:
        folder = Path(scratch) / task.id
        try:
            if task.source == "synthesized":
                key = entry.model_dump_json()
                if key not in _libraries:
                    _libraries[key] = materialise.library(entry)
                materialise.synthesized(task, _libraries[key], _worker_sandbox(), folder)
            else:
                materialise.mined(task, entry, _worker_sandbox(), folder)
            files = read_tree(folder)
        except Exception as exc:  # one entry's failure, whatever it is, is that entry's: recorded with its reason
            detail = f"{type(exc).__name__}: {' '.join(str(exc).split())[:1500]}"
    status: Literal["built", "error"] = "error" if detail else "built"
    return Built(id=task.id, key=job.key, library=task.library, status=status, detail=detail, files=files,
                 cpu_seconds=cost.cpu_seconds, wall_seconds=cost.wall_seconds)  # fmt: skip


def read_ledger(path: Path) -> list[Built]:
    found = []
    for line in path.read_text(encoding="utf-8").splitlines() if path.is_file() else []:
        try:
            found.append(Built.model_validate_json(line))
        except ValueError:
            continue  # a line a stop cut short: that task is built again
    return found


def place(out: Path, built: Built) -> None:
    """The returned files as DIR/<id>/, complete before they replace what was there."""
    staging = out / STATE / "staging" / built.id
    shutil.rmtree(staging, ignore_errors=True)
    write_tree(staging, built.files)
    final = out / built.id
    if final.exists():
        shutil.rmtree(final)
    staging.rename(final)


def requirements_of(task: CatalogTask, entry: LibraryEntry) -> tuple[str, ...]:
    """What the task's tests import besides pytest: a mined task's own pins (an older release may need others), else
    its library's."""
    return tuple(entry.requirements if task.requirements is None else task.requirements)


def prepare(needs: dict[tuple[str, ...], str], say: Callable[[str], None]) -> dict[tuple[str, ...], str]:
    """Each test environment the tasks need (requirements -> the library whose task needs them), here; requirements
    -> why they could not be prepared."""
    failed = {}
    for requirements, library in sorted(needs.items()):
        try:
            ensure(list(requirements))
        except TestEnvError as exc:
            failed[requirements] = f"TestEnvError: {exc}"
            say(f"{library}: no test environment for {', '.join(requirements) or 'pytest alone'}: {exc}")
    return failed


def plan(manifest: Path, only: list[str]) -> tuple[list[CatalogTask], dict[str, LibraryEntry], list[CatalogTask]]:
    """Every task of the manifest, the libraries, and the tasks selected (``only``: of these libraries)."""
    libraries = {e.name: e for e in read_libraries(manifest / "libraries.json")}
    tasks = read_tasks(manifest / "tasks.jsonl")
    unknown = sorted(set(only) - set(libraries))
    if unknown:
        raise ValueError(f"--only names libraries {manifest / 'libraries.json'} does not list: {', '.join(unknown)}")
    return tasks, libraries, [t for t in tasks if not only or t.library in only]


def build(manifest: Path, out: Path, only: list[str], workers: int, ray: str | None, say: Callable[[str], None] = print) -> BuildSummary:
    tasks, libraries, selected = plan(manifest, only)
    (out / STATE).mkdir(parents=True, exist_ok=True)
    ledger = out / STATE / "ledger.jsonl"
    last = {b.id: b for b in read_ledger(ledger)}
    keys = {t.id: key_of(t, libraries[t.library]) for t in tasks if t.library in libraries}
    errors: dict[str, str] = {t.id: f"the library {t.library} is not in libraries.json" for t in selected if t.library not in libraries}

    def fresh(task: CatalogTask) -> bool:  # built from this very entry, its folder in place
        done = last.get(task.id)
        return done is not None and done.status == "built" and done.key == keys.get(task.id) and (out / task.id / "task.json").is_file()

    current = {t.id for t in selected if fresh(t)}
    todo = [t for t in selected if t.id in keys and t.id not in current]
    needs = {requirements_of(t, libraries[t.library]): t.library for t in todo}
    unprepared = prepare(needs, say)
    for task in todo:
        if requirements_of(task, libraries[task.library]) in unprepared:
            errors[task.id] = unprepared[requirements_of(task, libraries[task.library])]
            append(
                ledger, Built(id=task.id, key=keys[task.id], library=task.library, status="error", detail=errors[task.id]).model_dump_json()
            )
    jobs = [Job(task=t, library=libraries[t.library], key=keys[t.id]) for t in todo if t.id not in errors]
    built = 0
    with tqdm(total=len(selected), initial=len(selected) - len(todo), desc="catalog build", unit="task", file=sys.stderr) as bar:
        bar.update(len(todo) - len(jobs))
        for result in run(build_one, jobs, workers, ray):
            if result.status == "built":
                place(out, result)
                built += 1
            else:
                errors[result.id] = result.detail
                tqdm.write(f"{result.id}: not built: {result.detail}", file=sys.stderr)
            append(ledger, result.model_dump_json())  # after the folder is in place: a cut build redoes only what it lost
            last[result.id] = result
            bar.update(1)
    removed = _remove_stale(out, {t.id for t in tasks}, last)
    entries = [CatalogEntry(id=t.id, library=t.library, source=t.source, split=libraries[t.library].split, difficulty=t.difficulty)
               for t in tasks if fresh(t)]  # fmt: skip
    index = write_index(out, entries)
    return BuildSummary(tasks=len(selected), built=built, unchanged=len(current), errors=errors, removed=removed, index=str(index))


def _remove_stale(out: Path, listed: set[str], last: dict[str, Built]) -> list[str]:
    """Folders this build made for tasks the manifest no longer lists (never a folder it did not make)."""
    stale = sorted(i for i, b in last.items() if i not in listed and b.status == "built" and (out / i).is_dir())
    for task_id in stale:
        shutil.rmtree(out / task_id)
    return stale
