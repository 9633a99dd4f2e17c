"""Tools an agent uses, each a name, a description and a typed argument model (see ``base.py``).

    result = run_call(ctx, interface, interface.resolve("view_file", {"path": "a.py"}))

Importing this package registers the shared tools: files, tests, the debugger, scripts, the shell and the call tracer (a family
registers its own tools, e.g. the procedural family's open_file and analyze_logs, in its own package).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from env.tools import debug as _debug  # noqa: F401  (registers the debugger tools and run_script)
from env.tools import files as _files  # noqa: F401  (registers the file tools)
from env.tools import shell as _shell  # noqa: F401  (registers run_bash)
from env.tools import testing as _testing  # noqa: F401  (registers the test tools)
from env.tools import trace as _trace  # noqa: F401  (registers trace_report)
from env.tools.base import TOOLS, ToolContext, ToolError, ToolResult

if TYPE_CHECKING:  # env.interface imports env.tools.base, whose package is this one
    from env.interface import Call, Interface

__all__ = ["TOOLS", "ToolContext", "ToolError", "ToolResult", "run_call"]


def run_call(ctx: ToolContext, interface: Interface, call: Call) -> ToolResult:
    """Run one resolved call: the edit gate first, then the tool; an edit moves the debugger's breakpoints."""
    interface.check_gate(call.tool)
    tool = TOOLS[call.tool]
    try:
        result = tool.run(ctx, tool.parse(call.args))
    except ToolError:
        interface.record(call.tool, succeeded=False)
        raise
    interface.record(call.tool, succeeded=True)
    data = result.data
    if result.edited and "line_delta" in data and ctx.has_debugger:
        new_count = data["end_line"] - data["start_line"] + 1
        old_count = new_count - data["line_delta"]
        note = ctx.debugger.on_edit(data["path"], data["start_line"], data["start_line"] + old_count - 1, new_count)
        if note:
            result.output += "\n" + note
    return result
