"""The random baseline: valid actions chosen at random (seeded), edits that change a random line.

It shows the floor of the reward and grade: what acting without understanding earns.
"""

from __future__ import annotations

import random
from typing import Any

from env.agents.base import Action, Agent, Observation, register
from env.agents.mutations import mutations
from env.tool_schemas import arguments_of, submits_a_module

HYPOTHESES = ("the loop ends too early", "a value is converted wrongly", "a race between threads", "the cache is stale", "an off-by-one")


@register("random")
class RandomAgent(Agent):
    def begin(self, task: dict[str, Any], observation: Observation, rng: random.Random) -> None:
        super().begin(task, observation, rng)
        self.files: list[str] = []
        self.dirs: list[str] = ["."]
        self.whole_module = submits_a_module(task["tools"])
        self.query_types: list[str] = arguments_of(task["tools"], "query_context").get("query_type", {}).get("enum", [])

    def act(self, observation: Observation) -> Action:
        if not self.whole_module:
            return self._repo(observation)
        roll = self.rng.random()
        if roll < 0.1:
            return {"action_type": "give_up"}
        if roll < 0.35 and self.query_types:
            return {"action_type": "query_context", "query_type": self.rng.choice(self.query_types)}
        options = mutations(observation.get("current_code") or observation.get("buggy_code", ""))
        code = self.rng.choice(options).source if options else observation.get("buggy_code", "")
        return {"action_type": "submit_fix", "fixed_code": code, "hypothesis": self.rng.choice(HYPOTHESES)}

    def _repo(self, observation: Observation) -> Action:
        output = observation.get("tool_output") or ""
        last = getattr(self, "_last", {})
        if last.get("action_type") == "list_dir" and not observation.get("error"):
            base = last.get("path", ".")
            for entry in output.splitlines():
                path = entry if base == "." else f"{base}/{entry}"
                (self.dirs if entry.endswith("/") else self.files).append(path.rstrip("/"))
        if observation.get("step_number", 0) >= observation.get("max_steps", 30) - 1 or self.rng.random() < 0.05:
            action: Action = {"action_type": "submit"}
        else:
            kind = self.rng.choice(["list_dir", "view_file", "run_tests", "edit", "search"])
            python = [f for f in self.files if f.endswith(".py")]
            if kind == "list_dir" or not python:
                action = {"action_type": "list_dir", "path": self.rng.choice(self.dirs)}
            elif kind == "view_file":
                action = {"action_type": "view_file", "path": self.rng.choice(python)}
            elif kind == "search":
                action = {"action_type": "search", "pattern": self.rng.choice(["def ", "return", "if ", "self."])}
            elif kind == "run_tests":
                action = {"action_type": "run_tests"}
            else:
                line = self.rng.randint(1, 20)
                action = {"action_type": "edit", "path": self.rng.choice(python), "start_line": line, "end_line": line, "new_text": "pass\n"}
        self._last = action
        return action
