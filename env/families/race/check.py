"""A race-family task's concurrency check, as the verdict runs every concurrency check (env.families.classic.judge):
controlled interleavings judged against the domain's sequential model, the lock-discipline review of the source, and
real threads.

    check = RaceCheck(DOMAINS["cache"], "Cache")
    plan = check.plan(rng)                      # the explorer's scenarios, and the real-threads run's under "hammer"
    check.judge_exploration(plan, reply, source)
    check.judge_hammer(plan, reply)             # "" when every real run is explained by some order of its calls

The real threads run the plan's two-thread scenarios (every pair of racing calls from both starts, and the domain's
own), each ``REPEATS`` times on a fresh object with a tiny switch interval, in a process of their own that no tracer
ever ran in: no code can tell them from production. Each distinct observation is judged as a schedule of the explorer
is (``exploration.problem``); threads still running when the budget is spent fail the check, unless the machine
starved them (then nothing is decided: an infrastructure fault).
"""

from __future__ import annotations

import random
from typing import Any

from env.families.classic.concurrency import StressOutcome
from env.families.race import exploration
from env.families.race.models import Model
from env.sandbox.cputime import STARVED

REPEATS = 12  # runs of each scenario on real threads
HAMMER_SECONDS = 2.0  # the real-threads run's budget (CPU time where the run decides validity)


class RaceCheck:
    def __init__(self, model: Model, cls: str):
        self.model = model
        self._cls = cls

    @property
    def cls(self) -> str:
        return self._cls

    def plan(self, rng: random.Random) -> dict[str, Any]:
        plan = exploration.plan_for(self.model, self._cls, rng)
        real = [s for s in plan["scenarios"] if s.get("sweep")]
        plan["hammer"] = {"cls": self._cls, "model": True, "scenarios": real, "repeats": REPEATS, "switch": 1e-6, "seconds": HAMMER_SECONDS}
        return plan

    def judge_exploration(self, plan: dict[str, Any], reply: Any, source: str) -> StressOutcome:
        return exploration.judge(self.model, plan, reply, source)

    def judge_hammer(self, plan: dict[str, Any], reply: Any) -> str:
        settings = plan["hammer"]
        if isinstance(reply, dict) and isinstance(reply.get("refused"), str) and reply["refused"]:
            return f"the real-threads check cannot run here: {reply['refused'][:300]}"
        if not isinstance(reply, dict) or not isinstance(reply.get("observations"), list):
            return "the real-threads check returned nothing"
        if reply.get("stopped"):
            return f"the real-threads check could not run: {str(reply['stopped'])[:300]}"
        scenarios = settings["scenarios"]
        for observation in reply["observations"]:
            number = observation.get("scenario") if isinstance(observation, dict) else None
            if type(number) is not int or not 0 <= number < len(scenarios):
                return "the real-threads check returned a malformed report"
            wrong = exploration.problem(self.model, scenarios[number], observation)
            if wrong:
                return f"real threads, {exploration.describe(scenarios[number])}: {wrong}"
        unfinished = reply.get("unfinished")
        if unfinished is not None:
            if type(unfinished) is not int or not 0 <= unfinished < len(scenarios):
                return "the real-threads check returned a malformed report"
            who = exploration.describe(scenarios[unfinished])
            if settings.get("cpu") and reply.get("starved"):
                return (f"{STARVED}: real threads, {who}, had used less than their {settings['seconds']:g} s of CPU time when the "
                        f"wall-clock backstop of {settings['backstop']:g} s stopped them (an infrastructure fault, not the code's outcome)")  # fmt: skip
            unit = " of CPU time" if settings.get("cpu") else ""
            return f"real threads, {who}, did not finish within {settings['seconds']:g} s{unit}: a deadlock, or a thread waiting for good"
        return ""

    def problem(self, observation: dict[str, Any], scenario: dict[str, Any]) -> str:
        return exploration.problem(self.model, scenario, observation)

    def describe(self, scenario: dict[str, Any]) -> str:
        return exploration.describe(scenario)
