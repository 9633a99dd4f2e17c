"""Classic tasks are found from their folders, listed in their task.json's ``order``: a new folder cannot be left
unserved by a list kept by hand (issue 35, item 2)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import env.families.base as base_module
from env.families.base import TaskLoadError
from env.families.classic.family import ClassicFamily

TASKS = Path(__file__).resolve().parents[1] / "tasks"


def copy_with(tmp_path: Path, name: str, **fields: object) -> Path:
    """tasks/classic/ copied, plus ``name``: a copy of `easy` with ``fields`` changed in its task.json (None removes)."""
    root = tmp_path / "tasks"
    shutil.copytree(TASKS / "classic", root / "classic")
    shutil.copytree(TASKS / "classic" / "easy", root / "classic" / name)
    path = root / "classic" / name / "task.json"
    data = json.loads(path.read_text())
    for key, value in fields.items():
        if value is None:
            data.pop(key)
        else:
            data[key] = value
    path.write_text(json.dumps(data))
    return root


def test_the_built_in_classic_tasks_are_listed_in_their_order():
    assert [(t.id, t.order) for t in ClassicFamily().builtin()] == [("easy", 1), ("medium", 2), ("hard", 3)]


def test_a_new_folder_is_served_where_its_order_puts_it(tmp_path, monkeypatch):
    monkeypatch.setattr(base_module, "TASKS_DIR", copy_with(tmp_path, "warmup", id="warmup", order=0))
    assert [t.id for t in ClassicFamily().builtin()] == ["warmup", "easy", "medium", "hard"]
    monkeypatch.setattr(base_module, "TASKS_DIR", copy_with(tmp_path / "2", "easy-two", id="easy-two", order=1))
    assert [t.id for t in ClassicFamily().builtin()] == ["easy", "easy-two", "medium", "hard"]  # a tie: by id


def test_a_folder_without_an_order_is_refused_by_name(tmp_path, monkeypatch):
    monkeypatch.setattr(base_module, "TASKS_DIR", copy_with(tmp_path, "unordered", id="unordered", order=None))
    with pytest.raises(TaskLoadError, match=r"(?s)unordered: .*\norder\n  Field required"):
        ClassicFamily().builtin()
