"""A typed client for AgentDebuggerEnv, on OpenEnv's ``EnvClient`` (WebSocket ``/ws``).

    from env.client import DebugEnvClient
    from env.models import DebugAction

    with DebugEnvClient(base_url="http://localhost:8000") as client:   # synchronous use
        result = client.reset(task_id="easy", seed=1)
        result = client.step(DebugAction(action_type="give_up", final_diagnosis="off-by-one"))
        result.observation.grader_score, result.reward, result.done

``async with DebugEnvClient(...) as client: await client.reset(...)`` works the same way.
Each client connection is its own episode on the server.
"""

from __future__ import annotations

from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient

from env.models import DebugAction, DebugObservation, DebugState


class DebugEnvClient(EnvClient[DebugAction, DebugObservation, DebugState]):
    def _step_payload(self, action: DebugAction) -> dict[str, Any]:
        return action.model_dump(exclude_none=True, exclude={"metadata"})

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[DebugObservation]:
        fields = dict(payload.get("observation", {}))
        fields.update(done=payload.get("done", False), reward=payload.get("reward"))
        return StepResult(observation=DebugObservation(**fields), reward=payload.get("reward"), done=payload.get("done", False))

    def _parse_state(self, payload: dict[str, Any]) -> DebugState:
        return DebugState(**payload)
