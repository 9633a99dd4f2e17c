"""verifiers (v1 API, 0.4.0): an Env whose rollouts step AgentDebuggerEnv, scored by the episode's own rewards.

    python examples/trainers/verifiers_env.py [http://localhost:8000]

This file is also the taskset plugin (`--env.taskset.id verifiers_env` with this folder on PYTHONPATH). The model is a
scripted OpenAI-compatible endpoint on 127.0.0.1 (nothing downloaded); point `ClientConfig.base_url` at a real one.
"""

import asyncio
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import verifiers.v1 as vf  # noqa: E402

from env.client import DebugAction, DebugEnvClient  # noqa: E402

URL = sys.argv[1] if len(sys.argv) > 1 else "http://localhost:8000"
__all__ = ["DebugTaskset", "DebugVfEnv"]


class DebugData(vf.TaskData):
    base_url: str
    reset: dict


class DebugTask(vf.Task[DebugData]):
    pass


class DebugTasksetConfig(vf.TasksetConfig):
    base_url: str = URL
    resets: list[dict] = [{"task_id": "easy", "seed": 1}]


class DebugTaskset(vf.Taskset[DebugTask, DebugTasksetConfig]):
    def load(self):
        for i, reset in enumerate(self.config.resets):
            yield DebugTask(DebugData(name=f"{reset['task_id']}#{i}", base_url=self.config.base_url, reset=reset), self.config.task)


class DebugEnvConfig(vf.EnvConfig):
    # a plain chat loop (harness "null") run as a local subprocess; the default is a remote Prime sandbox
    player: vf.AgentConfig = vf.AgentConfig(harness={"id": "null"}, runtime=vf.SubprocessConfig(), max_turns=8)


class DebugVfEnv(vf.Env[DebugEnvConfig]):
    """Each assistant reply is one JSON action (an /tasks tool call as {"action_type": ..., fields}); each observation
    comes back as the next user turn; the trace's reward is the sum of the step rewards, its metric the grade."""

    async def run(self, task, agents):
        total, result = 0.0, None
        async with DebugEnvClient(base_url=task.data.base_url) as client:
            result = await client.reset(**task.data.reset)
            async with agents.player.interaction(task) as interaction:
                segment = await interaction.turn(result.observation.model_dump_json(include={"task_description", "buggy_code", "test_suite"}))
                while not segment.terminated and not result.done:
                    result = await client.step(DebugAction(**json.loads(segment.last_reply)))
                    total += result.reward
                    if not result.done:
                        segment = await interaction.turn(result.observation.model_dump_json(include={"query_result", "error", "tests_passed", "tests_total"}))
        interaction.trace.record_reward("episode_return", total)
        interaction.trace.record_metric("grade", result.observation.grader_score or 0.0)
        interaction.trace.record_metric("done", float(result.done))


FIX = "def binary_search(arr, target):\n    left, right = 0, len(arr) - 1\n    while left <= right:\n        mid = (left + right) // 2\n        if arr[mid] == target:\n            return mid\n        if arr[mid] < target:\n            left = mid + 1\n        else:\n            right = mid - 1\n    return -1\n"
SCRIPT = [{"action_type": "query_context", "query_type": "test_details", "query_target": "test_finds_last_element"},
          {"action_type": "submit_fix", "fixed_code": FIX, "hypothesis": "off-by-one: binary_search loops while left < right; it must be left <= right"}]


class ScriptedModel(BaseHTTPRequestHandler):
    """A stand-in for an OpenAI-compatible server: answers the n-th user turn with SCRIPT[n], streamed as the chat loop asks."""

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        turn = sum(m["role"] == "user" for m in body["messages"]) - 1
        action = json.dumps(SCRIPT[min(turn, len(SCRIPT) - 1)])
        chunk = {"id": f"s{turn}", "object": "chat.completion.chunk", "created": 0, "model": body["model"]}
        events = [{**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": action}, "finish_reason": None}]},
                  {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}]
        data = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"
        self.send_response(200), self.send_header("content-type", "text/event-stream"), self.send_header("content-length", str(len(data))), self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


async def main():
    fake = ThreadingHTTPServer(("127.0.0.1", 0), ScriptedModel)
    threading.Thread(target=fake.serve_forever, daemon=True).start()
    env = DebugVfEnv(DebugEnvConfig(taskset=DebugTasksetConfig(id="verifiers_env", base_url=URL)))
    ctx = vf.ModelContext(model="scripted", client=vf.EvalClientConfig(base_url=f"http://127.0.0.1:{fake.server_port}/v1", api_key_var="NO_KEY"))
    async with env.serving():
        episodes = await asyncio.gather(*(env.run_slot(slot, ctx) for task in env.taskset for slot in env.slots(task, 2)))
    traces = [t for ep in episodes for t in ep.traces]
    print(f"{len(traces)} rollouts: returns {[round(t.reward, 4) for t in traces]}, grades {[t.metrics['grade'] for t in traces]},",
          f"episodes done {[bool(t.metrics['done']) for t in traces]}, ok {[t.ok for t in traces]}")


if __name__ == "__main__":
    asyncio.run(main())
