"""Interface profiles (which tools an agent gets), tool-name aliases, relays and the edit gate.

    interface = FAMILIES["repo"].interface("pdb")                   # chosen at reset, by the task's family
    call = interface.resolve("str_replace", {"path": "a.py", "old_str": "x", "new_str": "y"})
    call.tool, call.args, call.aliased_from                          # "replace_text", {... old_text ...}, "str_replace"
    interface.check_gate(call.tool)                                  # ToolError while the edit gate is locked
    interface.record(call.tool, succeeded=True)                      # a debugger command unlocks it

A profile is a set of tool names, as in the pdb-vs-shell study: everything else about an episode
(task, budget, rewards, sandbox) stays the same, so comparing interfaces is a reset parameter.
``minimal`` renames tools (``cat`` is ``view_file``); aliases map the names models reach for
(``str_replace``, ``open_file``, ``bash`` ...) onto the tools an episode has, argument names included.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from pydantic import BaseModel, Field

from env import settings
from env.registry import Registry
from env.tools.base import TOOLS, ToolError, UnknownTool

# The substrate every arm of a comparison shares: navigation, editing and testing.
SHARED = ("list_dir", "view_file", "search", "edit", "replace_text", "create_file", "run_tests", "diff")
END = ("submit", "give_up")
DEBUG_TOOLS = (
    "debug_start", "debug_break", "debug_clear", "debug_continue", "debug_step", "debug_next", "debug_return",
    "debug_until", "debug_where", "debug_inspect", "debug_eval", "debug_list", "debug_restart",
)
EDIT_TOOLS = frozenset({"edit", "replace_text", "create_file", "submit_fix"})


class Profile(BaseModel):
    name: str
    description: str
    tools: tuple[str, ...]
    names: dict[str, str] = Field(default_factory=dict, description="exposed name -> registered tool, where they differ")
    edit_gate: bool = False

    def registered(self, exposed: str) -> str:
        return self.names.get(exposed, exposed)


PROFILES: Registry[Profile] = Registry("profile")
for _profile in (
    Profile(name="default", description="File tools, run_tests, submit and give_up (no shell, no debugger)", tools=(*SHARED, *END)),
    Profile(name="bash", description="A sandboxed shell in the workspace, the file tools and run_tests",
            tools=(*SHARED, "run_bash", "new_relay", *END)),
    Profile(name="pdb", description="The live debugger, the file tools and a restricted script runner; no shell. "
            "Edit tools unlock after one debugger command succeeds in the current relay",
            tools=(*SHARED, *DEBUG_TOOLS, "run_script", "new_relay", *END), edit_gate=True),
    Profile(name="pdb_shell", description="The shell and the debugger together",
            tools=(*SHARED, "run_bash", *DEBUG_TOOLS, "run_script", "new_relay", *END)),
    Profile(name="minimal", description="The five commands of the Passerine study: cat, search, edit, test, finish",
            tools=("cat", "search", "edit", "test", "finish"), names={"cat": "view_file", "test": "run_tests", "finish": "submit"}),
    Profile(name="trace", description="Call-trace reports of a test (trace_report), the file tools and run_tests; no shell, no debugger",
            tools=(*SHARED, "trace_report", *END)),
):  # fmt: skip
    PROFILES.add(_profile.name, _profile)


def profile_named(name: str | None) -> Profile:
    """The registered profile (``default`` when none is named); ValueError listing them when there is no such one."""
    if name is not None and not isinstance(name, str):  # over /ws and in a reset's body it arrives unvalidated
        raise ValueError(f"'profile' must be a string naming a profile, not {type(name).__name__}; available: {', '.join(PROFILES)}")
    chosen = name or "default"
    if chosen not in PROFILES:
        raise ValueError(f"unknown profile {chosen!r}; available: {', '.join(PROFILES)}")
    return PROFILES[chosen]


def tool_schemas(names: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """Registered tools as OpenAI function-calling definitions (the default profile's when none are named)."""
    return [TOOLS[name].schema() for name in (names if names is not None else PROFILES["default"].tools)]


class Alias(BaseModel):
    tools: tuple[str, ...] = Field(description="candidates in order: the first the episode has is used")
    args: dict[str, str] = Field(default_factory=dict, description="argument renames: the model's name -> the tool's")

    def pick(self, offered: Collection[str]) -> str | None:
        """The first candidate among the ``offered`` tool names, or None."""
        return next((tool for tool in self.tools if tool in offered), None)

    def renamed(self, args: dict[str, Any]) -> dict[str, Any]:
        return {self.args.get(k, k): v for k, v in args.items()}


_PATH = {"file": "path", "filename": "path", "file_path": "path", "filepath": "path"}
ALIASES: dict[str, Alias] = {
    "search_replace": Alias(tools=("replace_text",), args={**_PATH, "search": "old_text", "replace": "new_text", "old": "old_text", "new": "new_text"}),
    "str_replace": Alias(tools=("replace_text",), args={**_PATH, "old_str": "old_text", "new_str": "new_text"}),
    "str_replace_editor": Alias(tools=("replace_text",), args={**_PATH, "old_str": "old_text", "new_str": "new_text"}),
    "replace": Alias(tools=("replace_text",), args={**_PATH, "old": "old_text", "new": "new_text"}),
    "apply_edit": Alias(tools=("edit",), args=_PATH),
    "edit_file": Alias(tools=("edit", "replace_text"), args=_PATH),
    "open_file": Alias(tools=("view_file", "cat"), args=_PATH),
    "read_file": Alias(tools=("view_file", "cat"), args=_PATH),
    "view": Alias(tools=("view_file", "cat"), args=_PATH),
    "cat": Alias(tools=("view_file",), args=_PATH),
    "open": Alias(tools=("view_file", "cat"), args=_PATH),
    "ls": Alias(tools=("list_dir",), args={"dir": "path", "directory": "path"}),
    "list_files": Alias(tools=("list_dir",), args={"dir": "path", "directory": "path"}),
    "grep": Alias(tools=("search",), args={"query": "pattern", "text": "pattern"}),
    "find": Alias(tools=("search",), args={"query": "pattern", "text": "pattern"}),
    "search_code": Alias(tools=("search",), args={"query": "pattern", "text": "pattern"}),
    "write_file": Alias(tools=("create_file",), args={**_PATH, "text": "content"}),
    "bash": Alias(tools=("run_bash",), args={"cmd": "command"}),
    "shell": Alias(tools=("run_bash",), args={"cmd": "command"}),
    "execute_bash": Alias(tools=("run_bash",), args={"cmd": "command"}),
    "run_command": Alias(tools=("run_bash",), args={"cmd": "command"}),
    "run": Alias(tools=("run_bash", "run_script", "run_tests", "test"), args={"cmd": "command"}),  # no shell: run the tests
    "python": Alias(tools=("run_script",), args={"source": "code"}),
    "run_python": Alias(tools=("run_script",), args={"source": "code"}),
    "test": Alias(tools=("run_tests", "test")),
    "pytest": Alias(tools=("run_tests", "test")),
    "finish": Alias(tools=("submit", "finish")),
    "submit": Alias(tools=("finish",)),
    "submit_patch": Alias(tools=("submit", "finish")),
    "done": Alias(tools=("submit", "finish")),
    "trace": Alias(tools=("trace_report",), args={"test_id": "test", "id": "test"}),
    "call_trace": Alias(tools=("trace_report",), args={"test_id": "test", "id": "test"}),
    "trace_test": Alias(tools=("trace_report",), args={"test_id": "test", "id": "test"}),
    "get_trace": Alias(tools=("trace_report",), args={"test_id": "test", "id": "test"}),
    "pdb": Alias(tools=("debug_start",)),
    "break": Alias(tools=("debug_break",), args=_PATH),
    "breakpoint": Alias(tools=("debug_break",), args=_PATH),
    "continue": Alias(tools=("debug_continue",)),
    "step": Alias(tools=("debug_step",)),
    "next": Alias(tools=("debug_next",)),
    "where": Alias(tools=("debug_where",)),
    "print": Alias(tools=("debug_eval",), args={"expr": "expression"}),
    "eval": Alias(tools=("debug_eval",), args={"expr": "expression"}),
    # The Debug Adapter Protocol's verbs, as the debugger MCP servers name them (mcp-debugger, debugpy's adapters):
    # an agent trained on one finds the same commands here.
    "launch": Alias(tools=("debug_start",), args={"program": "script"}),
    "set_breakpoint": Alias(tools=("debug_break",), args={**_PATH, "logMessage": "log_message", "log": "log_message"}),
    "remove_breakpoint": Alias(tools=("debug_clear",), args=_PATH),
    "clear_breakpoints": Alias(tools=("debug_clear",), args=_PATH),
    "step_over": Alias(tools=("debug_next",)),
    "step_in": Alias(tools=("debug_step",)),
    "step_into": Alias(tools=("debug_step",)),
    "step_out": Alias(tools=("debug_return",)),
    "stack_trace": Alias(tools=("debug_where",)),
    "variables": Alias(tools=("debug_inspect",)),
    "evaluate": Alias(tools=("debug_eval",), args={"expr": "expression"}),
    "restart": Alias(tools=("debug_restart",)),
}


# Names models reach for instead of a classic task's own actions. Read by clients only (the LLM agent maps them before
# sending): a classic episode answers its actions by their own names and never resolves these.
ACTION_ALIASES: dict[str, Alias] = {
    "fix": Alias(tools=("submit_fix",)),
    "submit_code": Alias(tools=("submit_fix",)),
    "query": Alias(tools=("query_context",)),
    "ask": Alias(tools=("query_context",)),
}


def configured_aliases() -> dict[str, Alias]:
    """The built-in table, with ``ENV_TOOL_ALIASES`` (a JSON file {alias: tool or {tools, args}}) on top."""
    table = dict(ALIASES)
    path = settings.raw("ENV_TOOL_ALIASES")
    if path:
        with open(path, encoding="utf-8") as handle:
            table.update(parse_aliases(json.load(handle)))
    return table


def parse_aliases(raw: object) -> dict[str, Alias]:
    """A reset's (or ENV_TOOL_ALIASES') alias table, as JSON gives it: {name: tool or {tools, args}}."""
    if not isinstance(raw, dict):
        raise ValueError("aliases must be an object mapping a name to a tool name or {'tools': [...], 'args': {...}}")
    table = {}
    for name, value in raw.items():
        table[str(name)] = Alias(tools=(value,)) if isinstance(value, str) else Alias.model_validate(value)
    return table


class Call(BaseModel):
    name: str = Field(description="the tool's name in this episode's profile")
    tool: str = Field(description="the registered tool that runs")
    args: dict[str, Any]
    aliased_from: str | None = None


class Interface:
    """One episode's view of its profile: which names it accepts, the edit gate, the relay count."""

    def __init__(
        self, profile: Profile, tools: tuple[str, ...], edit_gate: bool | None = None, aliases: dict[str, Alias] | None = None,
        own_actions: tuple[str, ...] = (), names: dict[str, str] | None = None,
    ):
        self.profile = profile
        self.tools = tools
        # names the episode answers itself, not registered tools
        self.own_actions = own_actions
        # exposed name -> registered tool, where the family's differs from the profile's (the classic give_up)
        self.names = names or {}
        self.edit_gate = profile.edit_gate if edit_gate is None else edit_gate
        self.unlocked = False
        self.relay = 1
        self.aliases = aliases if aliases is not None else configured_aliases()

    @classmethod
    def build(
        cls, profile: Profile, tools: tuple[str, ...], edit_gate: bool | None = None, aliases: object = None, own_actions: tuple[str, ...] = (),
        names: dict[str, str] | None = None,
    ) -> Interface:
        """An episode's interface from a reset's choices; ValueError (or ValidationError) with the message the agent sees."""
        if edit_gate is not None and not isinstance(edit_gate, bool):
            raise ValueError("'edit_gate' must be true or false")
        table = configured_aliases()
        if aliases is not None:
            table.update(parse_aliases(aliases))
        return cls(profile, tools, edit_gate, table, own_actions, names)

    def registered(self, name: str) -> str:
        return self.names.get(name) or self.profile.registered(name)

    def resolve(self, name: str, args: dict[str, Any]) -> Call:
        if not name:
            raise UnknownTool(f"missing field 'action_type'; expected one of: {', '.join(self.tools)}")
        if name in self.tools:
            return Call(name=name, tool=self.registered(name), args=args)
        alias = self.aliases.get(name)
        if alias is not None:
            candidate = alias.pick(self.tools)
            if candidate is not None:
                return Call(name=candidate, tool=self.registered(candidate), args=alias.renamed(args), aliased_from=name)
            raise UnknownTool(
                f"unknown action_type {name!r}: it stands for {' or '.join(alias.tools)}, which the {self.profile.name!r} "
                f"profile does not offer; expected one of: {', '.join(self.tools)}"
            )
        raise UnknownTool(f"unknown action_type {name!r} for the {self.profile.name!r} profile; expected one of: {', '.join(self.tools)}")

    def check_gate(self, tool: str) -> None:
        if self.edit_gate and not self.unlocked and tool in EDIT_TOOLS:
            raise ToolError(
                f"{tool} is locked: the edit gate opens once a debugger command succeeds in this relay "
                f"(relay {self.relay}); inspect the program first, e.g. debug_start on a failing test"
            )

    def record(self, tool: str, succeeded: bool) -> None:
        if tool == "new_relay" and succeeded:
            self.relay += 1
            self.unlocked = False
        elif succeeded and tool in DEBUG_TOOLS:
            self.unlocked = True

    def schemas(self) -> list[dict[str, Any]]:
        """The episode's tools as OpenAI function definitions, under the names this profile uses."""
        out = []
        for name in self.tools:
            if name in self.own_actions:
                continue  # the episode's own actions, not registered tools
            schema = TOOLS[self.registered(name)].schema()
            schema["function"]["name"] = name
            out.append(schema)
        return out

    def info(self) -> dict[str, str | bool | int]:
        return {"profile": self.profile.name, "edit_gate": self.edit_gate, "unlocked": self.unlocked or not self.edit_gate, "relay": self.relay}
