"""Writing the built catalog's index, ``DIR/catalog.json``: what a server needs to list and split the tasks without
the manifest. Its format is the server's own (``env.families.catalog_dir.CatalogIndex``, which reads it):

    write_index(folder, entries)      # sorted by id
    read_index(folder).tasks          # [CatalogEntry(id, library, source, split, difficulty), ...]

It lists exactly the task folders ``catalog build`` made from the current manifest, each folder ``DIR/<id>/``:

    {"format": 1, "tasks": [{"id": "parse-1.20.2-0a1b2c3d4e", "library": "parse", "source": "synthesized",
                              "split": "train", "difficulty": "medium"}, ...]}
"""

from __future__ import annotations

from pathlib import Path

from env.families.catalog_dir import INDEX, CatalogEntry, CatalogIndex

__all__ = ["INDEX", "CatalogEntry", "read_index", "write_index"]


def write_index(folder: Path, entries: list[CatalogEntry]) -> Path:
    path = folder / INDEX
    partial = folder / f".{INDEX}.partial"  # a reader never sees half a file
    partial.write_text(CatalogIndex(tasks=sorted(entries, key=lambda e: e.id)).model_dump_json(indent=1) + "\n", encoding="utf-8")
    partial.replace(path)
    return path


def read_index(folder: Path) -> CatalogIndex:
    return CatalogIndex.model_validate_json((folder / INDEX).read_text(encoding="utf-8"))
