"""The driver that plays episodes in this process, on a shared sandbox runtime (no server).

    with InProcessDriver(runtime) as env:
        obs = env.reset("easy", seed=1)
"""

from __future__ import annotations

from typing import Any

from env.listing import listing_entry
from env.models import DebugAction
from env.runtime import Runtime
from env.server.environment import DebugEnvironment
from env.server.mcp import tools_of
from env.tool_schemas import function_definitions


class InProcessDriver:
    def __init__(self, runtime: Runtime):
        self.runtime = runtime
        self.env = DebugEnvironment(runtime)

    def tasks(self) -> list[dict[str, Any]]:
        return [listing_entry(self.runtime.catalog.summary(t)) for t in self.runtime.catalog.all()]

    def task(self, task_id: str) -> dict[str, Any] | None:
        """A task by id, listed or not (procedural ids are generated on request)."""
        try:
            return listing_entry(self.runtime.catalog.summary(self.runtime.catalog.get(task_id)))
        except (KeyError, ValueError):  # unknown, or a procedural id out of range
            return None

    def reset(self, task_id: str, seed: int, **options: Any) -> dict[str, Any]:
        return self.env.reset(task_id=task_id, seed=seed, **options).model_dump()

    def fingerprint(self) -> str:
        """The fingerprint of the secret this environment's verdicts derive from."""
        return self.runtime.secret.fingerprint

    def step(self, action: dict[str, Any]) -> tuple[dict[str, Any], float, bool]:
        obs = self.env.step(DebugAction(**action)).model_dump()
        return obs, float(obs.get("reward") or 0.0), bool(obs.get("done"))

    def tools(self) -> list[dict[str, Any]]:
        episode = self.env.episode
        if episode is None:
            raise RuntimeError("no episode is running; reset first")
        return function_definitions([t.model_dump() for t in tools_of(episode)])  # what a list_tools step answers

    def __enter__(self) -> InProcessDriver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.env.close()
