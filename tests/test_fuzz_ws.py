"""No /ws or /mcp message gets a server error (issue 33): every field of every message type, set to each nasty value
(NaN, ±Infinity, huge numbers, wrong container types, unknown fields, huge strings, invalid UTF-8, lone surrogates,
deep nesting), gets one in-band answer and the session goes on. A server error here is an EXECUTION_ERROR or
SESSION_ERROR frame (an exception escaped the environment or the library's handler), a closed socket, or no answer."""

from __future__ import annotations

import json
from typing import Any

from fastapi.testclient import TestClient

from env.config import Settings
from env.models import DebugAction
from env.server.app import build_app
from tests.test_fuzz_openapi import NASTY, RAW

RESET_FIELDS = ["task_id", "seed", "episode_id", "index", "split", "profile", "edit_gate", "aliases", "unknown_field"]
STEP_FIELDS = [*sorted(DebugAction.model_fields), "unknown_field"]
EXPECTED_ERRORS = {"INVALID_JSON", "VALIDATION_ERROR", "UNKNOWN_TYPE"}
RESET = {"type": "reset", "data": {"task_id": "easy", "seed": 1}}


def _messages() -> list[dict[str, Any]]:
    """Each message type with one field set to the placeholder, for each field."""
    query = {"action_type": "query_context", "query_type": "function_signature", "query_target": "binary_search"}
    found: list[dict[str, Any]] = [{"type": "reset", "data": {**RESET["data"], field: "__NASTY__"}} for field in RESET_FIELDS]
    found += [{"type": "step", "data": {**query, field: "__NASTY__"}} for field in STEP_FIELDS]
    found += [{"type": kind, "data": "__NASTY__"} for kind in ("reset", "step", "state", "mcp")]
    found += [{"type": "__NASTY__"}, {"type": "state", "unknown_field": "__NASTY__"}]
    found += [{"type": "mcp", "data": {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}, field: "__NASTY__"}} for field in ("id", "method", "params")]
    return found


MESSAGES = _messages()


def _answer(ws: Any, sent: object, counts: dict[str, int]) -> dict[str, Any]:
    reply = json.loads(ws.receive_text())
    assert reply["type"] in ("observation", "state", "error", "mcp"), (sent, reply)
    if reply["type"] == "error":
        assert reply["data"]["code"] in EXPECTED_ERRORS, (str(sent)[:200], reply["data"]["code"], str(reply["data"].get("message"))[:300])
        counts["error_frames"] += 1
    elif reply["type"] == "observation" and reply["data"]["observation"].get("error"):
        counts["in_band_observation_errors"] += 1
    counts["answered"] += 1
    return reply


def test_every_field_of_every_ws_message_with_every_nasty_value(runtime):
    counts = {"messages": 0, "answered": 0, "error_frames": 0, "in_band_observation_errors": 0}
    with TestClient(build_app(runtime=runtime, settings=Settings())) as client, client.websocket_connect("/ws") as ws:
        playing = False
        for template in MESSAGES:
            text = json.dumps(template)
            frames: list[str | bytes] = [text.replace('"__NASTY__"', json.dumps(v)).encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass") for v in NASTY]
            frames += [text.encode().replace(b'"__NASTY__"', raw) for raw in RAW]
            for frame in frames:
                if template["type"] == "step" and not playing:
                    ws.send_text(json.dumps(RESET))
                    playing = not _answer(ws, RESET, counts)["data"]["done"]
                if isinstance(frame, bytes):
                    ws.send_bytes(frame)
                else:
                    ws.send_text(frame)
                counts["messages"] += 1
                reply = _answer(ws, frame, counts)
                if reply["type"] == "observation":
                    playing = not reply["data"]["done"]
        ws.send_text(json.dumps({"type": "state"}))  # the session is still there
        assert json.loads(ws.receive_text())["type"] == "state"
    print(f"ws fuzz: {counts}")
    assert counts["messages"] == len(MESSAGES) * (len(NASTY) + len(RAW))


def test_mcp_socket_messages_get_json_rpc_answers(runtime):
    with TestClient(build_app(runtime=runtime, settings=Settings())) as client, client.websocket_connect("/mcp") as ws:
        for frame in [b"\xff\xfe", b'{"jsonrpc": "2.0", "id": NaN, "method": "tools/list"}', b"[" * 100 + b"]" * 100, b'{"id": 1e400}']:
            ws.send_bytes(frame)
            reply = json.loads(ws.receive_text())
            assert reply["jsonrpc"] == "2.0" and reply["error"]["code"] == -32700, reply
        ws.send_text(json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}}))
        assert json.loads(ws.receive_text())["id"] == 7
