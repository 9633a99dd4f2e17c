"""Issue 47, finding 5: one client locked every WebSocket client out. 256 never-closed ``openenv/session/create`` calls
on POST /mcp filled the session cap; /ws resets then failed "256/256" for 1,200 s (OpenEnv's reaper closed such
sessions after twice ENV_SESSION_TIMEOUT_S, looking every quarter of it) while the refusal said "Retry in 600 s" (it
counted only waiting sockets, else one idle limit).

Now a client holds at most ENV_SESSIONS_PER_CLIENT sessions (sockets and MCP sessions alike) and as many unfinished
HTTP episodes, MCP sessions over POST /mcp close after ENV_SESSION_TIMEOUT_S idle like sockets, and a refusal's
retry time is when a slot really frees. The attackers and the victim are real clients on a real server, told apart
by their loopback source addresses (127.0.0.2, 127.0.0.3 ...: Linux routes all of 127/8 to the loopback).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
import uvicorn
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from env.config import Settings
from env.runtime import Runtime
from env.server.app import build_app
from env.server.clients import client_key
from env.server.episodes import ClientShareFull, EpisodeStore
from env.server.idle import IdleSessions
from env.server.main import server_config
from env.server.slots import SessionSlots
from tests.conftest import LiveServer, free_port
from tests.helpers import GOLD, GOOD_HYPOTHESIS, submit

ATTACKER, ACCOMPLICE, VICTIM = "127.0.0.2", "127.0.0.4", "127.0.0.3"
RESET = {"task_id": "easy", "seed": 5}
QUERY = {"action_type": "query_context", "query_type": "test_details", "query_target": "test_finds_last_element"}


def share_message(client: str, held: int, limit: int, retry: int, waiting: bool = True, idle: float = 600, first: float = 60) -> str:
    """The refusal of a client at its share; ``waiting``: one of its sessions waits for it (else each is answering a
    request, as while a burst of its creates is under way)."""
    limits = f"ENV_SESSION_TIMEOUT_S={idle:g}, ENV_FIRST_RESET_TIMEOUT_S={first:g} before a /ws connection's first reset"
    when = (
        f"Retry in {retry} s: one of this client's sessions idle that long is closed by then unless it is used ({limits})."
        if waiting
        else f"Retry in {retry} s at the earliest: none of this client's sessions is waiting for its client now (each is "
        f"answering a request), and one is closed {idle:g} s after its client goes quiet ({limits})."
    )
    return (
        f"this client ({client}) holds {held} sessions, the most one client may hold at once (ENV_SESSIONS_PER_CLIENT={limit}; "
        f"WebSocket connections on /ws and /mcp and MCP sessions made over POST /mcp count alike). {when} "
        "Close a session you no longer use (openenv/session/close, or close its WebSocket). Behind a balancer, clients "
        "are told apart only if the server trusts its X-Forwarded-For (ENV_TRUSTED_PROXIES)."
    )


def http_from(source: str, url: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=url, transport=httpx.AsyncHTTPTransport(local_address=source), timeout=60)


async def socket_from(source: str, url: str, path: str = "/ws") -> ClientConnection:
    return await connect(url.replace("http", "ws") + path, local_addr=(source, 0), proxy=None, max_size=None)


async def rpc(http: httpx.AsyncClient, method: str, params: dict[str, Any]) -> dict[str, Any]:
    reply = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    assert reply.status_code == 200, reply.text
    answer: dict[str, Any] = reply.json()
    return answer


async def ask(ws: ClientConnection, message: dict[str, Any]) -> dict[str, Any]:
    with contextlib.suppress(ConnectionClosed):  # a refused socket may be closed already: its frame is still to read
        await ws.send(json.dumps(message))
    answer: dict[str, Any] = json.loads(await ws.recv())
    return answer


async def victim_starts(url: str) -> tuple[ClientConnection, dict[str, Any]]:
    """The victim's /ws session with an episode started (its first answer: an observation, or a refusal)."""
    ws = await socket_from(VICTIM, url)
    return ws, await ask(ws, {"type": "reset", "data": RESET})


async def victim_finishes(ws: ClientConnection) -> tuple[float, bool]:
    """The victim's episode played to the end with the gold fix: (reward, done) of the submission."""
    queried = await ask(ws, {"type": "step", "data": QUERY})
    assert queried["type"] == "observation", queried
    final = (await ask(ws, {"type": "step", "data": submit(GOLD["easy"], GOOD_HYPOTHESIS["easy"])}))["data"]
    await ws.close()
    return final["reward"], final["done"]


async def refusal_of(ws: ClientConnection) -> tuple[dict[str, Any], int | None]:
    """A refused socket's first frame and its close code (a socket that got a slot answers its first message)."""
    frame = json.loads(await ws.recv())
    try:
        await ws.recv()
    except ConnectionClosed:
        pass
    return frame, ws.close_code


# -- the finding: one client fills the server over /mcp while a victim plays on /ws -----------------------------------


def test_one_client_cannot_fill_the_server_over_mcp_while_a_victim_plays_on_ws(runtime: Runtime):
    """Twelve creates at once from one address: three sessions, nine refusals naming the limit; the victim's open
    /ws episode plays to the end and its new sessions start. Before: the attacker took all seven free slots and the
    victim's new sessions were refused 'Server at capacity: 8/8'."""
    with LiveServer(build_app(runtime=runtime, settings=Settings(max_sessions=8, sessions_per_client=3))) as server:

        async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]], tuple[float, bool]]:
            held, started = await victim_starts(server.url)
            assert started["type"] == "observation", started
            async with http_from(ATTACKER, server.url) as attacker:
                answers = await asyncio.gather(
                    *(rpc(attacker, "openenv/session/create", {"task_id": "easy", "seed": i}) for i in range(12))
                )
                answers.append(await rpc(attacker, "openenv/session/create", RESET))  # once its three are made
            fresh = [await victim_starts(server.url) for _ in range(2)]  # with the one it holds: its own share of three
            for ws, _ in fresh:
                await ws.close()
            return answers, [first for _, first in fresh], await victim_finishes(held)

        answers, fresh, finished = asyncio.run(scenario())
    made = [a["result"] for a in answers if "result" in a]
    refused = [a["error"] for a in answers if "error" in a]
    assert (len(made), len(refused)) == (3, 10)
    assert all(m["observation"]["tests_passed"] == 6 for m in made)
    for error in refused:
        retry = error["data"]["retry_after_s"]
        assert retry in (599, 600)  # the attacker's first session closes 600 s after its create, unless used
        assert error["data"] == {"client": ATTACKER, "client_sessions": 3, "sessions_per_client": 3, "retry_after_s": retry}
        # while the burst's three creates are under way none of its sessions waits yet; after, all three do
        assert error["message"] in (share_message(ATTACKER, 3, 3, retry, waiting=False), share_message(ATTACKER, 3, 3, retry))
        assert error["code"] == -32000
    assert refused[-1]["message"] == share_message(ATTACKER, 3, 3, refused[-1]["data"]["retry_after_s"])
    assert [f["type"] for f in fresh] == ["observation"] * 2
    assert finished == (0.55, True)


async def attack_over(kind: str, url: str, tries: int, sockets: list[ClientConnection]) -> tuple[list[str], list[Any]]:
    """``tries`` sessions (or HTTP episodes) started at once from the attacker's address and kept open (its sockets
    in ``sockets``): how each was answered ('made' or 'refused'), and the refusals' frames (with close codes) or errors."""

    async def one(i: int, http: httpx.AsyncClient) -> tuple[str, Any]:
        if kind == "reset":
            obs = (await http.post("/reset", json={"task_id": "easy", "seed": i})).json()["observation"]
            return ("refused", obs["error"]) if obs["error"] else ("made", None)
        ws = await socket_from(ATTACKER, url, "/ws" if kind == "ws" else "/mcp")
        sockets.append(ws)
        if kind == "ws":
            first = await ask(ws, {"type": "reset", "data": {"task_id": "easy", "seed": i}})
        else:
            first = await ask(ws, {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create", "params": {"task_id": "easy", "seed": i}})
        if first.get("type") == "observation" or "result" in first:
            return "made", None
        with contextlib.suppress(ConnectionClosed):
            await ws.recv()
        return "refused", (first, ws.close_code)

    async with http_from(ATTACKER, url) as http:
        answers = await asyncio.gather(*(one(i, http) for i in range(tries)))
    return [a for a, _ in answers], [r for a, r in answers if a == "refused"]


@pytest.mark.parametrize("kind", ["ws", "mcp_socket", "reset"])
def test_one_client_cannot_fill_the_server_over_any_transport(runtime: Runtime, kind: str):
    """The same attack over /ws, over WS /mcp, and over HTTP /reset (unfinished episodes, on a store of 6): three made,
    the rest refused with the limit named, while the attacker holds its own open; the victim's open episode plays to
    the end and its new one starts (over /reset for the last)."""
    settings = Settings(max_sessions=6, http_episodes=6, sessions_per_client=3)
    with LiveServer(build_app(runtime=runtime, settings=settings)) as server:

        async def scenario() -> tuple[list[str], list[Any], tuple[float, bool], str | None]:
            held, started = await victim_starts(server.url)
            assert started["type"] == "observation", started
            sockets: list[ClientConnection] = []
            outcomes, refusals = await attack_over(kind, server.url, 8, sockets)
            if kind == "reset":
                async with http_from(VICTIM, server.url) as http:
                    fresh = (await http.post("/reset", json=RESET)).json()["observation"]["error"]
            else:
                ws, first = await victim_starts(server.url)
                fresh = None if first["type"] == "observation" else json.dumps(first)
                await ws.close()
            mine = await victim_finishes(held)
            for ws in sockets:
                await ws.close()
            return outcomes, refusals, mine, fresh

        outcomes, refusals, mine, fresh = asyncio.run(scenario())
    assert sorted(outcomes) == ["made"] * 3 + ["refused"] * 5
    assert (mine, fresh) == ((0.55, True), None)
    if kind == "reset":
        retry = int(refusals[0].split("retry in ")[1].split(" s")[0])
        assert retry in (599, 600)
        assert set(refusals) == {
            f"this client ({ATTACKER}) has 3 unfinished HTTP episodes open, the most one client may (ENV_SESSIONS_PER_CLIENT=3); "
            f"finish one (give_up ends it), or retry in {retry} s, when its longest idle one closes unless it is used (an "
            "episode closes after 600 s without a request). Behind a balancer, clients are told apart only if the server "
            "trusts its X-Forwarded-For (ENV_TRUSTED_PROXIES)"
        }
        return
    for frame, code in refusals:
        assert code == 1013  # Try Again Later
        error = frame["data"] if kind == "ws" else frame["error"]
        data = error if kind == "ws" else error["data"]
        assert (data["client"], data["client_sessions"], data["sessions_per_client"]) == (ATTACKER, 3, 3)
        retry = data["retry_after_s"]
        assert error["message"] in (share_message(ATTACKER, 3, 3, retry), share_message(ATTACKER, 3, 3, retry, waiting=False))
        # a socket's share is closed 600 s after its last message (60 s before a /ws's first reset), unless used
        assert data["retry_after_s"] in ((599, 600) if kind == "mcp_socket" else (599, 600, 59, 60))
        if kind == "ws":
            assert (frame["type"], data["code"]) == ("error", "CAPACITY_REACHED")


def test_a_client_s_sessions_count_alike_over_every_transport_and_http_episodes_apart(runtime: Runtime):
    """Mixed: one /ws, one WS /mcp and one MCP session over POST /mcp fill a share of three; a fourth of any kind is
    refused. HTTP episodes are counted apart (three more); a finished one no longer counts; a closed session frees
    its place in the share."""
    settings = Settings(max_sessions=8, http_episodes=8, sessions_per_client=3)
    with LiveServer(build_app(runtime=runtime, settings=settings)) as server:

        async def scenario() -> dict[str, Any]:
            seen: dict[str, Any] = {}
            async with http_from(ATTACKER, server.url) as http:
                ws = await socket_from(ATTACKER, server.url, "/ws")
                assert (await ask(ws, {"type": "reset", "data": RESET}))["type"] == "observation"
                mcp = await socket_from(ATTACKER, server.url, "/mcp")
                assert "result" in await ask(mcp, {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create", "params": RESET})
                session = (await rpc(http, "openenv/session/create", RESET))["result"]["session_id"]
                seen["create"] = (await rpc(http, "openenv/session/create", RESET))["error"]["data"]
                seen["ws"], _ = await refusal_of(await socket_from(ATTACKER, server.url, "/ws"))
                seen["mcp_ws"], _ = await refusal_of(await socket_from(ATTACKER, server.url, "/mcp"))
                resets = [(await http.post("/reset", json=RESET)).json()["observation"] for _ in range(4)]
                seen["resets"] = [o["error"] is None for o in resets]
                await http.post("/step", json={"action": {"action_type": "give_up"}, "episode_id": resets[0]["episode_id"]})
                seen["after_give_up"] = (await http.post("/reset", json=RESET)).json()["observation"]["error"]
                closed = await rpc(http, "openenv/session/close", {"session_id": session})
                seen["closed"] = closed["result"]["closed"]
                seen["after_close"] = "result" in await rpc(http, "openenv/session/create", RESET)
                victim_ws, first = await victim_starts(server.url)
                seen["victim"] = first["type"]
                for s in (ws, mcp, victim_ws):
                    await s.close()
            return seen

        seen = asyncio.run(scenario())
    assert seen["create"]["client_sessions"] == 3 and seen["create"]["client"] == ATTACKER
    assert seen["ws"]["data"]["client_sessions"] == 3 and seen["mcp_ws"]["error"]["data"]["client_sessions"] == 3
    assert seen["resets"] == [True, True, True, False]
    assert seen["after_give_up"] is None  # the finished episode left the share
    assert (seen["closed"], seen["after_close"], seen["victim"]) == (True, True, "observation")


# -- the retry time a refusal names is when a slot really frees --------------------------------------------------------


def test_a_full_server_names_the_true_retry_time_and_idle_mcp_sessions_free_their_slots_then(runtime: Runtime):
    """Two clients fill a server of four with MCP sessions over POST /mcp and leave them idle. The victim's /ws is
    refused with 'Retry in N s'; N s later its session starts: the MCP sessions closed after ENV_SESSION_TIMEOUT_S
    (2 s), not twice that (OpenEnv's reaper, which also looks only every 5 s: before, the victim was still refused)."""
    settings = Settings(max_sessions=4, sessions_per_client=2, session_timeout_s=2)
    with LiveServer(build_app(runtime=runtime, settings=settings)) as server:

        async def scenario() -> tuple[dict[str, Any], str, str, list[str]]:
            sessions = []
            for source in (ATTACKER, ACCOMPLICE):
                async with http_from(source, server.url) as http:
                    for seed in (1, 2):
                        sessions.append(
                            (source, (await rpc(http, "openenv/session/create", {"task_id": "easy", "seed": seed}))["result"]["session_id"])
                        )
            refused_ws, first = await victim_starts(server.url)
            await refused_ws.close()
            await asyncio.sleep(first["data"]["retry_after_s"] + 0.1)
            later, started = await victim_starts(server.url)
            await later.close()
            await asyncio.sleep(0.6)  # every MCP session made above has been idle 2 s by now
            told = []
            for source, session in sessions:
                async with http_from(source, server.url) as http:
                    told.append((await rpc(http, "tools/list", {"session_id": session}))["error"]["message"])
            async with httpx.AsyncClient(base_url=server.url) as http:
                metrics = (await http.get("/metrics")).text
            return first["data"], started["type"], metrics, [f"{s}|{m}" for (s, _), m in zip(sessions, told, strict=True)]

        refused, started, metrics, told = asyncio.run(scenario())
    retry = refused["retry_after_s"]
    assert retry in (1, 2) and refused["code"] == "CAPACITY_REACHED"
    assert refused["message"] == (
        f"Server at capacity: 4/4 sessions active. Cannot accept new connections. Retry in {retry} s: a session idle that "
        "long is closed by then unless it is used (ENV_SESSION_TIMEOUT_S=2, ENV_FIRST_RESET_TIMEOUT_S=60 before a /ws "
        "connection's first reset). Each WebSocket connection (/ws, /mcp) and each MCP session made over POST /mcp holds "
        "one session until it closes or idles out: close sessions you no longer use, or start the server with a higher "
        "ENV_MAX_SESSIONS (now 4)."
    )
    assert started == "observation"
    for line in told:
        session = line.split("|")[1].split("'")[1]
        assert line.split("|")[1] == (
            f"MCP session '{session}' was closed after 2 s without a request (ENV_SESSION_TIMEOUT_S); openenv/session/create starts a new one"
        )
    assert 'adbg_idle_closes_total{transport="http"} 4.0' in metrics


def test_a_session_in_use_is_never_idle_and_a_joined_ws_shares_its_clock(runtime: Runtime):
    """An MCP session asked every 0.3 s outlives a 0.8 s limit; a /ws joined to it (?session_id=, as OpenEnv's
    MCPToolClient does) takes no slot of the client's share and stops the session's clock while it talks; once it
    falls silent for the limit, it is closed for idleness and the session with it."""
    settings = Settings(max_sessions=4, sessions_per_client=1, session_timeout_s=0.8)
    with LiveServer(build_app(runtime=runtime, settings=settings)) as server:

        async def scenario() -> dict[str, Any]:
            seen: dict[str, Any] = {}
            async with http_from(ATTACKER, server.url) as http:
                session = (await rpc(http, "openenv/session/create", RESET))["result"]["session_id"]
                for _ in range(6):  # 1.8 s of use, past twice the limit
                    await asyncio.sleep(0.3)
                    assert "result" in await rpc(http, "tools/list", {"session_id": session})
                joined = await connect(server.url.replace("http", "ws") + f"/ws?session_id={session}", local_addr=(ATTACKER, 0), proxy=None)
                for _ in range(6):  # 1.8 s over the joined socket: the session's clock is stopped
                    await asyncio.sleep(0.3)
                    assert (await ask(joined, {"type": "state"}))["type"] == "state"
                seen["in_use"] = "result" in await rpc(http, "tools/list", {"session_id": session})
                frame = json.loads(await asyncio.wait_for(joined.recv(), 10))  # then silence: the joined socket idles out after 0.8 s
                seen["idle_frame"] = frame["data"]["code"]
                await asyncio.sleep(0.3)
                seen["after"] = (await rpc(http, "tools/list", {"session_id": session}))["error"]["message"]
                seen["session"] = session
            return seen

        seen = asyncio.run(scenario())
    assert seen["in_use"] is True and seen["idle_frame"] == "IDLE_TIMEOUT"
    assert seen["after"] == (
        f"MCP session '{seen['session']}' was closed after 0.8 s without a request (ENV_SESSION_TIMEOUT_S); openenv/session/create starts a new one"
    )


# -- who a client is ----------------------------------------------------------------------------------------------------


@contextmanager
def served(runtime: Runtime, trusted: str) -> Iterator[str]:
    """The server as ``python -m env.server`` configures uvicorn (env.server.main.server_config), on loopback."""
    settings = Settings(host="127.0.0.1", port=free_port(), sessions_per_client=1, trusted_proxies=trusted)
    server = uvicorn.Server(server_config(build_app(runtime=runtime, settings=settings), settings))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{settings.port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def counted_as(url: str, source: str, forwarded: str | None, then: str | None = None) -> str:
    """The client a request from ``source`` (with that X-Forwarded-For) is counted as: on a share of one, its second
    session's refusal names it (the second sent with ``then`` as its X-Forwarded-For, if given)."""

    async def create(http: httpx.AsyncClient, xff: str | None) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create", "params": RESET}
        answer: dict[str, Any] = (await http.post("/mcp", headers={"x-forwarded-for": xff} if xff else {}, json=body)).json()
        return answer

    async def go() -> str:
        async with http_from(source, url) as http:
            made = await create(http, forwarded)
            refused = await create(http, then or forwarded)
            await rpc(http, "openenv/session/close", {"session_id": made["result"]["session_id"]})
        client: str = refused["error"]["data"]["client"]
        return client

    return asyncio.run(go())


def test_x_forwarded_for_names_the_client_only_on_a_trusted_proxy_s_connections(runtime: Runtime):
    """Behind HAProxy (option forwardfor appends the address it saw) the client is the rightmost address that is not
    a trusted proxy's; from any other peer the header is ignored, so a forged one buys no new share. Before, uvicorn's
    default trusted it from 127.0.0.1, whoever connected there."""
    with served(runtime, "127.0.0.1") as url:
        assert counted_as(url, "127.0.0.1", "203.0.113.5") == "203.0.113.5"  # the balancer names its client
        assert counted_as(url, "127.0.0.1", "198.51.100.1, 203.0.113.5") == "203.0.113.5"  # what the client wrote: ignored
        # an IPv6 host picks any address of its /64: another one is the same client
        assert counted_as(url, "127.0.0.1", "2001:db8:7:7:1::9", then="2001:db8:7:7:ffff::1") == "2001:db8:7:7::/64"
        # not a trusted proxy: its header is ignored, so a new forged address per request buys no new share
        assert counted_as(url, ATTACKER, "203.0.113.99", then="203.0.113.100") == ATTACKER
    with served(runtime, "") as url:
        assert counted_as(url, "127.0.0.1", "203.0.113.5") == "127.0.0.1"


def test_client_keys_and_the_trusted_proxies_setting():
    assert client_key("203.0.113.7") == "203.0.113.7"
    assert client_key("2001:db8:1:2:aaaa::1") == client_key("2001:db8:1:2:ffff::2") == "2001:db8:1:2::/64"
    assert client_key("::ffff:10.1.2.3") == "10.1.2.3" and client_key("::1") == "::1"
    assert (client_key(None), client_key("testclient")) == ("unknown", "testclient")
    assert Settings(trusted_proxies=" 10.0.0.0/8, 172.28.57.10 ").trusted_proxies == "10.0.0.0/8,172.28.57.10"
    assert Settings().sessions_per_client == 64 and Settings().trusted_proxies == ""
    for bad in ("*", "balancer", "10.0.0.0/33"):
        with pytest.raises(
            ValueError,
            match=r"ENV_TRUSTED_PROXIES: .* is not an IP address or network \(such as 10\.0\.0\.0/8\); name each balancer's address, never '\*'",
        ):
            Settings(trusted_proxies=bad)


def test_the_store_bounds_each_client_s_unfinished_episodes_with_a_true_retry_time(runtime: Runtime):
    now = [100.0]
    store = EpisodeStore(capacity=16, idle_timeout=10.0, clock=lambda: now[0], per_client=2)

    class Episode:
        def __init__(self, episode_id: str):
            self.episode_id, self.done = episode_id, False

        def close(self) -> None:
            pass

    a, b = Episode("a"), Episode("b")
    store.add(a, "203.0.113.7")
    now[0] += 3
    store.add(b, "203.0.113.7")
    store.add(Episode("c"), "198.51.100.1")  # another client's share is its own
    now[0] += 4
    with pytest.raises(ClientShareFull) as full:
        store.add(Episode("d"), "203.0.113.7")
    assert "retry in 3 s, when its longest idle one closes" in str(full.value)  # a was last used 7 s ago, of 10
    now[0] += 3
    store.add(Episode("d"), "203.0.113.7")  # a idled out: the share has room again
    b.done = True
    store.add(Episode("e"), "203.0.113.7")  # a finished episode leaves the share
    store.add(Episode("f"))  # no client's (in process): never bounded
    assert {e.episode_id for e in store.open_episodes()} == {"b", "c", "d", "e", "f"}


def test_slots_name_the_first_moment_a_slot_frees_and_free_it_then():
    """SessionSlots on a clock of its own: the retry time is the first idle MCP session's deadline (a session in a
    request is not idle), and reap closes exactly the sessions due, which then say why they are gone."""
    now = [0.0]

    class Table:
        max_concurrent_envs = 3

        def __init__(self) -> None:
            self.sessions = {"a": object(), "b": object(), "c": object()}

        @property
        def active_sessions(self) -> int:
            return len(self.sessions)

        def get_session_info(self, session_id: str) -> object | None:
            return self.sessions.get(session_id)

    table, closed = Table(), []

    async def close(session_id: str) -> None:
        closed.append(session_id)
        del table.sessions[session_id]

    slots = SessionSlots(2, IdleSessions(10, 5, clock=lambda: now[0]), table, close, clock=lambda: now[0])
    slots.created("a", "203.0.113.7")
    now[0] = 3
    slots.created("b", "203.0.113.7")
    slots.created("c", "198.51.100.1")
    now[0] = 4.5
    assert slots.server_full(3, 3).retry_after_s == 6  # a, made at 0, closes at 10
    assert (slots.over_share("203.0.113.7").retry_after_s, slots.over_share("198.51.100.1")) == (6, None)
    with slots.in_use("a"):
        now[0] = 9
        assert slots.server_full(3, 3).retry_after_s == 4  # a is answering a request: b and c close at 13
    now[0] = 13
    asyncio.run(slots.reap())
    assert closed == ["b", "c"] and slots.held("203.0.113.7") == 1  # a was used until 9: it closes at 19
    assert slots.closed_for_idleness("b") == (
        "MCP session 'b' was closed after 10 s without a request (ENV_SESSION_TIMEOUT_S); openenv/session/create starts a new one"
    )
    assert slots.closed_for_idleness("a") is None and slots.idle_closes == 2
    with slots.in_use("a"):
        busy = slots.server_full(1, 1)
    assert busy.retry_after_s == 10 and "Retry in 10 s at the earliest: no session is waiting for its client now" in busy.message
