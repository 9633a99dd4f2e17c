"""inference.py end to end against a local fake OpenAI-compatible server with scripted (and malformed) replies, one
that fails every third request and one that hangs; the LLM agent's retries and the baseline lines in isolation."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace

import httpx
import openai
import pytest

import inference
from env.agents.llm import LLMAgent
from env.agents.retry import ModelUnavailable, RetryPolicy
from env.authoring.oracle import oracle_actions
from env.eval.baseline_log import action_summary, end_line, start_line, step_line
from tests.conftest import refusing_port
from tests.helpers import CATALOG, GOLD, GOOD_HYPOTHESIS

ROOT = Path(__file__).resolve().parents[1]


def tool_call(name: str, arguments: str) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [{"id": f"call_{name}", "type": "function", "function": {"name": name, "arguments": arguments}}]}


EASY = [
    tool_call("submit_fix", "{not json"),  # malformed arguments -> the exact error, then a retry
    tool_call("query", json.dumps({"query_type": "test_details", "query_target": "test_finds_last_element"})),  # an alias
    {"role": "assistant", "content": "Here is my fix:\n" + json.dumps({"action_type": "submit_fix", "fixed_code": GOLD["easy"], "hypothesis": GOOD_HYPOTHESIS["easy"]})},
]
GIVE_UP = [tool_call("give_up", "{}")]
UNSURE = [{"role": "assistant", "content": "I am not sure."}] * 4  # no action at all, four times -> the agent gives up
REPO_TASK = "repo-pagination-off-by-one"
REPO = [tool_call(str(a["action_type"]), json.dumps({k: v for k, v in a.items() if k != "action_type"})) for a in oracle_actions(CATALOG.get(REPO_TASK))]
SCRIPT = EASY + GIVE_UP + UNSURE + REPO  # easy, medium, hard, then the repository task's gold edit and submit
HANG = {"hang": True}  # the fake server reads the request and never answers

MODEL = "fake-model"
EASY_LINES = [
    f"[START] task=easy env=agentdebugger-env model={MODEL}",
    '[STEP] step=1 action=query_context(query_type:"test_details", query_target:"test_finds_last_element") reward=0.00 done=false error=null',
    f'[STEP] step=2 action=submit_fix(fixed_code:<{len(GOLD["easy"])} chars>, hypothesis:"The while loop condition left < right is off by one: the...") '
    "reward=0.55 done=true error=null",
    "[END] success=true steps=2 score=0.960 rewards=0.00,0.55",
]
MEDIUM_LINES = [
    f"[START] task=medium env=agentdebugger-env model={MODEL}",
    "[STEP] step=1 action=give_up reward=0.00 done=true error=null",
    "[END] success=false steps=1 score=0.000 rewards=0.00",
]
UNPARSED = ("the model's reply could not be parsed (4 replies; the last: no tool call and no JSON object with an \"action_type\"); "
            "expected one call of one of these tools: submit_fix, query_context, give_up, or a JSON object with an \"action_type\"")
HARD_LINES = [
    f"[START] task=hard env=agentdebugger-env model={MODEL}",
    f'[STEP] step=1 action=give_up(final_diagnosis:"the model\'s replies could not be parsed") reward=0.00 done=true error={UNPARSED}',
    "[END] success=false steps=1 score=0.000 rewards=0.00",
]
REPO_LINES = [  # the observation's info["resolved"] says success
    f"[START] task={REPO_TASK} env=agentdebugger-env model={MODEL}",
    f'[STEP] step=1 action=edit(path:"catalog/pagination.py", start_line:1, end_line:53, new_text:<{len(json.loads(REPO[0]["tool_calls"][0]["function"]["arguments"])["new_text"])} chars>) '
    "reward=0.00 done=false error=null",
    "[STEP] step=2 action=submit reward=0.80 done=true error=null",
    "[END] success=true steps=2 score=0.993 rewards=0.00,0.80",
]
UNKNOWN_LINES = [f"[START] task=no-such-task env=agentdebugger-env model={MODEL}", "[END] success=false steps=0 score=0.000 rewards="]
EXPECTED = EASY_LINES + MEDIUM_LINES + HARD_LINES + REPO_LINES + UNKNOWN_LINES

PROTOCOL = re.compile(
    r"\[START\] task=\S+ env=agentdebugger-env model=\S+"
    r"|\[STEP\] step=\d+ action=[^\n]+ reward=-?\d+\.\d{2} done=(true|false) error=[^\n]+"
    r"|\[END\] success=(true|false) steps=\d+ score=\d\.\d{3} rewards=(-?\d+\.\d{2}(,-?\d+\.\d{2})*)?"
)


class FakeModel:
    """An OpenAI-compatible chat endpoint on a free port. It answers each request with the script's next reply; with
    ``fail_every=n`` each n-th request instead fails (503 and 429 in turn) without using a reply; a ``HANG`` entry is
    read, handed to ``on_hang`` and never answered; a ``{"status": n, "error": {...}}`` entry is answered with that error."""

    def __init__(self, script: list[dict], fail_every: int = 0, on_hang: Callable[[], None] | None = None) -> None:
        self.script, self.fail_every, self.on_hang = list(script), fail_every, on_hang
        self.requests: list[dict] = []  # every request's body, failed ones included
        self.statuses: list[int] = []
        self.release = threading.Event()
        self.lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with model.lock:
                    model.requests.append(body)
                    number = len(model.requests)
                    failing = bool(model.fail_every) and number % model.fail_every == 0
                    message = None if failing else model.script.pop(0)
                if message is HANG:
                    if model.on_hang is not None:
                        model.on_hang()
                    model.release.wait(60)  # until the test ends: the client's timeout must fire first
                    return
                if message is not None and "status" in message:
                    self.reply(message["status"], {"error": message["error"]})
                    return
                if failing:
                    status = 503 if (number // model.fail_every) % 2 else 429
                    self.reply(status, {"error": {"message": "overloaded, try again", "type": "server_error"}}, {"Retry-After": "0"} if status == 429 else {})
                    return
                self.reply(200, {
                    "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
                    "choices": [{"index": 0, "finish_reason": "tool_calls" if message.get("tool_calls") else "stop", "message": message}],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
                })

            def reply(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                with model.lock:
                    model.statuses.append(status)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> FakeModel:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def run_inference(model: FakeModel, env_url: str, results: Path, *tasks: str, **settings: str) -> subprocess.CompletedProcess:
    env = {
        "PATH": "/usr/bin:/bin",
        "API_BASE_URL": model.url,
        "MODEL_NAME": MODEL,
        "HF_TOKEN": "test-token",
        "ENV_BASE_URL": env_url,
        "RESULTS_PATH": str(results),
        # tiny backoff keeps retries fast; the timeout is generous for answered requests on a loaded machine
        "LLM_TIMEOUT_S": "5", "LLM_MAX_ATTEMPTS": "3", "LLM_BACKOFF_BASE_S": "0.01", "LLM_BACKOFF_MAX_S": "0.05",
        **settings,
    }
    with model:
        return subprocess.run([sys.executable, "inference.py", *tasks], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def protocol_only(stdout: str) -> list[str]:
    lines = stdout.splitlines()
    assert lines and all(PROTOCOL.fullmatch(line) for line in lines), stdout
    return lines


def without_timing(results: dict) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "seconds"} for r in results["results"]]


def test_inference_plays_easy_medium_hard_and_reports_an_unknown_task(live_server, tmp_path):
    model = FakeModel(SCRIPT)
    done = run_inference(model, live_server.url, tmp_path / "results.json", REPO_TASK, "no-such-task")
    assert done.returncode == 0, done.stderr[-3000:]
    assert protocol_only(done.stdout) == EXPECTED
    assert f"results written to {tmp_path / 'results.json'}" in done.stderr
    # The malformed reply was answered with the exact error, as the tool's result.
    retry = model.requests[1]["messages"][-1]
    assert retry["role"] == "tool" and retry["content"].startswith("Your reply could not be used: the arguments are not valid JSON (Expecting property name enclosed in double quotes at position 1)")
    assert [t["function"]["name"] for t in model.requests[0]["tools"]] == ["submit_fix", "query_context", "give_up"]
    results = json.loads((tmp_path / "results.json").read_text())
    assert {k: results[k] for k in ("model", "env", "profile", "complete")} == {"model": MODEL, "env": "agentdebugger-env", "profile": "default", "complete": True}
    assert all(isinstance(r["seconds"], float) for r in results["results"])
    assert without_timing(results) == [
        {"task_id": "easy", "profile": "default", "success": True, "score": 0.96, "steps": 2, "rewards": [0.0, 0.55], "tokens": 330,
         "cumulative_reward": 0.55, "aliases": [["query", "query_context"]], "error": None, "infra_causes": []},
        {"task_id": "medium", "profile": "default", "success": False, "score": 0.0, "steps": 1, "rewards": [0.0], "tokens": 110,
         "cumulative_reward": 0.0, "aliases": [], "error": None, "infra_causes": []},
        {"task_id": "hard", "profile": "default", "success": False, "score": 0.0, "steps": 1, "rewards": [0.0], "tokens": 440,
         "cumulative_reward": 0.0, "aliases": [], "error": UNPARSED, "infra_causes": []},
        {"task_id": REPO_TASK, "profile": "default", "success": True, "score": 0.993333, "steps": 2, "rewards": [0.0, 0.8], "tokens": 220,
         "cumulative_reward": 0.8, "aliases": [], "error": None, "infra_causes": []},
        {"task_id": "no-such-task", "profile": "default", "success": False, "score": 0.0, "steps": 0, "rewards": [], "tokens": 0,
         "cumulative_reward": None, "aliases": [], "error": "unknown task 'no-such-task'", "infra_causes": []},
    ]
    assert not list(tmp_path.glob(".*.tmp"))  # every write was renamed into place


def test_inference_retries_every_third_request_and_gets_the_same_results(live_server, tmp_path):
    model = FakeModel(SCRIPT, fail_every=3)
    done = run_inference(model, live_server.url, tmp_path / "results.json", REPO_TASK, "no-such-task")
    assert done.returncode == 0, done.stderr[-3000:]
    assert protocol_only(done.stdout) == EXPECTED
    # 10 replies took 14 requests: the 3rd, 6th, 9th and 12th failed (503 and 429 in turn) and were sent again unchanged
    assert model.statuses == [200, 200, 503, 200, 200, 429, 200, 200, 503, 200, 200, 429, 200, 200]
    for failed in (2, 5, 8, 11):
        assert model.requests[failed] == model.requests[failed + 1]
    assert done.stderr.count("model request failed (HTTP 503: ") == 2 and done.stderr.count("model request failed (HTTP 429: ") == 2
    results = json.loads((tmp_path / "results.json").read_text())
    assert [(r["task_id"], r["success"], r["score"], r["rewards"], r["tokens"], r["error"]) for r in results["results"]] == [
        ("easy", True, 0.96, [0.0, 0.55], 330, None), ("medium", False, 0.0, [0.0], 110, None), ("hard", False, 0.0, [0.0], 440, UNPARSED),
        (REPO_TASK, True, 0.993333, [0.0, 0.8], 220, None), ("no-such-task", False, 0.0, [], 0, "unknown task 'no-such-task'"),
    ]


def test_a_hanging_model_fails_one_episode_and_the_run_goes_on(live_server, tmp_path):
    path = tmp_path / "results.json"
    seen: list[dict] = []
    # When medium's first request hangs, easy's result is already on disk.
    model = FakeModel(EASY + [HANG, HANG] + GIVE_UP, on_hang=lambda: seen.append(json.loads(path.read_text())))
    done = run_inference(model, live_server.url, path, LLM_TIMEOUT_S="1", LLM_MAX_ATTEMPTS="2")
    assert done.returncode == 0, done.stderr[-3000:]
    assert protocol_only(done.stdout) == EASY_LINES + [
        f"[START] task=medium env=agentdebugger-env model={MODEL}",
        "[END] success=false steps=0 score=0.000 rewards=",
        f"[START] task=hard env=agentdebugger-env model={MODEL}",
        "[STEP] step=1 action=give_up reward=0.00 done=true error=null",
        "[END] success=false steps=1 score=0.000 rewards=0.00",
    ]
    error = "the model endpoint failed 2 time(s); last: APITimeoutError: Request timed out."
    assert "model request failed (APITimeoutError: Request timed out.); retry 1/1" in done.stderr
    assert f"medium: episode failed after 0 step(s): {error}" in done.stderr
    assert len(seen) == 2 and seen[0] == seen[1]  # both attempts saw the file as easy's end left it
    assert seen[0]["complete"] is False and [(r["task_id"], r["success"], r["score"]) for r in seen[0]["results"]] == [("easy", True, 0.96)]
    results = json.loads(path.read_text())
    assert results["complete"] is True
    assert [(r["task_id"], r["success"], r["steps"], r["rewards"], r["error"]) for r in results["results"]] == [
        ("easy", True, 2, [0.0, 0.55], None), ("medium", False, 0, [], error), ("hard", False, 1, [0.0], None),
    ]


def test_invalid_retry_settings_stop_the_run_before_any_episode(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("LLM_MAX_ATTEMPTS", "0")
    monkeypatch.setenv("RESULTS_PATH", str(tmp_path / "r.json"))
    assert inference.main([]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "LLM_MAX_ATTEMPTS must be at least 1, not '0'" in err and not (tmp_path / "r.json").exists()


# -- permanent errors stop the run, naming the URL -------------------------------------------------


def refused(status: int, message: str, code: str) -> dict:
    return {"status": status, "error": {"message": message, "type": "invalid_request_error", "code": code}}


EASY_FAILED = [f"[START] task=easy env=agentdebugger-env model={MODEL}", "[END] success=false steps=0 score=0.000 rewards="]


@pytest.mark.parametrize(("reply", "said"), [
    (refused(401, "Invalid credentials", "invalid_api_key"), "refused the credentials (HTTP 401: Error code: 401 - Invalid credentials); check HF_TOKEN"),
    (refused(404, "The model does not exist", "model_not_found"),
     f"does not know the model '{MODEL}' (HTTP 404: Error code: 404 - The model does not exist); check MODEL_NAME and API_BASE_URL"),
], ids=["401", "404"])
def test_a_model_endpoint_that_refuses_the_request_stops_the_run_with_status_3(live_server, tmp_path, reply, said):
    model = FakeModel([reply])
    done = run_inference(model, live_server.url, tmp_path / "results.json")
    stop = f"the model endpoint {model.url} {said}"
    assert done.returncode == 3, done.stderr[-3000:]
    assert protocol_only(done.stdout) == EASY_FAILED  # medium and hard would fail the same way: they are not started
    assert done.stderr.splitlines()[-1] == f"inference.py: stopped: {stop}"
    assert len(model.requests) == 1  # not retried
    results = json.loads((tmp_path / "results.json").read_text())
    assert (results["complete"], results["stopped"], [r["task_id"] for r in results["results"]]) == (False, stop, ["easy"])


def test_a_model_endpoint_nobody_listens_on_stops_the_run_after_the_retries(live_server, tmp_path):
    with refusing_port() as port:
        url = f"http://127.0.0.1:{port}/v1"
        done = run_inference(FakeModel([]), live_server.url, tmp_path / "results.json", API_BASE_URL=url, LLM_MAX_ATTEMPTS="2")
    assert done.returncode == 3, done.stderr[-3000:]
    assert protocol_only(done.stdout) == EASY_FAILED
    assert "model request failed (APIConnectionError: Connection error.); retry 1/1" in done.stderr
    assert done.stderr.splitlines()[-1] == (f"inference.py: stopped: the model endpoint {url} is not reachable (the model endpoint failed 2 "
                                            "time(s); last: APIConnectionError: Connection error.); check API_BASE_URL")


def test_an_environment_server_nobody_listens_on_stops_the_run_before_any_episode(tmp_path):
    model = FakeModel([])
    with refusing_port() as port:
        url = f"http://127.0.0.1:{port}"
        done = run_inference(model, url, tmp_path / "results.json")
    stop = (f"the environment server at {url} is not reachable (ConnectError: [Errno 111] Connection refused, 3 attempts); "
            "start it (make serve) or set ENV_BASE_URL")
    assert done.returncode == 4, done.stderr[-3000:]
    assert done.stdout == "" and model.requests == []
    assert done.stderr.splitlines() == [
        f"the environment server at {url} did not answer (ConnectError: [Errno 111] Connection refused); retry 1/2 in 0.5s",
        f"the environment server at {url} did not answer (ConnectError: [Errno 111] Connection refused); retry 2/2 in 1.0s",
        f"results so far written to {tmp_path / 'results.json'}",
        f"inference.py: stopped: {stop}",
    ]
    results = json.loads((tmp_path / "results.json").read_text())
    assert (results["complete"], results["results"], results["stopped"]) == (False, [], stop)


def test_an_environment_server_gone_mid_run_stops_it_after_that_episode(capsys):
    with refusing_port() as port:
        url = f"http://127.0.0.1:{port}"
        settings = inference.Settings(api_base="http://model", model=MODEL, token="", env_url=url, results_path=Path("unused.json"), profile="default", retry=RetryPolicy())
        episode = inference.play("easy", settings, inference.WsDriver, lambda: pytest.fail("no episode, no agent"))
    assert episode.error == f"the environment server at {url} did not answer: ConnectError: [Errno 111] Connection refused"
    assert episode.stop is not None and episode.stop.status == 4
    assert str(episode.stop).startswith(f"the environment server at {url} is not reachable (ConnectError: [Errno 111] Connection refused, 3 attempts)")
    assert capsys.readouterr().out.splitlines() == EASY_FAILED


# -- one episode, in process -----------------------------------------------------------------------


class ClosingDriver:
    """A WsDriver whose connection closes at the second step."""

    def __init__(self, url: str) -> None:
        self.steps = 0

    def task(self, task_id: str) -> dict:
        return {"id": task_id, "family": "classic"}

    def reset(self, task_id: str, seed: int, **options: object) -> dict:
        return {"done": False, "task_description": "t"}

    def tools(self) -> list[dict]:
        return []  # this test's agent does not look at them

    def step(self, action: dict) -> tuple[dict, float, bool]:
        from websockets.exceptions import ConnectionClosedError
        from websockets.frames import Close

        self.steps += 1
        if self.steps == 2:
            raise ConnectionClosedError(Close(1011, "server restarting"), None)
        return {"done": False, "error": "no such test:\n  test_x"}, -0.05, False

    def __enter__(self) -> ClosingDriver:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def test_the_environment_closing_mid_episode_fails_only_that_episode(capsys):
    class Agent:
        aliases_used = [("ls", "list_dir")]

        def begin(self, task: dict, obs: dict, rng: random.Random) -> None:
            pass

        def act(self, obs: dict) -> dict:
            return {"action_type": "run_tests", "test": "test_x"}

        def usage(self) -> dict[str, int]:
            return {"prompt_tokens": 5, "completion_tokens": 1}

    settings = inference.Settings(api_base="http://model", model=MODEL, token="", env_url="http://env", results_path=Path("unused.json"), profile="default", retry=RetryPolicy())
    episode = inference.play("easy", settings, ClosingDriver, Agent)
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        f"[START] task=easy env=agentdebugger-env model={MODEL}",
        '[STEP] step=1 action=run_tests(test:"test_x") reward=-0.05 done=false error=no such test: test_x',
        "[END] success=false steps=1 score=0.000 rewards=-0.05",
    ]
    assert episode.error == "ConnectionClosedError: received 1011 (internal error) server restarting; no close frame sent"
    assert (episode.steps, episode.rewards, episode.tokens, episode.aliases) == (1, [-0.05], 12, [("ls", "list_dir")])
    assert "easy: episode failed after 1 step(s): ConnectionClosedError" in err


# -- the model endpoint's retries ------------------------------------------------------------------


def status_error(status: int, headers: dict[str, str] | None = None) -> openai.APIStatusError:
    response = httpx.Response(status, headers=headers or {}, request=httpx.Request("POST", "http://model/v1/chat/completions"))
    return openai.APIStatusError(f"Error code: {status}", response=response, body=None)


def failing(errors: list[Exception], result: str = "ok") -> tuple[Callable[[], str], list[int]]:
    calls: list[int] = []

    def request() -> str:
        calls.append(1)
        if errors:
            raise errors.pop(0)
        return result

    return request, calls


def policy(**kwargs: float) -> tuple[RetryPolicy, list[float]]:
    slept: list[float] = []
    return RetryPolicy(sleep=slept.append, jitter=0.0, **kwargs), slept


@pytest.mark.parametrize("error", [
    status_error(429), status_error(500), status_error(503), status_error(408),
    openai.APITimeoutError(request=httpx.Request("POST", "http://model")), openai.APIConnectionError(request=httpx.Request("POST", "http://model")),
    TimeoutError("slow"), ConnectionResetError("reset"),
])
def test_transient_errors_are_retried_with_exponential_backoff(error):
    retry, slept = policy(max_attempts=5, base_delay_s=0.5, max_delay_s=1.5)
    request, calls = failing([error] * 4)
    assert retry.call(request) == "ok" and len(calls) == 5
    assert slept == [0.5, 1.0, 1.5, 1.5]


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 422])
def test_other_errors_are_raised_at_once(status):
    retry, slept = policy()
    request, calls = failing([status_error(status)])
    with pytest.raises(openai.APIStatusError) as raised:
        retry.call(request)
    assert raised.value.status_code == status and len(calls) == 1 and slept == []


def test_spent_attempts_raise_model_unavailable_from_the_last_error():
    retry, slept = policy(max_attempts=3, base_delay_s=0.1, max_delay_s=10)
    last = status_error(502)
    request, calls = failing([status_error(503), status_error(429, {"retry-after": "2"}), last])
    with pytest.raises(ModelUnavailable, match=r"^the model endpoint failed 3 time\(s\); last: HTTP 502: Error code: 502$") as raised:
        retry.call(request)
    assert raised.value.__cause__ is last and len(calls) == 3
    assert slept == [0.1, 2.0]  # the server's Retry-After replaces the backoff


def test_retry_after_is_capped_and_jitter_only_shortens():
    assert RetryPolicy(max_delay_s=3).delay(1, status_error(429, {"retry-after": "600"})) == 3
    assert RetryPolicy(max_delay_s=3).delay(1, status_error(429, {"retry-after-ms": "250"})) == 0.25
    delays = [RetryPolicy(base_delay_s=1, rng=random.Random(seed)).delay(2) for seed in range(50)]
    assert all(1.5 <= d <= 2.0 for d in delays) and len(set(delays)) > 1


def test_retry_settings_come_from_the_environment(monkeypatch):
    for name, value in {"LLM_TIMEOUT_S": "0.5", "LLM_MAX_ATTEMPTS": "2", "LLM_BACKOFF_BASE_S": "0", "LLM_BACKOFF_MAX_S": "4"}.items():
        monkeypatch.setenv(name, value)
    assert RetryPolicy.from_env() == RetryPolicy(timeout_s=0.5, max_attempts=2, base_delay_s=0.0, max_delay_s=4.0)
    monkeypatch.setenv("LLM_TIMEOUT_S", "soon")
    with pytest.raises(ValueError, match="LLM_TIMEOUT_S must be a number, not 'soon'"):
        RetryPolicy.from_env()


def test_llm_agent_retries_a_failed_turn_and_keeps_its_conversation():
    sent: list[list[dict]] = []
    errors: list[Exception] = [status_error(503)]

    def create(**kwargs):
        sent.append(list(kwargs["messages"]))
        if errors:
            raise errors.pop(0)
        call = SimpleNamespace(id="c1", function=SimpleNamespace(name="give_up", arguments="{}"))
        message = SimpleNamespace(content=None, tool_calls=[call])
        return SimpleNamespace(choices=[SimpleNamespace(message=message)], usage=SimpleNamespace(prompt_tokens=7, completion_tokens=3))

    retry, slept = policy(base_delay_s=0.25)
    agent = LLMAgent(model="m", client=SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=create))), retry=retry)
    agent.begin({"id": "easy", "family": "classic"}, {"task_description": "t", "buggy_code": "x = 1"}, random.Random(0))
    assert agent.act({}) == {"action_type": "give_up"} and agent.usage() == {"prompt_tokens": 7, "completion_tokens": 3}
    assert len(sent) == 2 and sent[0] == sent[1] and slept == [0.25]


def test_llm_agent_gives_its_client_the_timeout_and_no_retries_of_its_own():
    agent = LLMAgent(base_url="http://127.0.0.1:9/v1", model="m", api_key="k", retry=RetryPolicy(timeout_s=2.5))
    assert agent.client.max_retries == 0 and agent.client.timeout == 2.5


# -- the baseline lines ----------------------------------------------------------------------------


def test_baseline_lines_stay_on_one_line():
    assert start_line("easy", "org/model x") == "[START] task=easy env=agentdebugger-env model=org/model_x"
    action = {"action_type": "replace_text", "path": "src/a.py", "old_text": "a\nb", "new_text": "c", "metadata": {"x": 1}}
    assert action_summary(action) == 'replace_text(path:"src/a.py", old_text:<3 chars>, new_text:<1 chars>)'
    long = {"action_type": "run_bash", "command": "echo " + "x" * 100 + "\n", "test_ids": ["t1", "t2"], "line": 3, "regex": True, "path": None}
    assert action_summary(long) == 'run_bash(command:<106 chars>, test_ids:["t1","t2"], line:3, regex:true, path:null)'
    assert action_summary({"action_type": "search", "pattern": "a  b\tc " + "y" * 80}) == f'search(pattern:"a b c {"y" * 51}...")'
    assert step_line(3, {"action_type": "give_up"}, -0.0001, True, "bad\naction\r\n  here") == (
        "[STEP] step=3 action=give_up reward=0.00 done=true error=bad action here"
    )
    assert step_line(1, {"action_type": "submit"}, 0.806, False, "") == "[STEP] step=1 action=submit reward=0.81 done=false error=null"
    assert end_line(False, 0, 0.0, []) == "[END] success=false steps=0 score=0.000 rewards="
    assert end_line(True, 3, 1.2, [0.1, -0.25, 0.5]) == "[END] success=true steps=3 score=1.000 rewards=0.10,-0.25,0.50"


# -- the LLM agent ---------------------------------------------------------------------------------


def test_llm_agent_relays_and_uses_the_servers_repository_tools():
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
