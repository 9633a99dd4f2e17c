"""One episode on a repository task: tools act on a private workspace; tests run in the sandbox.

    episode = RepoEpisode(runtime, registry.get("repo-mutable-default"), seed=1, episode_id="e1")
    episode.step(DebugAction(action_type="view_file", path="shop/cart.py"))
    episode.step(DebugAction(action_type="run_tests"))
    episode.step(DebugAction(action_type="submit"))      # grades and ends the episode

An action's ``action_type`` names a tool; its other fields are the tool's arguments. Rewards and
the grade come from ``env.rewards`` and ``env.families.repo.grader``, computed from recorded facts.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from env import rewards
from env.families.repo.grader import RepoFacts, RepoGrade, grade_repo
from env.graders.hypothesis import suspect_matches
from env.interface import PROFILES, Interface
from env.models import DebugAction, DebugObservation, DebugState
from env.patches import make_patch, touched
from env.project import RepoTask, source_only
from env.tools import TOOLS, ToolContext, ToolError, run_call
from env.verdict.repo_judge import RepoVerdict, f2p_ok, p2p_ok, resolution
from env.workspace import Workspace

REPO_TOOLS = PROFILES["default"].tools
_NOT_ARGUMENTS = {"action_type", "metadata"}


def tool_schemas(names: tuple[str, ...] = REPO_TOOLS) -> list[dict[str, Any]]:
    """The tools as OpenAI function-calling definitions (published in /tasks)."""
    return [TOOLS[name].schema() for name in names]


class RepoEpisode:
    def __init__(self, runtime: Any, task: RepoTask, seed: int, episode_id: str, interface: Interface | None = None):
        self.runtime, self.task, self.seed, self.episode_id = runtime, task, seed, episode_id
        self.interface = interface or Interface.for_episode(None, "repo")
        self.lock = threading.Lock()
        self.last_active = time.monotonic()
        self.workspace = Workspace.create(task, runtime.sandbox.tmp_root)
        self.ctx = ToolContext(task, self.workspace, runtime)
        self.last_call: dict[str, Any] = {}
        self.last_data: dict[str, Any] = {}
        self.step_number = 0
        self.cumulative_reward = 0.0
        self.done = self.solved = self.gave_up = self.truncated = self.submitted = False
        self.last_status: dict[str, str] = {}
        self.best_f2p = 0  # F2P tests passing in the best clean run so far (the bug passes none)
        self.claim: dict[str, float] = {}
        self.test_runs = 0
        self.final_grade: RepoGrade | None = None
        self.final_verdict: RepoVerdict | None = None
        self.model_patch = ""

    # -- grading ------------------------------------------------------------------------------

    def _patch(self) -> str:
        return make_patch(self.task.source_files, source_only(self.workspace.files()))

    def facts(self, verdict: RepoVerdict | None, patch: str) -> RepoFacts:
        outcomes = verdict.outcomes if verdict else self.last_status
        return RepoFacts(
            resolution=resolution(outcomes, self.task.fail_to_pass, self.task.pass_to_pass) if outcomes else "NO",
            f2p_passed=sum(f2p_ok(outcomes.get(t, "ERROR")) for t in self.task.fail_to_pass),
            f2p_total=len(self.task.fail_to_pass),
            changed=bool(patch),
            gave_up=self.gave_up,
            edited=touched(self.task.files, patch) if patch else [],
            gold=self.task.gold_locations,
            steps_used=self.step_number,
            max_steps=self.task.max_steps,
        )

    def _finish(self, verdict: RepoVerdict | None) -> rewards.Breakdown:
        self.done = True
        patch = self._patch()
        if verdict is None and patch and not self.gave_up:
            verdict = self.runtime_tests()
        self.final_verdict = verdict
        self.model_patch = patch
        facts = self.facts(verdict, patch)
        self.final_grade = self.grade(facts)
        self.solved = facts.resolution == "FULL" and not self.gave_up
        self.ctx.close()
        self.workspace.close()
        return rewards.resolved_reward(self.solved) if self.submitted else {}

    def grade(self, facts: RepoFacts) -> RepoGrade:
        """The episode's grade from its facts (a family with its own grader overrides this)."""
        return grade_repo(facts)

    def recorded(self, tool: str, args: dict[str, Any]) -> None:
        """Called after every tool call that succeeded (a family that grades the trajectory records it)."""

    def runtime_tests(self) -> RepoVerdict:
        return TOOLS["submit"].run(self.ctx, None).verdict

    def _record_run(self, verdict: RepoVerdict) -> rewards.Breakdown:
        """Progress only beyond the best clean run so far: a run that ran every P2P test and broke none."""
        self.test_runs += 1
        outcomes = verdict.outcomes
        passing = sum(f2p_ok(outcomes.get(t, "")) for t in self.task.fail_to_pass)
        clean = all(t in outcomes and p2p_ok(outcomes[t]) for t in self.task.pass_to_pass)
        gain = max(0, passing - self.best_f2p) if clean else 0
        self.best_f2p += gain
        broken = [t for t in self.task.pass_to_pass if t in outcomes and not p2p_ok(outcomes[t]) and p2p_ok(self.last_status.get(t, "PASSED"))]
        self.last_status.update(outcomes)
        return rewards.test_run_reward(gain, len(self.task.fail_to_pass), len(broken), len(self.task.pass_to_pass))

    def _judge_claim(self, args: dict[str, Any]) -> None:
        """A submit's structured hypothesis, reported in the breakdown (the family's grade keeps its own terms)."""
        if args.get("suspect") is not None:
            self.claim["claim.suspect"] = float(suspect_matches(str(args["suspect"]), self.task.gold_lines))
        if args.get("mechanism") is not None:
            self.claim["claim.mechanism"] = float(args["mechanism"] in self.task.mechanism)

    # -- actions ------------------------------------------------------------------------------

    def step(self, action: DebugAction) -> DebugObservation:
        with self.lock:
            self.last_active = time.monotonic()
            if self.done:
                return self.observe(0.0, {}, error="the episode is over; call reset to start a new one")
            self.step_number += 1
            parts: rewards.Breakdown = {}
            error = output = None
            self.last_call, self.last_data = {}, {}
            try:
                raw = {k: v for k, v in action.model_dump(exclude_unset=True).items() if k not in _NOT_ARGUMENTS}
                call = self.interface.resolve(action.action_type, raw)
                # recorded for the trajectory when the agent used another name for the tool
                self.last_call = {"tool": call.name, "aliased_from": call.aliased_from} if call.aliased_from else {}
                result = run_call(self.ctx, self.interface, call)
                self.recorded(call.tool, call.args)
                output, self.last_data = result.output, result.data
                if call.tool == "give_up":
                    self.gave_up = True
                    parts = self._finish(None)
                else:
                    if result.verdict is not None:
                        parts = self._record_run(result.verdict)
                    if TOOLS[call.tool].submits:
                        self._judge_claim(call.args)
                        self.submitted = True
                        parts.update(self._finish(result.verdict))
            except ToolError as exc:
                error = str(exc)
            if not self.done and self.step_number >= self.task.max_steps:
                self.truncated = True
                parts.update(rewards.truncation_reward())
                self._finish(None)
            reward = rewards.total(parts)
            self.cumulative_reward = round(self.cumulative_reward + reward, 6)
            return self.observe(reward, parts, error=error, tool_output=output)

    def files(self) -> dict[str, str]:
        return dict(self.workspace.files())

    def close(self) -> None:
        self.ctx.close()
        self.workspace.close()

    # -- views --------------------------------------------------------------------------------

    def observe(self, reward: float, parts: rewards.Breakdown, error: str | None = None, tool_output: str | None = None) -> DebugObservation:
        grade = self.final_grade
        breakdown = dict(parts)
        if grade is not None:
            breakdown.update({f"grader.{k}": v for k, v in grade.components.items()})
            breakdown.update(self.claim)
        f2p_passing = sum(f2p_ok(self.last_status.get(t, "")) for t in self.task.fail_to_pass)
        info: dict[str, Any] = {"error": error} if error else {}
        if self.interface.profile.name != "default":
            info["interface"] = self.interface.info()
        if self.last_call:
            info["call"] = self.last_call  # the tool that ran, and the alias the agent used, if any
        if self.done:
            info["model_patch"] = self.model_patch
            info["resolved"] = self.solved
        passed = sum(1 for s in self.last_status.values() if s == "PASSED")
        return DebugObservation(
            done=self.done,
            reward=reward,
            episode_id=self.episode_id,
            task_id=self.task.id,
            family="repo",
            task_description=self.task.problem_statement,
            tests_passed=passed,
            tests_total=self.task.tests_total,
            attempts_remaining=0 if self.done else 1,
            max_attempts=1,
            step_number=self.step_number,
            max_steps=self.task.max_steps,
            score_estimate=round(f2p_passing / len(self.task.fail_to_pass), 6),
            error=error,
            info=info,
            step_reward=reward,
            cumulative_reward=self.cumulative_reward,
            grader_score=grade.score if grade else None,
            breakdown=breakdown,
            tool_output=tool_output,
            test_results=dict(self.last_status),
            available_actions=[] if self.done else list(self.interface.tools),
            tool_result=self.last_data,
        )

    def state(self) -> DebugState:
        return DebugState(
            episode_id=self.episode_id,
            step_count=self.step_number,
            task_id=self.task.id,
            seed=self.seed,
            done=self.done,
            solved=self.solved,
            gave_up=self.gave_up,
            truncated=self.truncated,
            attempts_used=int(self.submitted),
            max_attempts=1,
            max_steps=self.task.max_steps,
            tests_passed=sum(1 for s in self.last_status.values() if s == "PASSED"),
            tests_total=self.task.tests_total,
            cumulative_reward=self.cumulative_reward,
            grader_score=self.final_grade.score if self.final_grade else None,
            secret_fingerprint=self.runtime.secret.fingerprint,
        )
