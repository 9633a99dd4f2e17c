"""Task families, tools, profiles and agents each plug into one registry, which refuses a second item under a name;
a new family needs nothing but its own class and its registration."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest

from env.agents import AGENTS
from env.agents.base import register
from env.families.catalog import TaskCatalog
from env.families.registry import FAMILIES, load_task
from env.families.repo.family import RepoFamily
from env.interface import PROFILES
from env.listing import listing_entry
from env.models import DebugAction
from env.project import RepoTask
from env.registry import DuplicateName, Registry
from env.runtime import Runtime
from env.server.environment import DebugEnvironment
from env.tools.base import TOOLS


def test_a_second_item_under_a_name_is_refused_naming_both():
    table: Registry[int] = Registry("widget")
    table.add("a", 1)
    with pytest.raises(DuplicateName, match=r"^a widget named 'a' is already registered \(1\); not adding 2$"):
        table.add("a", 2)
    assert dict(table) == {"a": 1} and "a" in table and len(table) == 1 and table.get("b") is None


def test_the_project_s_registries_refuse_duplicates():
    with pytest.raises(DuplicateName, match="^a tool named 'view_file' is already registered"):
        TOOLS.add("view_file", TOOLS["view_file"])
    with pytest.raises(DuplicateName, match="^a profile named 'pdb' is already registered"):
        PROFILES.add("pdb", PROFILES["pdb"])
    with pytest.raises(DuplicateName, match="^an agent named 'oracle' is already registered"):

        @register("oracle")
        class Impostor:  # an agent defined twice under one name: the second definition is refused
            pass

    assert AGENTS["oracle"].__name__ != "Impostor"


def test_the_registries_hold_what_the_project_defines():
    assert list(PROFILES) == ["default", "bash", "pdb", "pdb_shell", "minimal", "trace"]
    assert {"random", "heuristic", "oracle", "llm"} <= set(AGENTS)
    assert {"view_file", "run_tests", "submit", "run_bash", "debug_eval"} <= set(TOOLS)


def test_task_families_plug_into_one_registry():
    assert list(FAMILIES) == ["classic", "repo", "procedural", "race"]
    with pytest.raises(DuplicateName, match="^a family named 'repo' is already registered"):
        FAMILIES.add("repo", FAMILIES["repo"])
    assert {name: (f.interaction, f.partial_view) for name, f in FAMILIES.items()} == {
        "classic": ("code", False), "repo": ("tools", False), "procedural": ("tools", True), "race": ("code", False),
    }


def test_a_new_family_is_its_own_class_and_one_registration(tmp_path, runtime, monkeypatch):
    """Nothing else changes: the catalog loads its folders, the server resets and steps it, /tasks lists it."""
    class ToyTask(RepoTask):
        family: str = "toy"  # type: ignore[assignment]

    class ToyFamily(RepoFamily):
        name = "toy"
        description = "a repository task under another name"

        def load(self, folder, data):
            return ToyTask(folder=folder, **data)

        def interface(self, profile=None, edit_gate=None, aliases=None):
            if profile not in (None, "default"):
                raise ValueError("toy tasks have the default interface only")
            return super().interface(profile, edit_gate, aliases)

    monkeypatch.setattr(FAMILIES, "_items", dict(FAMILIES.items()))  # the toy family is gone after the test
    FAMILIES.add("toy", ToyFamily())
    source = runtime.catalog.get("repo-slice-window").folder
    folder = tmp_path / "toy-slice"
    shutil.copytree(source, folder)
    data = json.loads((folder / "task.json").read_text())
    (folder / "task.json").write_text(json.dumps({**data, "id": "toy-slice", "family": "toy"}))

    task = load_task(folder)
    assert isinstance(task, ToyTask) and task.family == "toy"
    env = DebugEnvironment(Runtime(TaskCatalog([task]), runtime.sandbox, workers=2, secret=runtime.secret))
    assert env.reset(task_id="toy-slice", profile="pdb").error == "reset: toy tasks have the default interface only"
    obs = env.reset(task_id="toy-slice", seed=1)
    assert obs.family == "toy" and obs.error is None
    obs = env.step(DebugAction(action_type="give_up"))
    assert obs.done and obs.info["resolved"] is False
    assert listing_entry(task.summary())["profiles"].keys() == {"default"}
    env.close()


def test_no_code_outside_a_family_branches_on_a_family_name():
    """A family's differences live in its Family and its episode; elsewhere code asks the family, not its name."""
    root = Path(__file__).resolve().parents[1] / "env"
    found = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare) and "family" in ast.unparse(node):
                literals = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
                if {"classic", "repo", "procedural"} & set(literals):
                    found.append(f"{path.relative_to(root.parent)}:{node.lineno}: {ast.unparse(node)}")
    assert found == []
