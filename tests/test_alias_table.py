"""One alias table: the server (``Interface.resolve``) and the LLM agent read every name a model reaches for the
same way, in every profile of every family: the same tool with the same arguments, or refused by both (issue 35).
The few names of a classic task's own actions (``ACTION_ALIASES``) are the client's alone, declared beside it."""

from __future__ import annotations

import json
import random
from types import SimpleNamespace

import pytest

import env.agents.llm as llm_module
import env.interface as interface_module
from env.agents.llm import LLMAgent
from env.families.classic.tools import CLASSIC_ACTIONS
from env.families.registry import FAMILIES
from env.interface import ACTION_ALIASES, ALIASES, PROFILES
from env.tools import ToolError


def served() -> list[tuple[str, str, tuple[str, ...]]]:
    """(family, profile, the tool names an episode under it offers) for every profile a family serves."""
    found = []
    for name, family in FAMILIES.items():
        for profile in PROFILES:
            try:
                found.append((name, profile, family.interface(profile).tools))
            except ValueError:
                continue  # not served for this family
    return found


def client_reads(alias: str, args: dict[str, str], names: tuple[str, ...]) -> dict[str, str] | None:
    """The action the LLM agent makes of a model's call of ``alias`` when the episode offers ``names`` (None: refused)."""
    call = SimpleNamespace(id="c1", function=SimpleNamespace(name=alias, arguments=json.dumps(args)))
    reply = SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=None, tool_calls=[call]))], usage=None)
    client = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=lambda **kwargs: reply)))
    tools = [{"type": "function", "function": {"name": n, "description": n, "parameters": {"type": "object"}}} for n in names]
    agent = LLMAgent(model="m", client=client, retries=0)
    agent.begin({"id": "t", "family": "repo", "tools": tools}, {"task_description": "t"}, random.Random(0))
    action = agent.act({})
    return None if agent.unparsed else action


def test_the_llm_agent_has_no_table_of_its_own():
    assert llm_module.ALIASES is interface_module.ALIASES and llm_module.ACTION_ALIASES is interface_module.ACTION_ALIASES
    assert not set(ALIASES) & set(ACTION_ALIASES)


@pytest.mark.parametrize("alias", sorted(ACTION_ALIASES))
def test_the_llm_agent_maps_a_classic_action_s_other_names(alias):
    assert client_reads(alias, {"query_type": "x"}, CLASSIC_ACTIONS) == {"action_type": ACTION_ALIASES[alias].tools[0], "query_type": "x"}


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_the_server_and_the_llm_agent_read_an_alias_alike(alias):
    args = {**{name: "x" for name in ALIASES[alias].args}, "line": "3"}  # one argument of each kind: renamed, kept
    for family, profile, names in served():
        interface = FAMILIES[family].interface(profile)
        try:
            call = interface.resolve(alias, dict(args))
            server = {"action_type": call.name, **call.args}
        except ToolError:
            server = None
        assert client_reads(alias, args, names) == server, f"{alias!r} in the {family} family's {profile!r} profile"


def test_the_debug_adapter_protocol_s_verbs_reach_the_debugger():
    """An agent trained on a debugger MCP server (DAP's names) finds the same commands under the pdb profile."""
    interface = FAMILIES["repo"].interface("pdb")
    calls = {
        "launch": ({"test": "tests/test_a.py::test_b"}, ("debug_start", {"test": "tests/test_a.py::test_b"})),
        "set_breakpoint": ({"file": "a.py", "line": 3, "condition": "x > 1"}, ("debug_break", {"path": "a.py", "line": 3, "condition": "x > 1"})),
        "remove_breakpoint": ({"file": "a.py", "line": 3}, ("debug_clear", {"path": "a.py", "line": 3})),
        "continue": ({}, ("debug_continue", {})),
        "step_over": ({}, ("debug_next", {})),
        "step_in": ({}, ("debug_step", {})),
        "step_out": ({}, ("debug_return", {})),
        "stack_trace": ({}, ("debug_where", {})),
        "variables": ({"frame": 1}, ("debug_inspect", {"frame": 1})),
        "evaluate": ({"expr": "len(xs)"}, ("debug_eval", {"expression": "len(xs)"})),
        "restart": ({}, ("debug_restart", {})),
    }
    for verb, (args, (tool, renamed)) in calls.items():
        call = interface.resolve(verb, dict(args))
        assert (call.name, call.args) == (tool, renamed), verb
