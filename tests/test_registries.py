"""Task families, tools, profiles and agents each plug into one registry, which refuses a second item under a name."""

from __future__ import annotations

import pytest

from env.agents import AGENTS
from env.agents.base import register
from env.interface import PROFILES
from env.registry import DuplicateName, Registry
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
    assert list(PROFILES) == ["default", "bash", "pdb", "pdb_shell", "minimal"]
    assert {"random", "heuristic", "oracle", "llm"} <= set(AGENTS)
    assert {"view_file", "run_tests", "submit", "run_bash", "debug_eval"} <= set(TOOLS)
