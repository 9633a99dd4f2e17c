"""``python -m env.authoring catalog mined DIR ...``: mined bugs into the manifest, each release pair pinned by hash.

    report = admit_mined(Path("catalog"), [Path("mined")])

``python -m env.authoring mine NAME --out DIR`` writes one ``CatalogTask`` (source "mined") per valid bug into
``DIR/mined.jsonl``. This offers them to the manifest as ``catalog synthesize`` offers synthesized tasks (``intake.admit``:
a listed id stays, no library gives more than ``max_share`` of the tasks; a task over the cap joins a later run), after
two checks per task, each recorded with its reason when it fails and never stopping the others:

- its library is in libraries.json (its split is the library's: a library the catalog lacks is surveyed first, with
  ``python -m env.authoring.catalog.survey``, never placed here);
- both releases of its pair are pinned in the library's ``sdists``: a release not yet pinned gets the sha256 of the sdist
  downloaded now, one pinned already must be downloaded with that digest (``sdist.fetch`` refuses another).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from env.authoring import sdist
from env.authoring.catalog.intake import Admitted, admit
from env.authoring.catalog.manifest import MAX_SHARE, CatalogTask, LibraryEntry, read_libraries, read_tasks, write_libraries, write_tasks
from env.authoring.mine import CATALOG
from env.authoring.sdist import SdistError


class MinedReport(BaseModel):
    skipped: dict[str, str] = Field(default_factory=dict, description="mined task -> why it cannot join the manifest")
    pinned: dict[str, str] = Field(default_factory=dict, description="NAME==RELEASE newly pinned -> its sdist's sha256")
    admitted: dict[str, Admitted] = Field(default_factory=dict)
    cap: int = 0
    tasks: int = 0


def read_mined(folder: Path) -> list[CatalogTask]:
    """The mined tasks of one ``mine --out`` folder; ValueError naming the file when it has none or a line is bad."""
    path = folder / CATALOG
    if not path.is_file():
        raise ValueError(f"{folder} holds no {CATALOG}: it is not the --out folder of `python -m env.authoring mine`")
    tasks = read_tasks(path)
    wrong = [t.id for t in tasks if t.source != "mined"]
    if wrong:
        raise ValueError(f"{path}: not mined tasks: {', '.join(wrong[:5])}")
    return tasks


def _pin(entry: LibraryEntry, release: str, pinned: dict[str, str], digest_of: Callable[[str, str], str]) -> None:
    """Pin ``release`` in ``entry.sdists`` (SdistError when its sdist is not the one already pinned)."""
    known = entry.sdists.get(release)
    if known is not None:
        sdist.fetch(entry.name, release, known)  # the archive checked against the pin
        return
    digest = digest_of(entry.name, release)
    entry.sdists[release] = digest
    pinned[f"{entry.name}=={release}"] = digest


def admit_mined(
    manifest: Path, folders: list[Path], max_share: float = MAX_SHARE,
    digest_of: Callable[[str, str], str] = lambda name, release: sdist.sha256_of(sdist.archive(name, release)),
) -> MinedReport:  # fmt: skip
    entries = {e.name: e for e in read_libraries(manifest / "libraries.json")}
    report = MinedReport()
    offered: list[CatalogTask] = []
    for folder in folders:
        for task in read_mined(folder):
            entry = entries.get(task.library)
            if entry is None:
                report.skipped[task.id] = (
                    f"its library {task.library} is not in libraries.json: survey it first "
                    f"(python -m env.authoring.catalog.survey {task.library}==VERSION)"
                )
                continue
            assert task.pair is not None  # CatalogTask's validator: a mined task has its pair
            try:
                for release in (task.pair.buggy, task.pair.fixed):
                    _pin(entry, release, report.pinned, digest_of)
            except SdistError as exc:
                report.skipped[task.id] = " ".join(str(exc).split())[:500]
                continue
            offered.append(task)
    listed = read_tasks(manifest / "tasks.jsonl")
    merged, report.admitted, report.cap = admit(listed, offered, max_share)
    if report.pinned:
        write_libraries(manifest / "libraries.json", list(entries.values()))
    write_tasks(manifest / "tasks.jsonl", merged)
    report.tasks = len(merged)
    return report


def describe_mined(report: MinedReport, max_share: float) -> str:
    lines = [f"not offered: {task}: {why}" for task, why in sorted(report.skipped.items())]
    lines += [f"pinned {pin}: sha256 {digest}" for pin, digest in sorted(report.pinned.items())]
    lines += [f"{name}: {a.offered} mined task(s): {a.added} added, {a.listed} already listed, {a.duplicates} duplicate(s), "
              f"{a.over_cap} over the cap" for name, a in sorted(report.admitted.items())]  # fmt: skip
    lines.append(f"the manifest lists {report.tasks} task(s); a library may give at most {report.cap} ({max_share:.0%} of the catalog)")
    return "\n".join(lines)
