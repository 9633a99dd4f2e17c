"""``python -m env.authoring catalog synthesize``: synthesized tasks into the manifest, each library at most a share.

    report = synthesize(Path("catalog"), work, only=[], n=20, runs=3)

For each library of libraries.json (or those of ``only``): its pinned release (the sdist checked against its
sha256), synthesized by ``env.authoring.synthesize.Synthesis`` with its requirements and tests into ``WORK/<slug>``
(resumable there: a second run goes on where the first stopped), up to ``n`` valid tasks. A library that cannot be
synthesized (its sdist's hash differs, no test passes sandboxed and under the split, its suite needs the network, no
test environment...) is recorded in ``WORK/libraries.jsonl`` with the reason and skipped; it is tried again when its
entry in libraries.json changes, or with ``retry``.

Then every task waiting in a work folder of a listed library (this run's and earlier runs') is offered to the
manifest (``admit``): a task already listed stays, one failing the same tests as a listed synthesized task of its
library is a duplicate, and no library may give more than ``max_share`` of the catalog's tasks (10%:
``manifest.share_cap``; enforced here, where tasks are added). A task over the cap is not lost: it stays in its work
folder and joins when other libraries' tasks make room. Each entry records the mutation (path, operator, lines,
digest), the three lists, the validation (runs of each state, CPU and wall seconds of the proof, measured by
``env.authoring.cost`` during synthesis) and the difficulty (``env.authoring.difficulty``).
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from env.authoring.catalog import materialise
from env.authoring.catalog.manifest import (
    MAX_SHARE,
    CatalogTask,
    LibraryEntry,
    Mutation,
    SynthesisYield,
    ValidationRecord,
    read_libraries,
    read_tasks,
    share_cap,
    write_libraries,
    write_tasks,
)
from env.authoring.cost import Meter
from env.authoring.difficulty import Difficulty
from env.authoring.ledger import append, read_ledger
from env.authoring.library import SynthesisError
from env.authoring.sdist import SdistError
from env.authoring.synthesize import Synthesis
from env.project import RepoTask, load_repo_task
from env.verdict.testenv import TestEnvError

STATE = ".synthesis"  # env.authoring.synthesize's state folder in each work folder


class LibraryRecord(BaseModel):
    """One line of WORK/libraries.jsonl: what became of one library in one run."""

    library: str
    identity: str
    status: Literal["synthesized", "failed"]
    detail: str = ""
    valid: int = 0
    tried: int = 0
    cpu_seconds: float = 0.0  # this run's, baseline and every candidate included (env.authoring.cost)
    wall_seconds: float = 0.0


class Admitted(BaseModel):
    """What became of one library's waiting tasks when offered to the manifest."""

    offered: int = 0
    added: int = 0
    listed: int = 0
    duplicates: int = 0
    over_cap: int = 0


class IntakeReport(BaseModel):
    failed: dict[str, str] = Field(default_factory=dict, description="library -> why it gave no task")
    skipped: dict[str, str] = Field(default_factory=dict, description="waiting task -> why it cannot join the manifest")
    admitted: dict[str, Admitted] = Field(default_factory=dict)
    cap: int = 0
    tasks: int = 0


def identity(entry: LibraryEntry) -> str:
    # what the library is, not what became of it: a synthesis's recorded yield changes no identity
    return hashlib.sha256(entry.model_dump_json(exclude={"synthesis"}).encode()).hexdigest()[:16]


def slug(entry: LibraryEntry) -> str:
    """The work folder's name: env.authoring.library.Library.slug of the entry's release."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", f"{entry.name}-{entry.version}")


def catalog_task(task: RepoTask, entry: LibraryEntry, costs: dict[str, tuple[int, float, float]]) -> CatalogTask:
    """A synthesis's task folder as a manifest entry; ValueError if it lacks what regenerates or prices it."""
    planted = task.synthesis
    missing = [k for k in ("path", "operator", "start", "end", "digest") if k not in planted]
    if missing:
        raise ValueError(f"its task.json records no {', '.join(missing)} of the mutation (synthesized before they were recorded)")
    if task.id not in costs or costs[task.id][0] == 0:
        raise ValueError("its synthesis ledger records no validation cost (synthesized before it was recorded)")
    runs, cpu, wall = costs[task.id]
    basis = task.difficulty_basis
    found = Difficulty(
        int(basis.get("fail_to_pass") or 0),
        int(basis.get("call_distance") or 0),
        None if basis.get("heuristic_solved") is None else bool(basis.get("heuristic_solved")),
    )
    return CatalogTask(
        id=task.id,
        library=entry.name,
        source="synthesized",
        mutation=Mutation(path=planted["path"], operator=planted["operator"], start=int(planted["start"]), end=int(planted["end"]), digest=planted["digest"]),
        fail_to_pass=task.fail_to_pass,
        pass_to_pass=task.pass_to_pass,
        held_out=task.held_out,
        validation=ValidationRecord(runs=runs, cpu_seconds=cpu, wall_seconds=wall),
        difficulty=task.difficulty,
        difficulty_score=found.score,
        problem_statement=task.problem_statement,
    )  # fmt: skip


def waiting(work: Path, entry: LibraryEntry, skipped: dict[str, str]) -> list[CatalogTask]:
    """The valid tasks a synthesis of this entry's release wrote into its work folder."""
    folder = work / slug(entry)
    if not (folder / STATE / "library.json").is_file():
        return []
    costs = {d.task: (d.validation_runs, d.validation_cpu_seconds, d.validation_wall_seconds)
             for d in read_ledger(folder / STATE / "ledger.jsonl") if d.status == "valid"}  # fmt: skip
    found = []
    for task_folder in sorted(p for p in folder.iterdir() if p.name != STATE and (p / "task.json").is_file()):
        try:
            task = load_repo_task(task_folder)
            if task.synthesis.get("library") == slug(entry) and task.synthesis.get("pypi") == entry.pin:
                found.append(catalog_task(task, entry, costs))
        except ValueError as exc:
            skipped[task_folder.name] = " ".join(str(exc).split())[:300]
    return found


def admit(listed: list[CatalogTask], offered: list[CatalogTask], max_share: float) -> tuple[list[CatalogTask], dict[str, Admitted], int]:
    """The manifest with the offered tasks that may join it (see the module's docstring), per library what became of
    them, and the cap: the most tasks a library may give."""
    ids = {t.id for t in listed}
    signatures = {(t.library, frozenset(t.fail_to_pass)) for t in listed if t.source == "synthesized"}
    report: dict[str, Admitted] = {}
    fresh: dict[str, list[CatalogTask]] = {}
    for task in sorted(offered, key=lambda t: t.id):
        row = report.setdefault(task.library, Admitted())
        row.offered += 1
        signature = (task.library, frozenset(task.fail_to_pass))
        if task.id in ids:
            row.listed += 1
        elif task.source == "synthesized" and signature in signatures:
            row.duplicates += 1  # two mutants caught by the same tests; two real bugs a later test caught are two bugs
        else:
            if task.source == "synthesized":
                signatures.add(signature)
            fresh.setdefault(task.library, []).append(task)
    have = {name: sum(t.library == name for t in listed) for name in {t.library for t in listed} | set(fresh)}
    cap = share_cap({name: have[name] + len(fresh.get(name, [])) for name in have}, max_share)
    added = []
    for name, tasks in fresh.items():
        room = max(0, cap - have[name])
        added += tasks[:room]
        report[name].added = min(room, len(tasks))
        report[name].over_cap = len(tasks) - report[name].added
    return listed + added, report, cap


def synthesize_library(entry: LibraryEntry, work: Path, n: int, runs: int, say: Callable[[str], None]) -> LibraryRecord:
    record = LibraryRecord(library=entry.name, identity=identity(entry), status="synthesized")
    with Meter() as cost:
        try:
            lib = materialise.library(entry)
            summary = Synthesis(lib, work / slug(entry), runs=runs, seed=0, log=say).run(n)
            record.valid, record.tried = summary.valid, summary.tried
        except (SynthesisError, SdistError, TestEnvError, materialise.MaterialiseError, ValueError) as exc:
            record.status, record.detail = "failed", f"{type(exc).__name__}: {' '.join(str(exc).split())[:1500]}"
    record.cpu_seconds, record.wall_seconds = cost.cpu_seconds, cost.wall_seconds
    return record


def synthesize(
    manifest: Path, work: Path, only: list[str], n: int, runs: int = 3, max_share: float = MAX_SHARE, retry: bool = False,
    say: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
) -> IntakeReport:  # fmt: skip
    entries = read_libraries(manifest / "libraries.json")
    unknown = sorted(set(only) - {e.name for e in entries})
    if unknown:
        raise ValueError(f"--only names libraries {manifest / 'libraries.json'} does not list: {', '.join(unknown)}")
    work.mkdir(parents=True, exist_ok=True)
    ledger = work / "libraries.jsonl"
    last: dict[str, LibraryRecord] = {}
    for line in ledger.read_text(encoding="utf-8").splitlines() if ledger.is_file() else []:
        try:
            record = LibraryRecord.model_validate_json(line)
        except ValueError:
            continue  # a line a stop cut short
        last[record.library] = record
    report = IntakeReport()
    for entry in (e for e in entries if not only or e.name in only):
        before = last.get(entry.name)
        if before is not None and before.status == "failed" and before.identity == identity(entry) and not retry:
            report.failed[entry.name] = before.detail
            say(f"{entry.name}: skipped, it failed before with this entry ({before.detail[:200]}); --retry tries again")
            continue
        record = synthesize_library(entry, work, n, runs, say)
        append(ledger, record.model_dump_json())
        if record.status == "failed":
            report.failed[entry.name] = record.detail
            say(f"{entry.name}: not synthesized: {record.detail}")
        else:
            say(
                f"{entry.name}: {record.valid} valid task(s) of {record.tried} tried; this run: CPU {record.cpu_seconds:.1f} s, wall {record.wall_seconds:.1f} s"
            )
            if record.tried:  # the manifest keeps the yield: a calibration needs no work folder of this machine's
                entry.synthesis = SynthesisYield(valid=record.valid, tried=record.tried)
                write_libraries(manifest / "libraries.json", entries)
    offered = [t for entry in entries for t in waiting(work, entry, report.skipped)]
    listed = read_tasks(manifest / "tasks.jsonl")
    merged, report.admitted, report.cap = admit(listed, offered, max_share)
    write_tasks(manifest / "tasks.jsonl", merged)
    report.tasks = len(merged)
    return report


def describe(report: IntakeReport, max_share: float) -> str:
    lines = [f"{name}: FAILED: {why}" for name, why in sorted(report.failed.items())]
    lines += [f"{name}: {a.offered} waiting task(s): {a.added} added, {a.listed} already listed, {a.duplicates} duplicate(s), "
              f"{a.over_cap} over the cap" for name, a in sorted(report.admitted.items())]  # fmt: skip
    lines += [f"not offered: {task}: {why}" for task, why in sorted(report.skipped.items())]
    lines.append(f"the manifest lists {report.tasks} task(s); a library may give at most {report.cap} ({max_share:.0%} of the catalog)")
    return "\n".join(lines)


def dumps(report: IntakeReport) -> str:
    return json.dumps(report.model_dump(), indent=2)
