"""The classic family's three actions as registered tools (issue 52, item 1): their published schemas are the ones the
reference environment's hand-written definitions gave, their checks keep its messages, and a submission is counted
by the tool's own flag."""

from __future__ import annotations

from typing import Any

import pytest

from env.families.classic.family import CLASSIC
from env.families.classic.tools import CLASSIC_ACTIONS, CLASSIC_TOOLS, ActionError, GiveUpArgs, SubmitFixArgs, classic_tool
from env.graders.mechanisms import MECHANISMS
from env.tools import TOOLS

SUSPECT_DOC = "Optional: the faulty function's name, or file:line of the faulty line (scored instead of the text's location)"
MECHANISM_DOC = "Optional: the bug's mechanism, one of the published list (scored instead of the text's mechanism)"
# The definitions as they were written by hand before the actions were tools: what clients have always been sent.
HAND_WRITTEN: list[dict[str, Any]] = [
    {"type": "function", "function": {
        "name": "submit_fix", "description": "Submit the complete corrected module with your theory of the bug; runs the tests.",
        "parameters": {"type": "object", "properties": {
            "fixed_code": {"type": "string"}, "hypothesis": {"type": "string"},
            "suspect": {"type": "string", "description": SUSPECT_DOC},
            "mechanism": {"type": "string", "enum": list(MECHANISMS), "description": MECHANISM_DOC}},
            "required": ["fixed_code", "hypothesis"], "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "query_context", "description": "Ask about the code or the tests (the first query is free).",
        "parameters": {"type": "object", "properties": {
            "query_type": {"type": "string", "enum": ["function_signature", "related_code", "error_explanation", "test_details"]},
            "query_target": {"type": "string"}},
            "required": ["query_type"], "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "give_up", "description": "End the episode.",
        "parameters": {"type": "object", "properties": {"final_diagnosis": {"type": "string"}}, "additionalProperties": False}}},
]  # fmt: skip


def test_the_published_schemas_are_the_hand_written_ones():
    assert CLASSIC_TOOLS == HAND_WRITTEN
    assert CLASSIC.tools(CLASSIC.interface()) == HAND_WRITTEN
    assert CLASSIC.listing()["tools"] == HAND_WRITTEN and CLASSIC.listing()["action_types"] == list(CLASSIC_ACTIONS)


def test_each_action_is_a_registered_tool_and_only_submit_fix_submits():
    interface = CLASSIC.interface()
    assert [interface.registered(name) for name in CLASSIC_ACTIONS] == ["submit_fix", "query_context", "classic_give_up"]
    assert [TOOLS[interface.registered(name)].submits for name in CLASSIC_ACTIONS] == [True, False, False]
    assert TOOLS["give_up"].schema()["function"]["parameters"]["properties"] == {}  # the repository's own give_up is untouched


def test_parse_keeps_the_reference_messages_and_ignores_another_action_s_fields():
    submit = classic_tool("submit_fix")
    assert submit.parse({"fixed_code": "x = 1", "hypothesis": "h", "query_type": "ignored"}) == SubmitFixArgs(fixed_code="x = 1", hypothesis="h")
    assert classic_tool("give_up").parse({"fixed_code": "ignored"}) == GiveUpArgs()
    for raw, message in (
        ({"fixed_code": "x", "patch": "p"}, "unknown field(s) 'patch' for submit_fix; its fields are: fixed_code, hypothesis, suspect, mechanism"),
        ({"hypothesis": "h"}, "submit_fix needs 'fixed_code': the complete corrected module"),
        ({"fixed_code": "x", "suspect": " "}, "field 'suspect' is empty; give a function name or file:line, or leave it out"),
    ):
        with pytest.raises(ActionError) as caught:
            submit.parse(raw)
        assert str(caught.value) == message
    with pytest.raises(ActionError, match="^unknown field\\(s\\) 'colour' for give_up; its fields are: final_diagnosis$"):
        classic_tool("give_up").parse({"colour": "red"})
