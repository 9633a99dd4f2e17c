"""inference.py end to end against a local fake OpenAI-compatible server with scripted (and malformed) replies."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.helpers import GOLD, GOOD_HYPOTHESIS

ROOT = Path(__file__).resolve().parents[1]


def tool_call(name: str, arguments: str) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [{"id": f"call_{name}", "type": "function", "function": {"name": name, "arguments": arguments}}]}


SCRIPT = [
    tool_call("submit_fix", "{not json"),  # easy: malformed arguments -> the exact error, then a retry
    tool_call("query", json.dumps({"query_type": "test_details", "query_target": "test_finds_last_element"})),  # an alias
    {"role": "assistant", "content": "Here is my fix:\n" + json.dumps({"action_type": "submit_fix", "fixed_code": GOLD["easy"], "hypothesis": GOOD_HYPOTHESIS["easy"]})},
    tool_call("give_up", "{}"),  # medium
    *[{"role": "assistant", "content": "I am not sure."}] * 4,  # hard: no action at all, four times -> the agent gives up
]


class FakeOpenAI(BaseHTTPRequestHandler):
    script: list[dict] = []
    requests: list[dict] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeOpenAI.requests.append(body)
        message = FakeOpenAI.script.pop(0)
        reply = {
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "tool_calls" if message.get("tool_calls") else "stop", "message": message}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


def test_inference_plays_easy_medium_hard_against_a_fake_model(live_server, tmp_path):
    FakeOpenAI.script, FakeOpenAI.requests = list(SCRIPT), []
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeOpenAI)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {
        "PATH": "/usr/bin:/bin",
        "API_BASE_URL": f"http://127.0.0.1:{server.server_address[1]}/v1",
        "MODEL_NAME": "fake-model",
        "HF_TOKEN": "test-token",
        "ENV_BASE_URL": live_server.url,
        "RESULTS_PATH": str(tmp_path / "results.json"),
    }
    try:
        done = subprocess.run([sys.executable, "inference.py"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    finally:
        server.shutdown()
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[0] == "[START] task=easy model=fake-model"
    assert lines[1] == "[STEP] task=easy step=1 action=query_context reward=0.0000 done=false"
    assert lines[2] == "[STEP] task=easy step=2 action=submit_fix reward=0.5375 done=true"
    assert lines[3] == "[END] task=easy score=0.9600 steps=2 tokens=330"
    assert lines[4:7] == ["[START] task=medium model=fake-model", "[STEP] task=medium step=1 action=give_up reward=0.0000 done=true", "[END] task=medium score=0.0000 steps=1 tokens=110"]
    assert lines[7] == "[START] task=hard model=fake-model" and lines[9] == "[END] task=hard score=0.0000 steps=1 tokens=440"
    assert "action=give_up" in lines[8]
    # The malformed reply was answered with the exact error, as the tool's result.
    retry = FakeOpenAI.requests[1]["messages"][-1]
    assert retry["role"] == "tool" and retry["content"].startswith("Your reply could not be used: the arguments are not valid JSON (Expecting property name enclosed in double quotes at position 1)")
    assert [t["function"]["name"] for t in FakeOpenAI.requests[0]["tools"]] == ["submit_fix", "query_context", "give_up"]
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["model"] == "fake-model"
    assert [(r["task_id"], r["score"]) for r in results["results"]] == [("easy", 0.96), ("medium", 0.0), ("hard", 0.0)]
    assert results["results"][0]["aliases"] == [["query", "query_context"]]


def test_llm_agent_relays_and_uses_the_servers_repository_tools():
    import random
    from types import SimpleNamespace

    from env.agents.llm import LLMAgent

    class FakeClient:
        def __init__(self) -> None:
            self.calls: list[dict] = []
            self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))

        def create(self, **kwargs):
            self.calls.append({**kwargs, "messages": list(kwargs["messages"])})  # as sent
            if "tools" not in kwargs:
                message = SimpleNamespace(content="I listed the root; next: read the code.", tool_calls=None)
            else:
                call = SimpleNamespace(id=f"c{len(self.calls)}", function=SimpleNamespace(name="ls", arguments="{}"))
                message = SimpleNamespace(content=None, tool_calls=[call])
            return SimpleNamespace(choices=[SimpleNamespace(message=message)], usage=SimpleNamespace(prompt_tokens=7, completion_tokens=3))

    client = FakeClient()
    tools = [{"type": "function", "function": {"name": n, "description": n, "parameters": {"type": "object"}}} for n in ("list_dir", "submit")]
    agent = LLMAgent(model="m", client=client, relay_turns=2, max_relays=1)
    agent.begin({"id": "repo-x", "family": "repo", "tools": tools}, {"task_description": "It breaks."}, random.Random(0))
    obs = {"tool_output": "src/", "step_number": 1, "max_steps": 30}
    assert agent.act(obs) == {"action_type": "list_dir"} and agent.usage() == {"prompt_tokens": 7, "completion_tokens": 3}
    assert agent.act(obs) == {"action_type": "list_dir"}
    assert agent.act(obs) == {"action_type": "list_dir"}  # third turn: a relay first
    summary_call, after = client.calls[2], client.calls[3]
    assert "tools" not in summary_call and summary_call["messages"][-1]["content"].startswith("Summarise what you have learned")
    assert len(after["messages"]) == 2 and after["messages"][1]["content"].endswith("Notes from your previous context:\nI listed the root; next: read the code.")
    assert agent.act(obs) == {"action_type": "list_dir"}
    assert agent.act(obs) == {"action_type": "submit"}  # the relay budget is spent: submit
    assert agent.aliases_used == [("ls", "list_dir")] * 4


def test_llm_agent_marks_relays_and_prefers_the_profiles_shell():
    import random
    from types import SimpleNamespace

    from env.agents.llm import LLMAgent

    def create(**kwargs):
        if "tools" not in kwargs:
            message = SimpleNamespace(content="Summary.", tool_calls=None)
        else:
            call = SimpleNamespace(id="c", function=SimpleNamespace(name="bash", arguments='{"command": "ls"}'))
            message = SimpleNamespace(content=None, tool_calls=[call])
        return SimpleNamespace(choices=[SimpleNamespace(message=message)], usage=None)

    client = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=create)))
    names = ("list_dir", "run_tests", "run_bash", "new_relay", "submit")
    tools = [{"type": "function", "function": {"name": n, "description": n, "parameters": {"type": "object"}}} for n in names]
    agent = LLMAgent(model="m", client=client, relay_turns=1, max_relays=1)
    agent.begin({"id": "repo-x", "family": "repo", "tools": tools}, {"task_description": "It breaks."}, random.Random(0))
    obs = {"tool_output": "", "step_number": 1, "max_steps": 30}
    assert agent.act(obs) == {"action_type": "run_bash", "command": "ls"}  # "bash" is the shell here, not run_tests
    assert agent.act(obs) == {"action_type": "new_relay"}  # a fresh context: the server's edit gate locks again
    assert agent.act(obs) == {"action_type": "run_bash", "command": "ls"}
    assert agent.aliases_used == [("bash", "run_bash")] * 2
