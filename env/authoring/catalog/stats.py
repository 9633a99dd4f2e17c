"""``python -m env.authoring catalog stats [--json]``: the manifest's tasks by source, library, split and difficulty.

    counts(libraries, tasks)     # the JSON: tasks, mined, synthesized, libraries, by_split, by_library
    table(libraries, tasks)      # the same and the difficulties, as text

``libraries`` counts the libraries that give at least one task, ``by_library`` lists those; a library listed in
libraries.json without a task is named in the text only.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from env.authoring.catalog.manifest import SPLITS, CatalogTask, LibraryEntry


def counts(libraries: list[LibraryEntry], tasks: list[CatalogTask]) -> dict[str, Any]:
    split = {e.name: e.split for e in libraries}
    by_library: dict[str, dict[str, Any]] = {}
    for task in sorted(tasks, key=lambda t: t.library):
        row = by_library.setdefault(task.library, {"tasks": 0, "mined": 0, "synthesized": 0, "split": split.get(task.library, "unlisted")})
        row["tasks"] += 1
        row[task.source] += 1
    by_split: dict[str, int] = {s: sum(row["tasks"] for row in by_library.values() if row["split"] == s) for s in SPLITS}
    if any(row["split"] == "unlisted" for row in by_library.values()):  # a task of a library libraries.json lacks
        by_split["unlisted"] = sum(row["tasks"] for row in by_library.values() if row["split"] == "unlisted")
    return {
        "tasks": len(tasks),
        "mined": sum(t.source == "mined" for t in tasks),
        "synthesized": sum(t.source == "synthesized" for t in tasks),
        "libraries": len(by_library),
        "by_split": by_split,
        "by_library": by_library,
    }


def table(libraries: list[LibraryEntry], tasks: list[CatalogTask]) -> str:
    found = counts(libraries, tasks)
    levels = Counter(t.difficulty for t in tasks)
    lines = [
        f"{found['tasks']} task(s) from {found['libraries']} librar{'y' if found['libraries'] == 1 else 'ies'}: "
        f"{found['mined']} mined, {found['synthesized']} synthesized",
        "by split: " + ", ".join(f"{s} {n}" for s, n in found["by_split"].items()),
        "by difficulty: " + ", ".join(f"{level} {levels.get(level, 0)}" for level in ("easy", "medium", "hard")),
        "",
    ]
    rows = [("library", "split", "mined", "synthesized", "tasks", "share", "easy", "medium", "hard")]
    for name, row in found["by_library"].items():
        own = Counter(t.difficulty for t in tasks if t.library == name)
        share = f"{row['tasks'] / found['tasks']:.1%}"
        rows.append((name, row["split"], str(row["mined"]), str(row["synthesized"]), str(row["tasks"]), share,
                     str(own.get("easy", 0)), str(own.get("medium", 0)), str(own.get("hard", 0))))  # fmt: skip
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines += ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows]
    idle = sorted(e.name for e in libraries if e.name not in found["by_library"])
    if idle:
        lines += ["", f"{len(idle)} listed librar{'y' if len(idle) == 1 else 'ies'} without a task: {', '.join(idle)}"]
    return "\n".join(lines)
