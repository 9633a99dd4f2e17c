"""A tool call (OpenEnv's MCP) against the same action on the existing wire: the latency each adds, same run.

    python bench/bench_mcp.py [--runs 60] [--url http://localhost:8000]

One step each, interleaved so both see the same load: ``query_context`` on the easy task as
``{"action_type": "query_context", ...}`` and as ``{"type": "call_tool", "tool_name": "query_context", ...}``,
over HTTP ``POST /step``, over ``/ws``, and as JSON-RPC ``tools/call`` on ``POST /mcp`` (an MCP session).
Episodes are reset every few calls (untimed). Without ``--url`` a server is started in this process.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402
from openenv.core.generic_client import GenericEnvClient  # noqa: E402

ARGS = {"query_type": "function_signature", "query_target": "binary_search"}
ACTION = {"action_type": "query_context", **ARGS}
CALL = {"type": "call_tool", "tool_name": "query_context", "arguments": ARGS}
PER_EPISODE = 4  # calls before the episode is reset (untimed): well inside the task's step budget


@contextmanager
def local_server() -> Iterator[str]:
    import socket

    import uvicorn

    from env.server.app import build_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(build_app(), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def figures(name: str, times: list[float]) -> str:
    ordered = sorted(times)
    return f"{name:<40} p50 {statistics.median(ordered):7.2f} ms   p90 {ordered[max(0, int(len(ordered) * 0.9) - 1)]:7.2f} ms"


def timed(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def checked(obs: dict[str, Any]) -> dict[str, Any]:
    error = obs.get("error")
    assert not error, error  # a failed step would time something else
    return obs


def bench(url: str, runs: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {k: [] for k in ("http action", "http call_tool", "ws action", "ws call_tool", "mcp tools/call")}
    with httpx.Client(base_url=url, timeout=60) as http, GenericEnvClient(base_url=url).sync() as ws_a, GenericEnvClient(base_url=url).sync() as ws_b:
        def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
            reply = http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).json()
            assert "error" not in reply, reply
            return reply["result"]

        def http_step(episode: str, action: dict[str, Any]) -> None:
            checked(http.post("/step", json={"action": action, "episode_id": episode}).json()["observation"])

        for i in range(runs):
            if i % PER_EPISODE == 0:
                one = http.post("/reset", json={"task_id": "easy", "seed": 1}).json()["observation"]["episode_id"]
                two = http.post("/reset", json={"task_id": "easy", "seed": 1}).json()["observation"]["episode_id"]
                ws_a.reset(task_id="easy", seed=1)
                ws_b.reset(task_id="easy", seed=1)
                session = rpc("openenv/session/create", {"task_id": "easy", "seed": 1})["session_id"]
            pairs = [
                ("http action", lambda one=one: http_step(one, ACTION)),
                ("http call_tool", lambda two=two: http_step(two, CALL)),
                ("ws action", lambda: checked(dict(ws_a.step(ACTION).observation))),
                ("ws call_tool", lambda: checked(dict(ws_b.step(CALL).observation))),
                ("mcp tools/call", lambda session=session: checked(rpc("tools/call", {"session_id": session, "name": "query_context", "arguments": ARGS}))),
            ]
            for name, fn in pairs if i % 2 == 0 else reversed(pairs):  # alternate the order: neither always goes first
                times[name].append(timed(fn))
            if i % PER_EPISODE == PER_EPISODE - 1:
                rpc("openenv/session/close", {"session_id": session})
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--url", default="")
    args = parser.parse_args()
    if args.url:
        bench(args.url, 4)  # warm-up
        times = bench(args.url, args.runs)
    else:
        with local_server() as url:
            bench(url, 4)
            times = bench(url, args.runs)
    for name, values in times.items():
        print(figures(name, values))
    for wire in ("http", "ws"):
        added = statistics.median(times[f"{wire} call_tool"]) - statistics.median(times[f"{wire} action"])
        print(f"{wire}: a tool call adds {added:+.2f} ms at the median over the same action")


if __name__ == "__main__":
    main()
