"""SkyRL (skyrl-gym 0.4.0): a BaseTextEnv whose init/step play one AgentDebuggerEnv episode over one WebSocket session.

    python examples/trainers/skyrl_env.py [http://localhost:8000]

The model's text carries one Qwen-style tool call, <tool_call>{"name": ..., "arguments": {...}}</tool_call>, naming a
tool that GET /tasks publishes for the task. Here a scripted list of outputs stands in for the model; SkyRL's generator
makes the env with `skyrl_gym.make("agentdebugger", env_config=..., extras=<the dataset row>)` and calls the same methods.
"""

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import skyrl_gym  # noqa: E402
from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput  # noqa: E402

from env.client import DebugAction, DebugEnvClient  # noqa: E402

TOOL_CALL = re.compile(r"<tool_call>\s*(\{.*\})\s*</tool_call>", re.DOTALL)


class DebugTextEnv(BaseTextEnv):
    def __init__(self, env_config, extras=None):
        extras = extras or {}
        super().__init__()
        self.reset_args = {"task_id": extras.get("task_id", "easy"), "seed": extras.get("seed", 0)}
        self.max_turns = extras.get("max_turns", 8)
        self.client = DebugEnvClient(base_url=env_config["base_url"]).sync()  # sync even inside the generator's loop

    def init(self, prompt):
        obs = self.client.reset(**self.reset_args).observation
        return prompt + [{"role": "user", "content": f"{obs.task_description}\n\n{obs.buggy_code}"}], {"episode_id": obs.episode_id}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        self.turns += 1
        match = TOOL_CALL.search(action)
        if match is None:  # nothing reaches the server; the model is told the format
            text, reward, done = "Reply with one <tool_call>{...}</tool_call>.", 0.0, self.turns >= self.max_turns
        else:
            call = json.loads(match.group(1))
            result = self.client.step(DebugAction(action_type=call["name"], **call.get("arguments", {})))
            obs, reward, done = result.observation, result.reward, result.done
            text = obs.error or obs.query_result or f"{obs.tests_passed}/{obs.tests_total} tests pass\n{obs.current_error_output}"
            self.grade = obs.grader_score
        if done or self.turns >= self.max_turns:
            self.close()
        return BaseTextEnvStepOutput(observations=[] if done else [{"role": "user", "content": text}], reward=reward, done=done,
                                     metadata={"grade": getattr(self, "grade", None)})

    def close(self):
        self.client.close()


skyrl_gym.register(id="agentdebugger", entry_point=DebugTextEnv)

FIX = "def binary_search(arr, target):\n    left, right = 0, len(arr) - 1\n    while left <= right:\n        mid = (left + right) // 2\n        if arr[mid] == target:\n            return mid\n        if arr[mid] < target:\n            left = mid + 1\n        else:\n            right = mid - 1\n    return -1\n"
MODEL_OUTPUTS = [
    '<tool_call>{"name": "query_context", "arguments": {"query_type": "test_details", "query_target": "test_finds_last_element"}}</tool_call>',
    "I think the loop bound is wrong.",
    '<tool_call>' + json.dumps({"name": "submit_fix", "arguments": {"fixed_code": FIX, "hypothesis": "off-by-one: binary_search loops while left < right; it must be left <= right"}}) + "</tool_call>",
]

if __name__ == "__main__":
    url = sys.argv[1] if len(sys.argv) > 1 else "http://localhost:8000"
    env = skyrl_gym.make("agentdebugger", env_config={"base_url": url}, extras={"task_id": "easy", "seed": 1, "max_turns": 5})
    chat, info = env.init([{"role": "system", "content": "Fix the bug with one tool call per turn."}])
    rewards = []
    for output in MODEL_OUTPUTS:
        out = env.step(output)
        chat += [{"role": "assistant", "content": output}] + out["observations"]
        rewards.append(out["reward"])
        if out["done"]:
            break
    print(f"episode {info['episode_id'][:8]}: {env.turns} turns, step rewards {rewards}, return {sum(rewards)},",
          f"done {out['done']}, grade {out['metadata']['grade']}")
