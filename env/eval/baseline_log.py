"""The stdout lines OpenEnv environments' baseline scripts share: one [START] per task, one [STEP] per action, one [END].

    [START] task=easy env=agentdebugger-env model=meta-llama/Llama-3.1-70B-Instruct
    [STEP] step=1 action=query_context(query_type:"test_details", query_target:"test_finds_last_element") reward=0.00 done=false error=null
    [STEP] step=2 action=submit_fix(fixed_code:<379 chars>, hypothesis:"The while loop condition left < right is off by one: the...") reward=0.55 done=true error=null
    [END] success=true steps=2 score=0.960 rewards=0.00,0.55

Every field is one line: an action's arguments are summarised (code by its length, long text cut) and an
error's whitespace, newlines included, collapses to single spaces, so a line never breaks.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

BENCHMARK = "agentdebugger-env"  # openenv.yaml's name

TEXT_CHARS = 60  # a text argument longer than this is cut
CODE_ARGS = frozenset({"fixed_code", "content", "new_text", "old_text", "code", "script"})  # shown by length only


def start_line(task: str, model: str, env: str = BENCHMARK) -> str:
    return f"[START] task={_token(task)} env={env} model={_token(model)}"


def step_line(step: int, action: Mapping[str, object], reward: float, done: bool, error: str | None) -> str:
    shown = one_line(error or "") or "null"
    return f"[STEP] step={step} action={action_summary(action)} reward={_fixed(reward, 2)} done={str(done).lower()} error={shown}"


def end_line(success: bool, steps: int, score: float, rewards: Sequence[float]) -> str:
    grade = min(max(score, 0.0), 1.0)
    return f"[END] success={str(success).lower()} steps={steps} score={_fixed(grade, 3)} rewards={','.join(_fixed(r, 2) for r in rewards)}"


def action_summary(action: Mapping[str, object]) -> str:
    """``type(arg:value, ...)``: ``:`` rather than ``=``, so the line's own key=value fields stay the only ones."""
    args = [f"{key}:{_argument(key, value)}" for key, value in action.items() if key not in ("action_type", "metadata")]
    name = _token(str(action.get("action_type") or "?"))
    return f"{name}({', '.join(args)})" if args else name


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def _argument(key: str, value: object) -> str:
    if isinstance(value, str):
        if key in CODE_ARGS or "\n" in value:
            return f"<{len(value)} chars>"
        return json.dumps(_cut(one_line(value)), ensure_ascii=False)
    if value is None or isinstance(value, bool | int | float):
        return json.dumps(value)
    return _cut(one_line(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)))


def _cut(text: str) -> str:
    return text if len(text) <= TEXT_CHARS else text[: TEXT_CHARS - 3].rstrip() + "..."


def _fixed(value: float, places: int) -> str:
    text = f"{float(value or 0.0):.{places}f}"
    return text.lstrip("-") if float(text) == 0 else text  # never "-0.00"


def _token(text: str) -> str:
    """A task id or model name as one space-free token."""
    return "_".join(str(text).split()) or "?"
