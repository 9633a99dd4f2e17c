"""Where a step's time goes (issue 51 item 1): ``env.timing``'s phases, and the Server-Timing header ENV_SERVER_TIMING
turns on for `bench/bench_server.py --phases`."""

from __future__ import annotations

import contextvars
import threading

import pytest
from fastapi.testclient import TestClient

from bench.bench_server import server_timing
from env import timing
from env.config import Settings
from env.server.app import build_app
from env.timing import PHASES, phase, recording
from tests.helpers import GOLD, GOOD_HYPOTHESIS


class Clock:
    """time.perf_counter as env.timing reads it, moved on by hand: the phases' arithmetic without waiting."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_each_phase_counts_its_own_time_so_the_phases_add_up(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(timing.time, "perf_counter", clock)
    with recording() as phases:
        with phase("held_out"):
            clock.now += 0.05
            with phase("fork"):
                clock.now += 0.03
            timing.add("slot", 0.02)  # a wait timed elsewhere: taken out of the phase it happened in
        with phase("fork"):  # a phase met twice is summed
            clock.now += 0.01
    assert phases.seconds == pytest.approx({"held_out": 0.05 + 0.03 - 0.03 - 0.02, "fork": 0.04, "slot": 0.02})
    assert sum(phases.seconds.values()) == pytest.approx(0.09)  # the whole, once


def test_a_phase_run_on_another_thread_with_the_request_s_context_is_recorded():
    with recording() as phases, phase("race"):
        worker = threading.Thread(target=contextvars.copy_context().run, args=(lambda: timing.add("load", 0.5),))
        worker.start()
        worker.join()
    assert phases.seconds["load"] == 0.5 and phases.seconds["race"] < 0.5 - 0.4  # waited for, taken out of race


def test_without_a_recorder_nothing_is_recorded_anywhere():
    with phase("fork"):
        timing.add("slot", 1.0)
    with recording() as phases:
        pass
    assert phases.seconds == {} and phases.header() == ""


def test_the_header_lists_the_phases_in_order_in_milliseconds():
    with recording() as phases:
        phases.add("total", 0.0125)
        phases.add("fork", 0.001)
        phases.add("custom", 0.002)
    assert phases.header() == "fork;dur=1.000, total;dur=12.500, custom;dur=2.000"
    assert server_timing(phases.header()) == {"fork": 1.0, "total": 12.5, "custom": 2.0}


def submit_easy(client: TestClient):
    reset = client.post("/reset", json={"task_id": "easy", "seed": 1})
    episode_id = reset.json()["observation"]["episode_id"]
    action = {"action_type": "submit_fix", "fixed_code": GOLD["easy"], "hypothesis": GOOD_HYPOTHESIS["easy"]}
    return reset, client.post("/step", json={"action": action, "episode_id": episode_id})


def test_with_server_timing_on_a_submission_answers_its_phases_adding_up_to_its_total(runtime):
    with TestClient(build_app(runtime=runtime, settings=Settings(server_timing=True))) as client:
        reset, step = submit_easy(client)
    assert step.json()["observation"]["grader_score"] >= 0.9
    found = server_timing(step.headers["server-timing"])
    assert {"queue", "lock", "policy", "fork", "load", "visible", "held_out", "reap", "grade", "observe", "step", "http", "total"} <= set(found)
    assert set(found) <= set(PHASES)
    assert all(ms >= 0 for name, ms in found.items() if name != "http")
    assert sum(ms for name, ms in found.items() if name != "total") == pytest.approx(found["total"], abs=0.01)  # rounding only
    assert {"reset", "total"} <= set(server_timing(reset.headers["server-timing"]))


def test_server_timing_is_off_by_default(runtime):
    assert Settings().server_timing is False
    with TestClient(build_app(runtime=runtime, settings=Settings())) as client:
        _, step = submit_easy(client)
    assert step.json()["observation"]["grader_score"] >= 0.9 and "server-timing" not in step.headers
