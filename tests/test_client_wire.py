"""The OpenEnv-free client and wire models: nothing heavy on import, and interchangeable on the wire with
OpenEnv's own ``GenericEnvClient`` in both directions (its payloads parse into our models; our client's
messages get exactly the answers its messages get)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from openenv.core.generic_client import GenericEnvClient

from env import models, wire
from env.client import DebugAction, DebugEnvClient, ServerError, StepResult, ws_url
from env.config import Settings
from env.runtime import Runtime
from env.server.app import build_app
from tests.conftest import LiveServer

ROOT = Path(__file__).resolve().parents[1]
# The classic task `easy`, seed 1: a free query, then give up. The episode id is given so the two
# clients' episodes are identical field for field.
RESET = {"task_id": "easy", "seed": 1, "episode_id": "client-wire-easy-1"}
QUERY = {"action_type": "query_context", "query_type": "test_details", "query_target": "test_finds_last_element"}
GIVE_UP = {"action_type": "give_up", "final_diagnosis": "off-by-one: the loop stops before the last element"}
Episode = tuple[list[StepResult], wire.DebugState]


def test_importing_the_client_loads_neither_openenv_nor_gradio():
    code = (
        "import sys\n"
        "from env.client import DebugAction, DebugEnvClient, StepResult\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'openenv', 'gradio'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("name", ["DebugAction", "DebugObservation", "DebugState"])
def test_server_and_client_models_are_the_same_contract(name: str):
    server, client = getattr(models, name), getattr(wire, name)
    assert server.model_json_schema() == client.model_json_schema()  # fields, types, defaults, descriptions, extras
    assert list(server.model_fields) == list(client.model_fields)
    assert dict(server.model_config) == dict(client.model_config)
    shared = {"DebugAction": wire.ActionFields, "DebugObservation": wire.ObservationFields, "DebugState": wire.StateFields}[name]
    assert issubclass(server, shared) and issubclass(client, shared)


def test_an_action_is_sent_as_openenv_s_client_sends_the_same_dict():
    # GenericEnvClient sends a dict as it is; ours leaves out unused (None) fields and client-side metadata.
    assert GenericEnvClient(base_url="http://127.0.0.1:9")._step_payload(QUERY) == QUERY
    for action in (QUERY, GIVE_UP):
        assert DebugAction(**action).model_dump(exclude_none=True, exclude={"metadata"}) == action
        assert models.DebugAction(**action).model_dump(exclude_none=True, exclude={"metadata"}) == action


@pytest.fixture(scope="module")
def openenv_episode(live_server: LiveServer) -> tuple[list[dict], dict]:
    """OpenEnv's own client plays the episode; its raw payloads (observation, reward, done, metadata) and state."""
    with GenericEnvClient(base_url=live_server.url) as client:
        results = [client.reset(**RESET), client.step(QUERY), client.step(GIVE_UP)]
        state = client.state()
    return [{"observation": r.observation, "reward": r.reward, "done": r.done, "metadata": r.metadata} for r in results], state


def parse(payload: dict) -> wire.DebugObservation:
    return wire.DebugObservation.model_validate({**payload["observation"], "done": payload["done"], "reward": payload["reward"]})


def test_openenv_client_payloads_parse_into_the_wire_models(openenv_episode):
    payloads, state = openenv_episode
    for payload in payloads:
        observation = parse(payload)  # extra="forbid": a field the wire models lack would fail here
        assert observation.model_dump(exclude={"done", "reward"}) == payload["observation"]  # nothing lost or coerced
    assert set(state) == set(wire.DebugState.model_fields)
    assert wire.DebugState.model_validate(state).model_dump() == state
    reset, query, give_up = payloads
    assert [p["reward"] for p in payloads] == [0.0, 0.0, 0.0] and all(type(p["reward"]) is float for p in payloads)
    assert [p["done"] for p in payloads] == [False, False, True]
    assert reset["observation"]["tests_passed"] == 6 and reset["observation"]["tests_total"] == 8
    assert "last run: FAILED" in query["observation"]["query_result"]
    assert give_up["observation"]["grader_score"] == 0.0 and give_up["observation"]["attempts_remaining"] == 5
    assert state["step_count"] == 2 and state["gave_up"] is True and state["queries_used"] == 1


def sync_episode(url: str) -> Episode:
    with DebugEnvClient(base_url=url) as client:
        results = [client.reset(**RESET), client.step(DebugAction(**QUERY)), client.step(DebugAction(**GIVE_UP))]
        return results, client.state()


async def async_episode(url: str) -> Episode:
    async with DebugEnvClient(base_url=url) as client:
        results = [await client.reset(**RESET), await client.step(DebugAction(**QUERY)), await client.step(DebugAction(**GIVE_UP))]
        return results, await client.state()


@pytest.mark.parametrize("use", ["sync", "async"])
def test_our_client_gets_exactly_the_episode_openenv_s_client_gets(live_server: LiveServer, openenv_episode, use: str):
    results, state = sync_episode(live_server.url) if use == "sync" else asyncio.run(async_episode(live_server.url))
    payloads, openenv_state = openenv_episode
    assert len(results) == len(payloads)
    for ours, theirs in zip(results, payloads, strict=True):
        assert isinstance(ours.observation, wire.DebugObservation)
        assert ours.observation == parse(theirs)
        assert (ours.reward, ours.done, ours.metadata) == (theirs["reward"], theirs["done"], theirs["metadata"])
    assert isinstance(state, wire.DebugState) and state.model_dump() == openenv_state


def test_the_server_s_action_model_is_accepted_too(live_server: LiveServer, openenv_episode):
    payloads, _ = openenv_episode
    with DebugEnvClient(base_url=live_server.url) as client:
        client.reset(**RESET)
        assert client.step(models.DebugAction(**QUERY)).observation == parse(payloads[1])


def test_an_error_frame_raises_as_it_does_in_openenv_s_client(runtime: Runtime):
    """A second session on a one-session server is refused with an error frame: both clients raise the same error."""
    with LiveServer(build_app(runtime=runtime, settings=Settings(max_sessions=1))) as server:
        with DebugEnvClient(base_url=server.url) as holder:
            holder.reset(task_id="easy", seed=1)
            with pytest.raises(RuntimeError) as theirs, GenericEnvClient(base_url=server.url) as generic:
                generic.reset(task_id="easy")
            with pytest.raises(ServerError) as ours, DebugEnvClient(base_url=server.url) as client:
                client.reset(task_id="easy")
    assert "(code: CAPACITY_REACHED)" in str(ours.value) and str(ours.value) == str(theirs.value)


def test_a_client_keeps_the_mode_of_its_first_use():
    client = DebugEnvClient(base_url="http://127.0.0.1:9").sync()
    with pytest.raises(RuntimeError, match="in sync use"):
        asyncio.run(client.__aenter__())


@pytest.mark.parametrize(
    ("base_url", "expected"),
    [
        ("http://localhost:8000", "ws://localhost:8000/ws"),
        ("https://example.org/", "wss://example.org/ws"),
        ("ws://127.0.0.1:1", "ws://127.0.0.1:1/ws"),
        ("localhost:8000", "ws://localhost:8000/ws"),
    ],
)
def test_base_urls_map_to_the_episode_endpoint(base_url: str, expected: str):
    assert ws_url(base_url) == expected
