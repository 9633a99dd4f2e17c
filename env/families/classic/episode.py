"""One debugging episode: applies actions, records facts, and builds observations.

    episode = CLASSIC.episode(runtime, runtime.catalog.get("easy"), seed=1, episode_id="e1")   # a ClassicEpisode
    obs = episode.step(DebugAction(action_type="submit_fix", fixed_code=code, hypothesis="..."))
    obs.step_reward, obs.tests_passed, obs.done, obs.grader_score

Rewards and grades are computed by the pure functions in ``env.rewards`` and the family's grader
from the facts recorded here; the step loop is every family's (``env.families.base.Episode``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, Field

from env import rewards
from env.families.base import Episode, StateParts, Turn
from env.families.classic.fields import AttemptView
from env.families.classic.grader import AttemptFacts, EpisodeFacts, Grade, best_attempt, grade_episode
from env.families.classic.judge import Verdict, baseline, held_out_baseline, judge_on, stress_check
from env.families.classic.queries import QueryError, answer_query
from env.families.classic.race_trace import race_report
from env.families.classic.task import TaskSpec, normalized_ast
from env.families.classic.tools import CLASSIC_ACTIONS, ActionError, QueryContextArgs, SubmitFixArgs
from env.families.classic.traced_test import traced_test
from env.families.classic.workbench import Workbench
from env.graders.hypothesis import GoldClaim, judge_hypothesis
from env.interface import Interface
from env.models import DebugAction, DebugObservation
from env.runtime import Runtime
from env.timing import phase
from env.tools import TOOLS, ToolError, run_call
from env.tools.base import UnknownTool
from env.tools.reports import TracedOutcome, TraceReport


class Attempt(BaseModel):
    code: str
    tree: str = Field(description="normalized AST, to spot resubmissions")
    hypothesis: str
    output: str
    execution_time_ms: float
    facts: AttemptFacts

    def view(self) -> AttemptView:
        return AttemptView(
            code=self.code,
            hypothesis=self.hypothesis,
            output=self.output,
            tests_passed=self.facts.tests_passed,
            execution_time_ms=round(self.execution_time_ms, 1),
            timed_out=self.facts.timed_out,
        )


class ClassicEpisode(Episode):
    mistakes: ClassVar[tuple[type[Exception], ...]] = (ActionError, QueryError, ToolError)
    task: TaskSpec

    def __init__(self, runtime: Runtime, task: TaskSpec, seed: int, episode_id: str, interface: Interface):
        super().__init__(runtime, task, seed, episode_id, interface)
        self._bench: Workbench | None = None
        # The concurrency check's scenarios: reproducible for whoever holds the server's secret, unpredictable from the seed.
        self.rng = runtime.secret.rng("classic", task.id, seed, "verdict")
        # Held-out cases: like the scenarios, fixed by the secret and the seed; never in an observation or the state.
        self.held_out = task.held_out_cases(runtime.secret.rng("classic", task.id, seed, "held-out"))
        self._held_out_baseline: int | None = None  # what the bug passes of them: measured at the first submission
        first = baseline(runtime, task)
        self.initial_output = first.report()
        self.current_code = task.buggy_source
        self.current_output = self.initial_output
        self.tests_passed = first.tests_passed
        self.baseline_passed = first.tests_passed
        self.last_verdict: Verdict = first
        self.attempts: list[Attempt] = []
        self.queries = 0
        self.final_grade: Grade | None = None

    # -- facts and grades ---------------------------------------------------------------------

    @property
    def held_out_baseline(self) -> int:
        if self._held_out_baseline is None:
            with phase("baseline"):  # the buggy code on this episode's held-out cases, once, at its first submission
                self._held_out_baseline = held_out_baseline(self.runtime, self.task, self.held_out)
        return self._held_out_baseline

    def best_passed(self) -> int:
        """The best trusted outcome so far (visible tests and held-out cases passing; at first the bug's own):
        what progress is measured against."""
        outcomes = [a.facts.tests_passed + a.facts.held_out_passed for a in self.attempts]
        return max([self.baseline_passed + self.held_out_baseline, *outcomes])

    def facts(self, grade_attempt: int | None = None, grade_stress_passed: bool = False) -> EpisodeFacts:
        return EpisodeFacts(
            tests_total=self.task.tests_total,
            baseline_passed=self.baseline_passed,
            held_out_total=len(self.held_out),
            held_out_baseline=self._held_out_baseline or 0,
            max_attempts=self.task.max_attempts,
            concurrency=self.task.stress is not None,
            attempts=[a.facts for a in self.attempts],
            queries=self.queries,
            gave_up=self.gave_up,
            grade_attempt=grade_attempt,
            grade_stress_passed=grade_stress_passed,
        )

    def estimate(self) -> Grade:
        """The running grade: the final grade's formula, taking the submission step's stress check as the grade's."""
        if self.final_grade is not None:
            return self.final_grade
        index = best_attempt([a.facts for a in self.attempts])
        passed = index is not None and bool(self.attempts[index].facts.stress_passed)
        return grade_episode(self.facts(index, passed))

    def finish(self) -> None:
        self.done = True
        index, passed = best_attempt([a.facts for a in self.attempts]), False
        if self.task.stress is not None and index is not None and self.attempts[index].facts.stress_passed:
            # the same full check as at submission, on a fresh process: passing once by luck is not enough
            with phase("race"):
                check = stress_check(self.task, self.attempts[index].code, self.runtime.sandbox, self.rng, self.runtime.static_check)
            passed = check.passed
        with phase("grade"):
            self.final_grade = grade_episode(self.facts(index, passed))
        if self._bench is not None:
            self._bench.close()

    # -- actions ------------------------------------------------------------------------------

    def _submit(self, code: str, hypothesis: str | None, suspect: str | None = None, mechanism: str | None = None) -> rewards.Breakdown:
        if not (hypothesis or "").strip() and suspect is None and mechanism is None:
            return rewards.missing_hypothesis_reward()
        best = self.best_passed()
        verdict = judge_on(self.runtime, self.task, code, self.rng, held_out=self.held_out)
        tree = normalized_ast(code)
        gold = GoldClaim(locations=self.task.gold_locations, mechanisms=self.task.mechanism)
        judgement = judge_hypothesis(hypothesis, self.task.hypothesis, suspect=suspect, mechanism=mechanism, gold=gold)
        # Progress counts the held-out cases too: fitting the visible tests is a small share of it.
        passed, total = verdict.tests_passed + verdict.held_out_passed, self.task.tests_total + len(self.held_out)
        delta_zero = passed <= best
        facts = AttemptFacts(
            tests_passed=verdict.tests_passed,
            held_out_passed=verdict.held_out_passed,
            solved=verdict.solved,
            same_as_buggy=bool(tree) and tree == self.task.buggy_ast,
            repeated=bool(tree) and any(a.tree == tree for a in self.attempts),
            no_progress=delta_zero and not verdict.solved,
            timed_out=verdict.timed_out,
            stress_passed=verdict.stress.passed if verdict.stress else None,
            hypothesis_score=judgement.score,
            follows_red_herring=judgement.follows_red_herring,
            wrong_claim=judgement.wrong_claim,
        )
        parts = rewards.submission_reward(best, passed, total, verdict.solved, verdict.timed_out)
        output = verdict.report()
        elapsed = verdict.run.duration_ms if verdict.run else 0.0
        self.attempts.append(Attempt(code=code, tree=tree, hypothesis=hypothesis or "", output=output, execution_time_ms=elapsed, facts=facts))
        self.current_code, self.current_output = code, output
        if self._bench is not None:
            self._bench.submitted(code)
        self.tests_passed, self.last_verdict = verdict.tests_passed, verdict
        if verdict.solved:
            self.solved = True
            self.finish()
        elif len(self.attempts) >= self.task.max_attempts:
            self.finish()
        return parts

    def _query(self, query_type: str, target: str | None) -> tuple[rewards.Breakdown, str]:
        answer = answer_query(query_type, target, self.current_code, self.task, self.last_verdict)
        parts = rewards.query_reward(self.queries)
        self.queries += 1
        return parts, answer

    @property
    def bench(self) -> Workbench:
        """The module and its tests as files, for the profile's tools (made on first use)."""
        if self._bench is None:
            self._bench = Workbench(self.task, self.runtime, self.current_code)
            if self.task.stress is not None:
                self._bench.ctx.race_trace = self._race_trace
            self._bench.ctx.test_outcome = self._traced_test
        return self._bench

    def _traced_test(self, test: str) -> TracedOutcome:
        """trace_report's outcome of a workbench test: the judge's, on the workbench's module as it is now."""
        source = (self.bench.workspace.root / self.task.filename).read_text(encoding="utf-8", errors="replace")
        return traced_test(self.runtime, self.task, self.bench.test_file, test, source)

    def _race_trace(self, max_calls: int) -> TraceReport:
        """trace_report(race=true): the race check's failing interleaving on the workbench's module as it is now."""
        source = (self.bench.workspace.root / self.task.filename).read_text(encoding="utf-8", errors="replace")
        rng = self.runtime.secret.rng("classic", self.task.id, self.seed, "trace")  # never the verdict's scenarios
        return race_report(self.task, source, self.runtime.sandbox, rng, self.runtime.static_check, max_calls)

    def _tool(self, action: DebugAction) -> str:
        call = self.interface.resolve(action.action_type, self.arguments(action))
        # recorded for the trajectory when the agent used another name for the tool
        self.last_call = {"tool": call.name, "aliased_from": call.aliased_from} if call.aliased_from else {}
        result = run_call(self.bench.ctx, self.interface, call)
        self.last_data = result.data
        return result.output

    def act(self, action: DebugAction, turn: Turn) -> None:
        kind = action.action_type
        if kind not in CLASSIC_ACTIONS and self.interface.tools != CLASSIC_ACTIONS:
            turn.tool_output = self._tool(action)
            return
        if not kind:
            raise UnknownTool(f"missing field 'action_type'; expected one of: {', '.join(CLASSIC_ACTIONS)}")
        if kind not in CLASSIC_ACTIONS:
            raise UnknownTool(f"unknown action_type {kind!r}; expected one of: {', '.join(CLASSIC_ACTIONS)}")
        args = TOOLS[self.interface.registered(kind)].parse(self.arguments(action))
        if isinstance(args, SubmitFixArgs):
            if not self.runtime.isolation.can_execute:
                raise ToolError(self.runtime.isolation.reason)  # the host's refusal, not the action's fault
            self.interface.check_gate("submit_fix")
            turn.parts = self._submit(args.fixed_code or "", args.hypothesis, args.suspect, args.mechanism)
        elif isinstance(args, QueryContextArgs):
            turn.parts, turn.query_result = self._query(args.query_type or "", args.query_target)
        else:
            self.gave_up = True
            self.finish()

    def files(self) -> dict[str, str]:
        return {self.task.filename: self.current_code}

    def close(self) -> None:
        if self._bench is not None:
            self._bench.close()

    # -- views --------------------------------------------------------------------------------

    def observe(
        self, reward: float, parts: rewards.Breakdown, error: str | None = None, query_result: str | None = None, tool_output: str | None = None,
    ) -> DebugObservation:
        grade = self.estimate()
        breakdown = dict(parts)
        breakdown.update({f"grader.{k}": v for k, v in grade.components.items()})
        breakdown.update({f"failure_mode.{k}": v for k, v in grade.failure_modes.items()})
        task = self.task
        return DebugObservation(
            done=self.done,
            reward=reward,
            episode_id=self.episode_id,
            task_id=task.id,
            family=self.task.family,
            task_description=task.description,
            buggy_code=task.buggy_source,
            test_suite=task.test_source,
            current_code=self.current_code,
            initial_error_output=self.initial_output,
            current_error_output=self.current_output,
            tests_passed=self.tests_passed,
            tests_total=task.tests_total,
            previous_attempts=[a.view() for a in self.attempts],
            attempts_remaining=task.max_attempts - len(self.attempts),
            max_attempts=task.max_attempts,
            step_number=self.step_number,
            max_steps=task.max_steps,
            score_estimate=grade.score,
            query_result=query_result,
            error=error,
            info=self.info(error),
            step_reward=reward,
            cumulative_reward=self.cumulative_reward,
            grader_score=self.final_grade.score if self.final_grade else None,
            breakdown=breakdown,
            tool_output=tool_output,
            tool_result=self.last_data,
            available_actions=[] if self.done else list(self.interface.tools),
        )

    def info(self, error: str | None) -> dict[str, Any]:
        info = super().info(error)
        if self.done:
            info["resolved"] = self.solved
        return info

    def state_fields(self) -> StateParts:
        return {
            "attempts_used": len(self.attempts),
            "max_attempts": self.task.max_attempts,
            "tests_passed": self.tests_passed,
            "queries_used": self.queries,
            "grader_score": self.final_grade.score if self.final_grade else None,
        }
