"""What the demo shows, as pure functions of observations and task summaries (no Gradio here).

    status_line(obs)        "Step 2 / 8 · tests 8 / 8 passed · ..."
    score_line(obs)         "Score: 0.930 (solved)" once the episode is over
    reward_table(history)   rows for the reward-over-steps plot
    diff_html(diff)         a unified diff, coloured, escaped
"""

from __future__ import annotations

import html
import json
from typing import Any

from env.agents.heuristic import unnumber

FILE_VIEW_TOOLS = ("view_file", "open_file", "cat")  # cat: the minimal profile's view_file
EDIT_TOOLS = ("edit", "replace_text", "create_file", "edit_file")
SUBMIT_TOOLS = ("submit", "finish")  # finish: the minimal profile's submit


def solved(obs: dict[str, Any]) -> bool:
    """Every family says at the end of an episode, in ``info``, whether it was solved."""
    return bool((obs.get("info") or {}).get("resolved"))


def task_label(task: dict[str, Any]) -> str:
    return f"{task['id']} · {task['family']} · {task['difficulty']} · {task['name']}"


def task_header(task: dict[str, Any], profile: str) -> str:
    limits = f"{task['max_steps']} steps" + (f", {task['max_attempts']} attempts" if task.get("max_attempts", 1) > 1 else "")
    return f"### {task['name']}\n`{task['id']}` · {task['family']} · {task['difficulty']} · {task['tests_total']} tests · {limits} · interface `{profile}`"


def status_line(obs: dict[str, Any]) -> str:
    parts = [f"Step {obs.get('step_number', 0)} / {obs.get('max_steps', 0)}", f"tests {obs.get('tests_passed', 0)} / {obs.get('tests_total', 0)} passed"]
    if obs.get("max_attempts", 1) > 1:
        parts.append(f"{obs.get('attempts_remaining', 0)} attempts left")
    if obs.get("time_remaining") is not None:
        parts.append(f"{obs['time_remaining']} steps left")
    parts.append(f"step reward {obs.get('step_reward', 0.0):+.3f}")
    parts.append(f"cumulative {obs.get('cumulative_reward', 0.0):+.3f}")
    return " · ".join(parts)


def score_line(obs: dict[str, Any]) -> str:
    if obs.get("done") and obs.get("grader_score") is not None:
        outcome = "solved" if solved(obs) else "not solved"
        return f"**Score: {obs['grader_score']:.3f}** ({outcome})"
    if obs.get("done"):
        return "**Episode over**"
    return f"Score: not yet (estimate {obs.get('score_estimate', 0.0):.3f})"


def error_line(message: str | None) -> str:
    return f"⚠️ {message}" if message else ""


def breakdown_rows(breakdown: dict[str, float]) -> list[list[Any]]:
    return [[name, round(value, 6)] for name, value in breakdown.items()]


def reward_table(rewards: list[float]) -> dict[str, list[Any]]:
    """Columns for a line plot: each step's reward and the running total, as two series."""
    steps, values, series = [], [], []
    total = 0.0
    for i, reward in enumerate(rewards, start=1):
        total = round(total + reward, 6)
        steps += [i, i]
        values += [reward, total]
        series += ["step reward", "cumulative"]
    return {"step": steps, "reward": values, "series": series}


def output_text(obs: dict[str, Any]) -> str:
    """What the last step showed: a tool's output, a query's answer, or the test output, then the logs."""
    text = obs.get("tool_output") or obs.get("query_result") or obs.get("current_error_output") or obs.get("initial_error_output") or ""
    logs = obs.get("logs") or []
    if logs:
        text = (text + "\n\n" if text else "") + "logs:\n" + "\n".join(logs)
    return text


def tests_text(obs: dict[str, Any]) -> str:
    """A classic task's test file, or the status of every test a repository run reported."""
    if obs.get("test_suite"):
        return obs["test_suite"]
    results = obs.get("test_results") or {}
    if not results:
        return "# no test run yet: run_tests shows each test's status"
    return "\n".join(f"# {status:<7} {test}" for test, status in sorted(results.items()))


def seen_file(action: dict[str, Any], obs: dict[str, Any]) -> tuple[str, str] | None:
    """A whole file the agent was just shown (a view without a line range), as (path, text)."""
    if action.get("action_type") not in FILE_VIEW_TOOLS or obs.get("error"):
        return None
    path = action.get("path")
    if not isinstance(path, str) or action.get("start_line") or action.get("end_line"):
        return None
    text = unnumber(obs.get("tool_output") or "")
    return (path, text) if text else None


def action_summary(action: dict[str, Any], limit: int = 120) -> str:
    """One line for a table: the action type and its arguments, long texts cut."""
    kind = action.get("action_type", "?")
    args = {k: v for k, v in action.items() if k != "action_type"}
    if not args:
        return kind
    shown = ", ".join(f"{k}={_short(v)}" for k, v in args.items())
    text = f"{kind}({shown})"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:39] + "…\""


def tool_template(tool: dict[str, Any]) -> str:
    """A tool's arguments as JSON to fill in: every required one, with an empty value of its type."""
    params = tool.get("function", {}).get("parameters", {})
    empty = {"string": "", "integer": 1, "number": 0, "boolean": False, "array": [], "object": {}}
    values = {}
    for name in params.get("required", []):
        prop = params.get("properties", {}).get(name, {})
        kind = prop.get("type") or next((a.get("type") for a in prop.get("anyOf", []) if a.get("type") != "null"), "string")
        values[name] = empty.get(kind, "")
    return json.dumps(values, indent=1)


def diff_html(diff: str) -> str:
    if not diff:
        return '<div class="adbg-diff"><em>no code changed in this step</em></div>'
    rows = []
    for line in diff.splitlines():
        kind = "meta" if line.startswith(("---", "+++", "@@")) else "add" if line.startswith("+") else "del" if line.startswith("-") else "ctx"
        rows.append(f'<span class="{kind}">{html.escape(line) or " "}</span>')
    return '<pre class="adbg-diff">' + "".join(rows) + "</pre>"  # each line is a block: no newlines between


CSS = """
.adbg-diff { font-family: ui-monospace, monospace; font-size: 13px; padding: 8px; overflow-x: auto; }
.adbg-diff .add { background: #e6ffec; display: block; }
.adbg-diff .del { background: #ffebe9; display: block; }
.adbg-diff .meta { color: #6e7781; display: block; }
.adbg-diff .ctx { display: block; }
#error p { color: #b42318; font-weight: 600; }
"""
