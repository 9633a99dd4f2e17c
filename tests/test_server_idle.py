"""Issue 33 item 3: idle sessions end with a reason the client can read; a full server says when to retry; a session
in use is never cut. Limits are tiny here (the defaults are 600 s, and 60 s before the first reset)."""

import asyncio
import json
import time

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from env.config import Settings
from env.server.app import build_app
from env.server.guard import RequestGuard
from env.server.idle import IDLE_CLOSE_CODE, IdleSessions

RESET = json.dumps({"type": "reset", "data": {"task_id": "easy", "seed": 1}})
QUERY = json.dumps({"type": "step", "data": {"action_type": "query_context", "query_type": "function_signature", "query_target": "binary_search"}})


def idle_closes(client: TestClient) -> dict[str, float]:
    lines = [line for line in client.get("/metrics").text.splitlines() if line.startswith("adbg_idle_closes_total{")]
    return {line.split('"')[1]: float(line.split()[-1]) for line in lines}


def closed_with(ws) -> tuple[dict, int, str]:
    """The error frame an idle connection gets, then its close code and reason."""
    frame = json.loads(ws.receive_text())
    with pytest.raises(WebSocketDisconnect) as closed:
        ws.receive_text()
    return frame, closed.value.code, closed.value.reason


def test_a_silent_connection_and_an_idle_session_are_closed_with_a_reason(runtime):
    app = build_app(runtime=runtime, settings=Settings(session_timeout_s=0.4, first_reset_timeout_s=0.2))
    with TestClient(app) as client:
        with client.websocket_connect("/ws") as ws:  # never sends a message
            frame, code, reason = closed_with(ws)
        assert frame == {"type": "error", "data": {
            "code": "IDLE_TIMEOUT", "idle_seconds": 0.2,
            "message": "this connection was closed after 0.2 s without a reset (ENV_FIRST_RESET_TIMEOUT_S); connect again and send a reset first",
        }}
        assert (code, reason) == (IDLE_CLOSE_CODE, "idle 0.2 s (ENV_FIRST_RESET_TIMEOUT_S): session closed; reconnect and reset")
        with client.websocket_connect("/ws") as ws:
            ws.send_text(RESET)
            assert json.loads(ws.receive_text())["type"] == "observation"
            frame, code, _ = closed_with(ws)
        assert frame["data"]["message"] == (
            "this session was closed after 0.4 s without a message (ENV_SESSION_TIMEOUT_S); its episode is over. Connect again and "
            "send a reset to start a new one (a client that sends a message within the limit after each answer is never closed)"
        )
        assert code == IDLE_CLOSE_CODE
        assert idle_closes(client) == {"ws": 2.0, "http": 0.0}


def test_a_session_used_within_the_limit_lives_past_it(runtime):
    """Steps 0.2 s apart for 1.2 s, twice the 0.6 s limit: never cut (as a trainer stepping once a minute). The
    margin (0.4 s a step) absorbs a loaded machine's delays between an answer and the next message."""
    with TestClient(build_app(runtime=runtime, settings=Settings(session_timeout_s=0.6, first_reset_timeout_s=0.6))) as client:
        with client.websocket_connect("/ws") as ws:
            ws.send_text(RESET)
            ws.receive_text()
            for _ in range(6):
                time.sleep(0.2)
                ws.send_text(QUERY)
                assert json.loads(ws.receive_text())["type"] == "observation"
            ws.send_text(json.dumps({"type": "state"}))
            assert json.loads(ws.receive_text())["data"]["step_count"] == 6
        assert idle_closes(client)["ws"] == 0.0


def test_idle_connections_do_not_lock_everyone_out(runtime):
    """Issue 33: connections that never send a message took every slot ('Server at capacity: 256/256') for good."""
    with TestClient(build_app(runtime=runtime, settings=Settings(max_sessions=2, first_reset_timeout_s=0.5))) as client:
        with client.websocket_connect("/ws"), client.websocket_connect("/ws"):
            with client.websocket_connect("/ws") as third:
                refused = json.loads(third.receive_text())["data"]
            assert (refused["code"], refused["retry_after_s"]) == ("CAPACITY_REACHED", 1)
            assert refused["message"] == (
                "Server at capacity: 2/2 sessions active. Cannot accept new connections. Retry in 1 s: a session idle that long "
                "is closed by then unless it is used (ENV_SESSION_TIMEOUT_S=600, ENV_FIRST_RESET_TIMEOUT_S=0.5 before a /ws "
                "connection's first reset). Each WebSocket connection (/ws, /mcp) and each MCP session made over POST /mcp holds "
                "one session until it closes or idles out: close sessions you no longer use, or start the server with a higher "
                "ENV_MAX_SESSIONS (now 2)."
            )
            # both squatters are closed 0.5 s after they connected: a slot frees within a few seconds, however loaded
            deadline = time.monotonic() + 10
            while True:
                with client.websocket_connect("/ws") as ws:
                    ws.send_text(RESET)
                    answer = json.loads(ws.receive_text())
                if answer["type"] == "observation" or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            assert answer["type"] == "observation", answer


def test_an_idle_http_episode_is_closed_counted_and_named(runtime):
    with TestClient(build_app(runtime=runtime, settings=Settings(session_timeout_s=0.2))) as client:
        episode = client.post("/reset", json={"task_id": "easy"}).json()["observation"]["episode_id"]
        time.sleep(0.3)
        assert idle_closes(client) == {"ws": 0.0, "http": 1.0}
        r = client.get("/state")  # by the cookie
        assert (r.status_code, r.json()["detail"]) == (404, (
            f"the episode your adbg_episode cookie names ('{episode}') was closed after 0.2 s without a request "
            "(ENV_SESSION_TIMEOUT_S); call POST /reset to start a new episode"
        ))


def test_settings_have_the_documented_defaults():
    settings = Settings()
    assert (settings.session_timeout_s, settings.first_reset_timeout_s, settings.single_user) == (600.0, 60.0, False)


def test_the_client_says_why_its_session_ended_and_resets_on_a_new_one(runtime):
    from env.client import IDLE_CLOSE_CODE as CLIENT_CODE
    from env.client import DebugAction, DebugEnvClient, ServerError
    from tests.conftest import LiveServer

    assert CLIENT_CODE == IDLE_CLOSE_CODE
    with LiveServer(build_app(runtime=runtime, settings=Settings(session_timeout_s=0.3))) as server, DebugEnvClient(server.url) as client:
        client.reset(task_id="easy", seed=1)
        time.sleep(1.2)  # four times the limit: the server's close has gone out, even on a loaded machine
        with pytest.raises(ServerError) as ended:
            client.step(DebugAction(action_type="give_up"))
        assert str(ended.value) == (
            "Server error: the server closed this session: idle 0.3 s (ENV_SESSION_TIMEOUT_S): session closed; reconnect and reset; "
            "its episode is over, send a reset (code: IDLE_TIMEOUT)"
        )
        assert client.reset(task_id="easy", seed=1).observation.tests_passed == 6
        assert client.step(DebugAction(action_type="give_up")).done is True


def test_a_step_longer_than_the_limit_is_not_idleness():
    """The clock runs only while the server waits for the client: an app that takes 0.6 s to answer (twice the
    limit) answers, and the connection goes on until the client has been silent for the limit."""

    async def slow_app(scope, receive, send):  # accepts, answers each message after 0.6 s
        assert (await receive())["type"] == "websocket.connect"
        await send({"type": "websocket.accept"})
        while (message := await receive())["type"] == "websocket.receive":
            await asyncio.sleep(0.6)
            await send({"type": "websocket.send", "text": "answer to " + message["text"]})

    guarded = RequestGuard(slow_app, max_body_bytes=1024, idle=IdleSessions(idle_s=0.3, first_reset_s=0.3))
    with TestClient(guarded).websocket_connect("/ws") as ws:  # not entered: the stub has no lifespan
        ws.send_text(RESET)
        assert ws.receive_text() == "answer to " + RESET
        ws.send_text(QUERY)
        assert ws.receive_text() == "answer to " + QUERY
        frame, code, _ = closed_with(ws)  # then silence: closed
    assert (frame["data"]["code"], code) == ("IDLE_TIMEOUT", IDLE_CLOSE_CODE)
