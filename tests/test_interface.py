"""Interface profiles, tool-name aliases and the edit gate: what each profile offers and refuses, every alias."""

from __future__ import annotations

import json

import pytest

from env.families.classic.family import CLASSIC
from env.families.classic.tools import CLASSIC_ACTIONS
from env.families.repo.family import REPO
from env.interface import ALIASES, DEBUG_TOOLS, PROFILES, parse_aliases
from env.tools import TOOLS, ToolError

EVERY_TOOL = sorted({name for p in PROFILES.values() for name in p.tools} | set(CLASSIC_ACTIONS))


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_every_profile_refuses_the_tools_it_does_not_have(profile):
    interface = REPO.interface(profile)
    missing = [name for name in EVERY_TOOL if name not in interface.tools]
    assert missing  # every profile lacks something
    for name in missing:
        alias = ALIASES.get(name)
        if alias is not None and any(t in interface.tools for t in alias.tools):
            assert interface.resolve(name, {}).aliased_from == name  # another profile's name for a tool this one has
            continue
        with pytest.raises(ToolError) as caught:
            interface.resolve(name, {})
        message = str(caught.value)
        if name in ALIASES:
            assert message.startswith(f"unknown action_type {name!r}: it stands for ")
        else:
            assert message == f"unknown action_type {name!r} for the {profile!r} profile; expected one of: {', '.join(interface.tools)}"


def test_profiles_hold_what_the_study_describes():
    tools = {name: set(REPO.interface(name).tools) for name in PROFILES}
    assert "run_bash" in tools["bash"] and not tools["bash"] & set(DEBUG_TOOLS)
    assert set(DEBUG_TOOLS) <= tools["pdb"] and "run_script" in tools["pdb"] and "run_bash" not in tools["pdb"]
    assert set(DEBUG_TOOLS) | {"run_bash", "run_script"} <= tools["pdb_shell"]
    assert REPO.interface("minimal").tools == ("cat", "search", "edit", "test", "finish")
    # The shared substrate is the same in every arm of the comparison.
    shared = {"list_dir", "view_file", "search", "edit", "replace_text", "create_file", "diff", "run_tests", "submit", "give_up"}
    assert all(shared <= tools[name] for name in ("default", "bash", "pdb", "pdb_shell"))
    assert [REPO.interface(n).edit_gate for n in ("default", "bash", "pdb", "pdb_shell", "minimal")] == [False, False, True, False, False]


def test_classic_profiles():
    assert CLASSIC.interface(None).tools == CLASSIC_ACTIONS
    pdb = CLASSIC.interface("pdb").tools
    assert pdb[:3] == CLASSIC_ACTIONS and "debug_start" in pdb and "run_bash" not in pdb and "edit" not in pdb
    assert "run_bash" in CLASSIC.interface("bash").tools
    with pytest.raises(ValueError, match="profile 'minimal' works on repository tasks; classic tasks accept: default, bash, pdb, pdb_shell"):
        CLASSIC.interface("minimal")
    with pytest.raises(ValueError, match="unknown profile 'gdb'; available: default, bash, pdb, pdb_shell, minimal, trace"):
        REPO.interface("gdb")


def test_minimal_renames_tools_and_publishes_them_under_their_names():
    interface = REPO.interface("minimal")
    assert [(c.name, c.tool) for c in (interface.resolve(n, {}) for n in interface.tools)] == [
        ("cat", "view_file"), ("search", "search"), ("edit", "edit"), ("test", "run_tests"), ("finish", "submit"),
    ]
    schemas = interface.schemas()
    assert [s["function"]["name"] for s in schemas] == ["cat", "search", "edit", "test", "finish"]
    assert schemas[0]["function"]["parameters"] == TOOLS["view_file"].schema()["function"]["parameters"]


# Every alias of the table, with the profile that offers its first candidate, and an argument rename where it has one.
@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_every_alias_maps_onto_a_registered_tool(alias):
    entry = ALIASES[alias]
    profile = next(p for p in ("pdb_shell", "minimal", "trace") if any(t in REPO.interface(p).tools for t in entry.tools))
    interface = REPO.interface(profile)
    args = {name: "x" for name in entry.args}
    call = interface.resolve(alias, args)
    expected = next(t for t in entry.tools if t in interface.tools)
    if alias in interface.tools:  # an alias that is also a name in this profile (minimal's "cat") is that tool
        assert call.aliased_from is None
        return
    assert (call.name, call.aliased_from) == (expected, alias)
    assert call.tool in TOOLS
    assert set(call.args) == {entry.args[name] for name in entry.args}


def test_an_alias_picks_the_first_tool_the_profile_has():
    assert REPO.interface("bash").resolve("run", {"cmd": "ls"}).model_dump() == {
        "name": "run_bash", "tool": "run_bash", "args": {"command": "ls"}, "aliased_from": "run",
    }
    assert REPO.interface("pdb").resolve("run", {}).name == "run_script"
    with pytest.raises(ToolError) as caught:
        REPO.interface("pdb").resolve("bash", {"cmd": "ls"})
    assert str(caught.value).startswith("unknown action_type 'bash': it stands for run_bash, which the 'pdb' profile does not offer; expected one of: ")


def test_aliases_are_configurable(tmp_path, monkeypatch):
    table = tmp_path / "aliases.json"
    table.write_text(json.dumps({"peek": "view_file", "swap": {"tools": ["replace_text"], "args": {"a": "old_text", "b": "new_text"}}}))
    monkeypatch.setenv("ENV_TOOL_ALIASES", str(table))
    interface = REPO.interface("default", aliases={"look": "list_dir"})
    assert interface.resolve("peek", {"path": "a"}).tool == "view_file"
    assert interface.resolve("swap", {"a": 1, "b": 2}).args == {"old_text": 1, "new_text": 2}
    assert interface.resolve("look", {}).tool == "list_dir"
    assert interface.resolve("str_replace", {}).tool == "replace_text"  # the built-in table is still there
    with pytest.raises(ValueError, match="aliases must be an object"):
        parse_aliases(["view_file"])


def test_the_gate_opens_on_a_debugger_success_and_closes_on_a_new_relay():
    interface = REPO.interface("pdb")
    with pytest.raises(ToolError, match=r"^edit is locked: the edit gate opens once a debugger command succeeds in this relay \(relay 1\)"):
        interface.check_gate("edit")
    interface.check_gate("view_file")  # only edits are gated
    interface.record("debug_where", succeeded=False)
    with pytest.raises(ToolError):
        interface.check_gate("create_file")
    interface.record("debug_where", succeeded=True)
    interface.check_gate("create_file")
    interface.record("new_relay", succeeded=True)
    assert interface.info() == {"profile": "pdb", "edit_gate": True, "unlocked": False, "relay": 2}
    with pytest.raises(ToolError, match=r"relay 2"):
        interface.check_gate("replace_text")
