"""One episode on a repository task: tools act on a private workspace; tests run in the sandbox.

    episode = REPO.episode(runtime, catalog.get("repo-mutable-default"), seed=1, episode_id="e1")   # a RepoEpisode
    episode.step(DebugAction(action_type="view_file", path="shop/cart.py"))
    episode.step(DebugAction(action_type="run_tests"))
    episode.step(DebugAction(action_type="submit"))      # grades and ends the episode

An action's ``action_type`` names a tool; its other fields are the tool's arguments. Rewards and
the grade come from ``env.rewards`` and ``env.families.repo.grader``, computed from recorded facts.
Held-out tests' outcomes (a graded run's ``verdict.held_out``) are kept apart from ``last_status``, the
visible tests' outcomes every observation shows: they enter rewards and the grade, never a view.
"""

from __future__ import annotations

from typing import Any

from env import rewards
from env.families.base import Episode, StateParts, Turn
from env.families.repo.grader import RepoFacts, RepoGrade, grade_repo
from env.graders.hypothesis import suspect_matches
from env.interface import Interface
from env.models import DebugAction, DebugObservation
from env.patches import make_patch, touched
from env.project import RepoTask, source_only
from env.runtime import Runtime
from env.timing import phase
from env.tools import TOOLS, ToolContext, run_call
from env.verdict.outcome import RepoVerdict, f2p_ok, p2p_ok, resolution
from env.workspace import Workspace


class RepoEpisode(Episode):
    task: RepoTask

    def __init__(self, runtime: Runtime, task: RepoTask, seed: int, episode_id: str, interface: Interface):
        super().__init__(runtime, task, seed, episode_id, interface)
        self.workspace = Workspace.create(task, runtime.templates, runtime.sandbox.tmp_root)
        self.ctx = self.context()
        self.submitted = False
        self.last_status: dict[str, str] = {}  # the visible tests' latest outcomes: what observations show
        self.held_status: dict[str, str] = {}  # the held-out tests' latest outcomes (graded runs only): never shown
        self.sandboxed_results: set[str] = set()  # tests whose last result came from a sandboxed run
        self.best_f2p = 0  # F2P tests passing in the best clean run so far (the bug passes none)
        self.claim: dict[str, float] = {}
        self.test_runs = 0
        self.final_grade: RepoGrade | None = None
        self.final_verdict: RepoVerdict | None = None
        self.model_patch = ""

    def unpaid(self) -> str:
        if self.task.trusted or self.runtime.allow_sandboxed_reward:
            return ""
        return (
            "this task's FAIL_TO_PASS tests run sandboxed, where the project's code could forge them: its rewards are not "
            "paid unless the server runs with ENV_ALLOW_SANDBOXED_REWARD=1"
        )

    def context(self) -> ToolContext:
        """What the episode's tools may touch (a family with tools of its own adds what they need)."""
        return ToolContext(self.task, self.workspace, self.runtime, repository=self.task)

    # -- grading ------------------------------------------------------------------------------

    def _patch(self) -> str:
        return make_patch(self.task.source_files, source_only(self.workspace.files()))

    def facts(self, verdict: RepoVerdict | None, patch: str) -> RepoFacts:
        outcomes = verdict.graded_outcomes() if verdict else {**self.last_status, **self.held_status}
        held = set(self.task.held_out)
        return RepoFacts(
            resolution=resolution(outcomes, self.task.fail_to_pass, self.task.pass_to_pass) if outcomes else "NO",
            f2p_passed=sum(f2p_ok(outcomes.get(t, "ERROR")) for t in self.task.fail_to_pass),
            f2p_total=len(self.task.fail_to_pass),
            held_out_f2p_passed=sum(f2p_ok(outcomes.get(t, "ERROR")) for t in self.task.fail_to_pass if t in held),
            held_out_f2p_total=sum(t in held for t in self.task.fail_to_pass),
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
        with phase("grade"):
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
        verdict = TOOLS["submit"].run(self.ctx, None).verdict
        if verdict is None:  # submit always runs the tests
            raise RuntimeError("the submit tool returned no verdict")
        return verdict

    def _record_run(self, verdict: RepoVerdict) -> rewards.Breakdown:
        """Progress only beyond the best clean run so far: a run that ran every P2P test it may run (the visible ones;
        a graded run the held-out ones too, a missing one failed) and broke none. F2P tests count over the whole list,
        held-out ones included, so the visible tests alone pay only their share (see ``env.rewards``)."""
        self.test_runs += 1
        visible = verdict.outcomes
        held = {t: verdict.held_out.get(t, "ERROR") for t in self.task.held_out} if verdict.held_out is not None else {}
        outcomes = {**visible, **held}
        passing = sum(f2p_ok(outcomes.get(t, "")) for t in self.task.fail_to_pass)
        required = self.task.visible_pass_to_pass + [t for t in self.task.pass_to_pass if t in held]
        clean = all(t in outcomes and p2p_ok(outcomes[t]) for t in required)
        gain = max(0, passing - self.best_f2p) if clean else 0
        self.best_f2p += gain
        before = {**self.last_status, **self.held_status}
        broken = [t for t in self.task.pass_to_pass if t in outcomes and not p2p_ok(outcomes[t]) and p2p_ok(before.get(t, "PASSED"))]
        hidden = set(self.task.held_out)
        # A held-out id never enters what observations show, even one a visible run happened to report.
        self.last_status.update({t: s for t, s in visible.items() if t not in hidden})
        self.held_status.update(held)
        self.sandboxed_results = (self.sandboxed_results - set(visible)) | (set(verdict.sandboxed) - hidden)
        return rewards.test_run_reward(gain, len(self.task.fail_to_pass), len(broken), len(self.task.pass_to_pass))

    def _judge_claim(self, args: dict[str, Any]) -> None:
        """A submit's structured hypothesis, reported in the breakdown (the family's grade keeps its own terms)."""
        if args.get("suspect") is not None:
            self.claim["claim.suspect"] = float(suspect_matches(str(args["suspect"]), self.task.gold_lines))
        if args.get("mechanism") is not None:
            self.claim["claim.mechanism"] = float(args["mechanism"] in self.task.mechanism)

    # -- actions ------------------------------------------------------------------------------

    def act(self, action: DebugAction, turn: Turn) -> None:
        call = self.interface.resolve(action.action_type, self.arguments(action))
        # recorded for the trajectory when the agent used another name for the tool
        self.last_call = {"tool": call.name, "aliased_from": call.aliased_from} if call.aliased_from else {}
        result = run_call(self.ctx, self.interface, call)
        self.recorded(call.tool, call.args)
        turn.tool_output, self.last_data = result.output, result.data
        if call.tool == "give_up":
            self.gave_up = True
            turn.parts = self._finish(None)
            return
        if result.verdict is not None:
            turn.parts = self._record_run(result.verdict)
        if TOOLS[call.tool].submits:
            self._judge_claim(call.args)
            self.submitted = True
            turn.parts.update(self._finish(result.verdict))

    def finish(self) -> None:
        self._finish(None)

    def files(self) -> dict[str, str]:
        return dict(self.workspace.files())

    def close(self) -> None:
        self.ctx.close()
        self.workspace.close()

    # -- views --------------------------------------------------------------------------------

    def observe(
        self, reward: float, parts: rewards.Breakdown, error: str | None = None, query_result: str | None = None, tool_output: str | None = None,
    ) -> DebugObservation:
        grade = self.final_grade
        breakdown = dict(parts)
        if grade is not None:
            breakdown.update({f"grader.{k}": v for k, v in grade.components.items()})
            breakdown.update(self.claim)
        f2p_passing = sum(f2p_ok(self.last_status.get(t, "")) for t in self.task.fail_to_pass)
        info = self.info(error)
        # How far the results that decide this task can be trusted, and which of the last results came from a run
        # the project shared with pytest (forgeable in principle: see env.verdict.sandboxed).
        info["trust"] = "split" if self.task.trusted else "sandboxed"
        if self.sandboxed_results:
            info["sandboxed_tests"] = sorted(self.sandboxed_results)
        if self.done:
            info["model_patch"] = self.model_patch
            info["resolved"] = self.solved
        passed = self.graded_passing()
        return DebugObservation(
            done=self.done,
            reward=reward,
            episode_id=self.episode_id,
            task_id=self.task.id,
            family=self.task.family,
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

    def graded_passing(self) -> int:
        """Passing tests among those ``tests_total`` counts: a run also shows tests no grade reads (ones dropped from
        PASS_TO_PASS as failing or unstable), which would make "passed" exceed "total"."""
        return sum(1 for t in (*self.task.fail_to_pass, *self.task.pass_to_pass) if self.last_status.get(t) == "PASSED")

    def state_fields(self) -> StateParts:
        return {
            "attempts_used": int(self.submitted),
            "max_attempts": 1,
            "tests_passed": self.graded_passing(),
            "grader_score": self.final_grade.score if self.final_grade else None,
        }
