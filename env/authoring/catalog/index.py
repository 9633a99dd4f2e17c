"""The built catalog's index, ``DIR/catalog.json``: what a server needs to list and split the tasks without the manifest.

    write_index(folder, entries)      # sorted by id
    read_index(folder).tasks          # [IndexEntry(id, library, source, split, difficulty), ...]

It lists exactly the task folders ``catalog build`` made from the current manifest, each folder ``DIR/<id>/``:

    {"format": 1, "tasks": [{"id": "parse-1.20.2-0a1b2c3d4e", "library": "parse", "source": "synthesized",
                              "split": "train", "difficulty": "medium"}, ...]}
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from env.authoring.catalog.manifest import Source, Split

INDEX = "catalog.json"
FORMAT = 1


class IndexEntry(BaseModel):
    id: str
    library: str
    source: Source
    split: Split
    difficulty: Literal["easy", "medium", "hard"]


class Index(BaseModel):
    format: int = FORMAT
    tasks: list[IndexEntry]


def write_index(folder: Path, entries: list[IndexEntry]) -> Path:
    path = folder / INDEX
    partial = folder / f".{INDEX}.partial"  # a reader never sees half a file
    partial.write_text(Index(tasks=sorted(entries, key=lambda e: e.id)).model_dump_json(indent=1) + "\n", encoding="utf-8")
    partial.replace(path)
    return path


def read_index(folder: Path) -> Index:
    return Index.model_validate_json((folder / INDEX).read_text(encoding="utf-8"))
