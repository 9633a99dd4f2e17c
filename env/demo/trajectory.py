"""Saved episodes: write one, read one back (the demo's JSON or an evaluation's per-step JSONL), replay it.

    trajectory = Trajectory(task_id="easy", seed=1, steps=[...])     # what the demo's "Download" writes
    trajectory = load(text)                                          # either format
    result = replay(trajectory, DebugEnvironment(runtime))           # each step's code diff, re-run

A trajectory keeps what was done and what it earned, not the code: ``replay`` runs the same
actions from the same seed in this process and records every file after each step, so the code
diff of a step is the real effect of its action. Recorded and replayed rewards are shown side by
side. A replay reproduces the recording only under the same server secret (``ENV_SECRET``): the
hard task's stress plans derive from it, so a trajectory records the secret's fingerprint and a
replay under another secret says so.
"""

from __future__ import annotations

import difflib
import json
import time
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from env.models import DebugAction

FORMAT = "agentdebugger-trajectory/1"
MAX_STEPS = 500  # longer than any task's max_steps
MAX_BYTES = 4_000_000
REPLAY_BUDGET_S = 120.0  # a replay re-runs every action: a file of slow steps must not hold a worker for long


class TrajectoryStep(BaseModel):
    step: int = Field(ge=1)
    action: dict[str, Any]
    reward: float
    breakdown: dict[str, float] = Field(default_factory=dict)
    observation: dict[str, Any] = Field(default_factory=dict, description="What the step showed, in short (numbers and errors)")


class Trajectory(BaseModel):
    format: Literal["agentdebugger-trajectory/1"] = FORMAT
    task_id: str
    seed: int
    profile: str = "default"
    agent: str = "human"
    score: float | None = None
    secret_fingerprint: str = Field("", description="The recording server's secret fingerprint (env.secret)")
    steps: list[TrajectoryStep] = Field(default_factory=list, max_length=MAX_STEPS)

    def dumps(self) -> str:
        return self.model_dump_json(indent=1)


class Frame(BaseModel):
    """One replayed step."""

    step: int
    action: dict[str, Any]
    recorded_reward: float
    reward: float
    tests_passed: int
    tests_total: int
    error: str | None = None
    output: str = ""
    grader_score: float | None = None
    breakdown: dict[str, float] = Field(default_factory=dict)
    diff: str = Field("", description="Unified diff of the files this step changed")


class Replay(BaseModel):
    frames: list[Frame]
    cut: str | None = Field(None, description="Why the replay stopped before the recording's last step, if it did")
    secret_note: str | None = Field(None, description="Set when the replay runs under another server secret than the recording")


class TrajectoryError(ValueError):
    pass


def load(text: str) -> Trajectory:
    """The demo's JSON document, or the JSONL of ``python -m env.eval run`` (``steps/<arm>/<task>/run<N>.jsonl``)."""
    if len(text) > MAX_BYTES:
        raise TrajectoryError(f"the file is larger than {MAX_BYTES} bytes")
    stripped = text.strip()
    if not stripped:
        raise TrajectoryError("the file is empty")
    try:
        if stripped.startswith("{") and "\n{" not in stripped:
            return Trajectory.model_validate_json(stripped)
        records = [json.loads(line) for line in stripped.splitlines() if line.strip()]
    except RecursionError:
        raise TrajectoryError("not a trajectory: nested too deeply") from None
    except (ValueError, ValidationError) as exc:
        raise TrajectoryError(f"not a trajectory: {_short(exc)}") from None
    if not records or not all(isinstance(r, dict) for r in records):
        raise TrajectoryError("not a trajectory: expected one JSON object per line")
    first = records[0]
    if "task_id" not in first or "seed" not in first:
        raise TrajectoryError("this steps file does not name its task_id and seed (files written by env.eval before they were recorded cannot be replayed)")
    try:
        return Trajectory(
            task_id=first["task_id"],
            seed=first["seed"],
            profile=first.get("profile") or "default",
            agent=first.get("agent") or "agent",
            secret_fingerprint=str(first.get("secret_fingerprint") or ""),
            steps=[TrajectoryStep(step=r["step"], action=r["action"], reward=r["reward"], breakdown=r.get("breakdown") or {}, observation=r.get("observation") or {}) for r in records],
        )
    except (KeyError, TypeError, ValidationError) as exc:
        raise TrajectoryError(f"not a trajectory: {_short(exc)}") from None


def _short(exc: Exception) -> str:
    """The first problem, naming its field."""
    if isinstance(exc, ValidationError):
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        return f"{where}: {error['msg']}"[:300] if where else error["msg"][:300]
    if isinstance(exc, KeyError):
        return f"a step has no {exc.args[0]!r}"
    return str(exc).splitlines()[0][:300]


def diff_files(before: dict[str, str], after: dict[str, str]) -> str:
    chunks = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if old == new:
            continue
        chunks.extend(
            difflib.unified_diff(
                (old or "").splitlines(keepends=True),
                (new or "").splitlines(keepends=True),
                fromfile=f"a/{path}" if old is not None else "/dev/null",
                tofile=f"b/{path}" if new is not None else "/dev/null",
            )
        )
    return "".join(line if line.endswith("\n") else line + "\n" for line in chunks)


def output_of(obs: dict[str, Any]) -> str:
    """The text a step showed the agent: a tool's output, a query's answer, or the test output."""
    return obs.get("tool_output") or obs.get("query_result") or obs.get("current_error_output") or ""


def replay(trajectory: Trajectory, env: Any, budget_s: float = REPLAY_BUDGET_S, progress: Callable[[int, int], None] | None = None) -> Replay:
    """Run the trajectory's actions again from its seed in ``env`` (an in-process DebugEnvironment),
    stopping once ``budget_s`` seconds have been spent; ``progress(done, total)`` is told after each step."""
    deadline = time.monotonic() + budget_s
    options = {} if trajectory.profile == "default" else {"profile": trajectory.profile}
    obs = env.reset(task_id=trajectory.task_id, seed=trajectory.seed, **options).model_dump()
    if obs.get("error") and not obs.get("task_id"):
        raise TrajectoryError(obs["error"])
    files = env.files()
    now_fingerprint = (obs.get("info") or {}).get("secret_fingerprint", "")
    note = None
    if trajectory.secret_fingerprint and now_fingerprint != trajectory.secret_fingerprint:
        note = (
            f"recorded under the secret with fingerprint {trajectory.secret_fingerprint}, replayed under {now_fingerprint}: "
            "verdicts that derive from the secret (the hard task's stress check) may differ; set ENV_SECRET to match"
        )
    frames: list[Frame] = []
    cut = None
    for recorded in trajectory.steps:
        if obs.get("done"):
            cut = f"the replayed episode ended at step {len(frames)}, before the recording did"
            break
        if time.monotonic() > deadline:
            cut = f"stopped after {len(frames)} of {len(trajectory.steps)} steps: a replay may take {budget_s:g} s"
            break
        try:
            action = DebugAction(**recorded.action)
        except (TypeError, ValidationError) as exc:
            raise TrajectoryError(f"step {recorded.step}: not an action: {_short(exc)}") from None
        obs = env.step(action).model_dump()
        now = env.files()
        frames.append(
            Frame(
                step=recorded.step,
                action=recorded.action,
                recorded_reward=recorded.reward,
                reward=float(obs.get("reward") or 0.0),
                tests_passed=obs.get("tests_passed") or 0,
                tests_total=obs.get("tests_total") or 0,
                error=obs.get("error"),
                output=output_of(obs),
                grader_score=obs.get("grader_score"),
                breakdown=obs.get("breakdown") or {},
                diff=diff_files(files, now),
            )
        )
        files = now
        if progress is not None:
            progress(len(frames), len(trajectory.steps))
    return Replay(frames=frames, cut=cut, secret_note=note)
