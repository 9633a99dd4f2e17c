"""A built catalog served beside the built-in tasks (``ENV_CATALOG=DIR``): its index read and checked, its folders loaded.

    for task, entry in load_catalog_dir(Path("out/catalog")): ...   # CatalogError naming the file and the fault

DIR holds one repository task folder per task and the index ``catalog.json`` (``python -m env.authoring catalog
build`` writes both; ``CatalogIndex`` is its format):

    {"format": 1, "tasks": [{"id": "attrs-m-0001", "library": "attrs", "source": "mined", "split": "test", "difficulty": "hard"}, ...]}

Each id names its folder, DIR/<id>, loaded as ENV_TASK_DIRS loads one (``env.families.registry.load_task``: links,
patches and all); the index places the task (its split, library and source). The catalog is refused whole, when the
server starts, if any part of it is wrong: a missing or malformed index, an index listing no task, an id listed
twice, an id with no folder, a folder that cannot load, a task.json that disagrees with the index (its id, its
difficulty, or a split, library or source it states), a task that is not a repository, a library in two splits. A
partial catalog would train or evaluate on another set than the one that was built, without a word. Folders of DIR
the index does not name are not served.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from env.contract import Difficulty, Source, Split, Task
from env.families.base import TaskLoadError, read_task
from env.families.registry import FAMILIES, load_task

__all__ = ["INDEX", "CatalogEntry", "CatalogError", "CatalogIndex", "load_catalog_dir"]

INDEX = "catalog.json"
FORMAT = 1  # the index's format: a server refuses an index written in another
NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$"  # a folder of DIR (no path, no hidden folder), a PyPI project name
SHOWN_ERRORS = 3  # a malformed index's refusal names this many of its faults


class CatalogError(ValueError):
    """The built catalog cannot be served: the message names the file and what is wrong with it."""


class CatalogEntry(BaseModel):
    """One task of the index: its folder's name, and where it is served."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=NAME, description="the task's id and the name of its folder in DIR")
    library: str = Field(pattern=NAME, description="the PyPI project the task's code is from")
    source: Source
    split: Split = Field(description="its library's split: no library is in two")
    difficulty: Difficulty


class CatalogIndex(BaseModel):
    """``catalog.json``: the tasks of a built catalog, in listing order."""

    model_config = ConfigDict(extra="forbid")

    format: Literal[1] = FORMAT
    tasks: list[CatalogEntry]


def read_index(directory: Path) -> list[CatalogEntry]:
    """The index of the catalog in ``directory``, checked whole (CatalogError otherwise)."""
    index = directory / INDEX
    if not directory.is_dir():
        raise CatalogError(f"ENV_CATALOG={directory}: no such directory (a built catalog's directory: its task folders and {INDEX})")
    try:
        text = index.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CatalogError(
            f"{index}: missing; a built catalog's directory holds its index (python -m env.authoring catalog build writes it)"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogError(f"{index}: cannot be read: {exc}") from None
    try:
        entries = CatalogIndex.model_validate_json(text).tasks
    except ValidationError as exc:
        raise CatalogError(f"{index}: malformed: {_faults(exc)}") from None
    if not entries:
        raise CatalogError(f"{index}: lists no task; a catalog that serves nothing is a build that went wrong")
    ids = [entry.id for entry in entries]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise CatalogError(f"{index}: task ids listed twice: {', '.join(twice[:5])}")
    first: dict[str, CatalogEntry] = {}
    for entry in entries:
        seen = first.setdefault(entry.library, entry)
        if seen.split != entry.split:
            raise CatalogError(
                f"{index}: the library {entry.library!r} is in two splits ({seen.id!r} in {seen.split}, {entry.id!r} in "
                f"{entry.split}); a library's tasks are all in one split, or its code would be trained on and tested"
            )
    return entries


def load_catalog_dir(directory: Path) -> list[tuple[Task, CatalogEntry]]:
    """Every task the index of ``directory`` lists, loaded and checked against its entry, in the index's order."""
    index = directory / INDEX
    loaded = []
    for entry in read_index(directory):
        folder = directory / entry.id
        if not (folder / "task.json").is_file():
            raise CatalogError(f"{index}: lists task {entry.id!r}, but {folder / 'task.json'} does not exist")
        try:
            data = read_task(folder)
            _agrees(folder, data, entry)
            task = load_task(folder, data)
        except TaskLoadError as exc:
            raise CatalogError(f"{index}: task {entry.id!r} cannot be served: {exc}") from None
        served = task.summary().get("difficulty")
        if served != entry.difficulty:
            raise CatalogError(f"{index}: task {entry.id!r} is {entry.difficulty} in the index but {served} in {folder / 'task.json'}")
        if not _is_repository(task):
            raise CatalogError(f"{index}: task {entry.id!r} is a {task.family} task; a built catalog serves repository tasks")
        loaded.append((task, entry))
    return loaded


def _agrees(folder: Path, data: dict[str, Any], entry: CatalogEntry) -> None:
    """The folder's task.json names the entry's id, and states no other split, library or source than the index."""
    if data.get("id") != entry.id:
        raise TaskLoadError(f"{folder / 'task.json'} gives the id {data.get('id')!r}, not the folder's and the index's {entry.id!r}")
    for key in ("split", "library", "source"):
        if key in data and data[key] != getattr(entry, key):
            raise TaskLoadError(f"{folder / 'task.json'} gives the {key} {data[key]!r}, the index {getattr(entry, key)!r}")


def _is_repository(task: Task) -> bool:
    try:
        return FAMILIES[task.family].repository(task) is not None
    except NotImplementedError:  # a family that does not say is not taken for one
        return False


def _faults(exc: ValidationError) -> str:
    faults = []
    for error in exc.errors()[:SHOWN_ERRORS]:
        where = ".".join(str(part) for part in error["loc"]) or "the file"
        given = f" (given: {str(error['input'])[:60]!r})" if error["type"] not in ("json_invalid", "missing") and "input" in error else ""
        faults.append(f"{where}: {error['msg']}{given}")
    more = exc.error_count() - SHOWN_ERRORS
    return "; ".join(faults) + (f"; and {more} more" if more > 0 else "")
