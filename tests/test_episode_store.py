"""HTTP episodes: kept by id, expired when idle, bounded in number, and `openenv validate .` on the manifest."""

import subprocess
import sys
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from env.config import Settings
from env.families.classic.episode import ClassicEpisode
from env.families.classic.family import CLASSIC
from env.server.app import build_app
from env.server.episodes import EpisodeNotFound, EpisodeStore, NoEpisodeNamed, StoreFull

ROOT = Path(__file__).resolve().parents[1]


def make(runtime, name: str) -> ClassicEpisode:
    return CLASSIC.episode(runtime, runtime.catalog.get("easy"), seed=1, episode_id=name)


def test_episodes_are_found_by_id_and_the_latest_is_remembered(runtime):
    store = EpisodeStore(capacity=4, idle_timeout=60)
    first, second = make(runtime, "a"), make(runtime, "b")
    store.add(first)
    store.add(second)
    assert store.get("a") is first and store.latest() is second and store.get("zzz") is None


def test_idle_episodes_expire(runtime):
    store = EpisodeStore(capacity=4, idle_timeout=0.2)
    store.add(make(runtime, "a"))
    time.sleep(0.3)
    assert store.get("a") is None and store.latest() is None and len(store) == 0


def test_capacity_evicts_finished_episodes_first_and_never_a_running_one(runtime):
    store = EpisodeStore(capacity=2, idle_timeout=60)
    done, running = make(runtime, "done"), make(runtime, "running")
    done.done = True
    store.add(done)
    store.add(running)
    store.add(make(runtime, "new"))
    assert store.get("done") is None and store.get("running") is running
    with pytest.raises(StoreFull, match="2 HTTP episodes are open"):
        store.add(make(runtime, "one-too-many"))


def test_an_expired_episode_is_a_clear_error_over_http(runtime):
    with TestClient(build_app(runtime=runtime, settings=Settings(session_timeout_s=0.2))) as client:
        episode = client.post("/reset", json={"task_id": "easy"}).json()["observation"]["episode_id"]
        time.sleep(0.3)
        r = client.post("/step", json={"action": {"action_type": "give_up"}, "episode_id": episode})
    assert r.status_code == 200
    assert r.json()["observation"]["error"] == (
        f"episode_id '{episode}' was closed after 0.2 s without a request (ENV_SESSION_TIMEOUT_S); call POST /reset to start a new episode"
    )


def test_a_full_store_refuses_new_http_episodes_clearly(runtime):
    with TestClient(build_app(runtime=runtime, settings=Settings(http_episodes=1))) as client:
        client.post("/reset", json={"task_id": "easy"})
        r = client.post("/reset", json={"task_id": "easy"})
    assert r.status_code == 200
    assert r.json()["observation"]["error"] == (
        "1 HTTP episodes are open; retry in 600 s, when the longest idle one closes unless it is used (an episode closes "
        "after 600 s without a request), finish one, use the WebSocket endpoint /ws, or start the server with a higher "
        "ENV_HTTP_EPISODES (now 1)"
    )


def test_openenv_validate_accepts_the_manifest():
    # The manifest is a v2 one (validation.execution): without --skip-build, `openenv validate` builds the image with
    # Docker and runs its runtime checks in it; validator.py --v2 runs them against a server instead.
    done = subprocess.run([sys.executable, "-m", "openenv.cli", "validate", str(ROOT), "--skip-build"], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS  static.manifest" in done.stdout and "policy v2" in done.stdout


def test_only_idle_episodes_expire_and_use_keeps_one_alive(runtime):
    now = [0.0]
    store = EpisodeStore(capacity=8, idle_timeout=1.0, clock=lambda: now[0])
    for name in "abc":
        store.add(make(runtime, name))
    now[0] = 0.6
    assert store.get("a") is not None  # used: its idle time starts again
    now[0] = 1.2
    store.add(make(runtime, "d"))  # b and c have been idle 1.2 s, a 0.6 s
    assert (store.get("b"), store.get("c")) == (None, None)
    assert store.get("a") is not None and store.latest() is not None and len(store) == 2


def test_the_store_evicts_the_least_recently_used_finished_episode(runtime):
    store = EpisodeStore(capacity=3, idle_timeout=60)
    episodes = {name: make(runtime, name) for name in "abc"}
    for ep in episodes.values():
        ep.done = True
        store.add(ep)
    store.get("a")  # now b is the least recently used
    store.add(make(runtime, "d"))
    assert store.get("b") is None and all(store.get(k) is episodes[k] for k in "ac")


def test_idle_closes_are_counted_named_and_timed(runtime):
    """Issue 33: a request naming an episode closed for idleness is told so, the capacity error says when to retry,
    and a request naming no episode never gets one (unless the store is single-user)."""
    now = [0.0]
    store = EpisodeStore(capacity=2, idle_timeout=10.0, clock=lambda: now[0])
    store.add(make(runtime, "a"))
    with pytest.raises(NoEpisodeNamed):
        store.find(None, None)
    now[0] = 4.0
    store.add(make(runtime, "b"))
    now[0] = 6.5
    with pytest.raises(StoreFull, match=r"^2 HTTP episodes are open; retry in 4 s, when the longest idle one closes"):
        store.add(make(runtime, "c"))
    now[0] = 10.5
    store.reap()
    assert (store.idle_closes, len(store)) == (1, 1)
    with pytest.raises(EpisodeNotFound) as gone:
        store.find("a", None)
    assert str(gone.value) == "episode_id 'a' was closed after 10 s without a request (ENV_SESSION_TIMEOUT_S); call POST /reset to start a new episode"
    with pytest.raises(EpisodeNotFound) as gone:
        store.find(None, "a")
    assert str(gone.value) == (
        "the episode your adbg_episode cookie names ('a') was closed after 10 s without a request (ENV_SESSION_TIMEOUT_S); "
        "call POST /reset to start a new episode"
    )
    single = EpisodeStore(capacity=2, idle_timeout=10.0, single_user=True)
    single.add(make(runtime, "s"))
    assert single.find(None, None).episode_id == "s"
