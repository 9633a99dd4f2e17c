"""The demo's parts without a browser: debugger commands, rendering, sessions, trajectories and replay,
the HTTP driver against a live server, and the mount at /web (the browser test is test_demo_browser.py)."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from env.config import Settings
from env.demo import commands, view
from env.demo.session import DemoError, DemoSession
from env.demo.trajectory import Trajectory, TrajectoryError, diff_files, load, replay
from env.eval.drivers import HttpDriver
from env.eval.run import play
from env.listing import listing_entry
from env.models import DebugAction
from env.server.app import build_app
from env.server.environment import DebugEnvironment
from env.server.in_process import InProcessDriver

FIX_HYPOTHESIS = "The loop condition left < right skips the last candidate; it must be left <= right."


def fixed_easy(catalog) -> str:
    return catalog.get("easy").buggy_source.replace("while left < right", "while left <= right")


def summary(runtime, task_id: str) -> dict:
    return listing_entry(runtime.catalog.get(task_id).summary())


# -- debugger commands ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("b src/cart.py:12", {"action_type": "debug_break", "path": "src/cart.py", "line": 12}),
        ("break src/cart.py:12 if qty > 3", {"action_type": "debug_break", "path": "src/cart.py", "line": 12, "condition": "qty > 3"}),
        ("c", {"action_type": "debug_continue"}),
        ("next", {"action_type": "debug_next"}),
        ("s", {"action_type": "debug_step"}),
        ("r", {"action_type": "debug_return"}),
        ("w", {"action_type": "debug_where"}),
        ("restart", {"action_type": "debug_restart"}),
        ("until 30", {"action_type": "debug_until", "line": 30}),
        ("until", {"action_type": "debug_until"}),
        ("l 10 20", {"action_type": "debug_list", "start": 10, "end": 20}),
        ("p total * 2", {"action_type": "debug_eval", "expression": "total * 2"}),
        ("locals 1", {"action_type": "debug_inspect", "scope": "locals", "frame": 1}),
        ("globals", {"action_type": "debug_inspect", "scope": "globals"}),
        ("cl", {"action_type": "debug_clear"}),
        ("cl src/a.py:4", {"action_type": "debug_clear", "path": "src/a.py", "line": 4}),
        ("cl src/a.py", {"action_type": "debug_clear", "path": "src/a.py"}),
        ("start tests/test_window.py::test_last", {"action_type": "debug_start", "test": "tests/test_window.py::test_last"}),
        ("start test_last", {"action_type": "debug_start", "test": "test_last"}),
        ("start scripts/repro.py", {"action_type": "debug_start", "script": "scripts/repro.py"}),
    ],
)
def test_debugger_commands_become_tool_calls(text: str, action: dict) -> None:
    assert commands.parse(text) == action


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "type a debugger command; " + commands.USAGE),
        ("b src/cart.py", "break needs <path>:<line>, for example b src/app.py:12"),
        ("jump 4", "unknown debugger command 'jump'; " + commands.USAGE),
        ("until x", "until's argument must be a line or frame number, not 'x'"),
        ("p", "p needs an expression"),
        ("l 1 2 3", "list takes at most a start and an end line"),
    ],
)
def test_a_bad_debugger_command_says_why(text: str, message: str) -> None:
    with pytest.raises(commands.CommandError) as caught:
        commands.parse(text)
    assert str(caught.value) == message


# -- rendering -----------------------------------------------------------------------------------


def test_the_reward_table_holds_each_step_and_the_running_total() -> None:
    assert view.reward_table([0.1, -0.05, 0.5]) == {
        "step": [1, 1, 2, 2, 3, 3],
        "reward": [0.1, 0.1, -0.05, 0.05, 0.5, 0.55],
        "series": ["step reward", "cumulative"] * 3,
    }


def test_score_and_status_lines() -> None:
    running = {"family": "classic", "step_number": 2, "max_steps": 8, "tests_passed": 6, "tests_total": 8, "attempts_remaining": 3, "max_attempts": 5,
               "step_reward": -0.05, "cumulative_reward": 0.1, "score_estimate": 0.25, "done": False}
    assert view.status_line(running) == "Step 2 / 8 · tests 6 / 8 passed · 3 attempts left · step reward -0.050 · cumulative +0.100"
    assert view.score_line(running) == "Score: not yet (estimate 0.250)"
    over = {**running, "done": True, "grader_score": 0.96, "breakdown": {"solve_bonus": 0.5}, "info": {"resolved": True}}
    assert view.score_line(over) == "**Score: 0.960** (solved)"
    assert view.score_line({**over, "info": {"resolved": False}}) == "**Score: 0.960** (not solved)"
    assert "attempts left" not in view.status_line({**running, "max_attempts": 1})  # a repository task has one submission
    repo = {"family": "repo", "done": True, "grader_score": 0.0, "info": {"resolved": False}}
    assert view.score_line(repo) == "**Score: 0.000** (not solved)"


def test_a_tool_template_lists_the_required_arguments_with_empty_values(runtime) -> None:
    tools = {t["function"]["name"]: t for t in summary(runtime, "repo-slice-window")["tools"]}
    assert json.loads(view.tool_template(tools["edit"])) == {"path": "", "start_line": 1, "end_line": 1, "new_text": ""}
    assert json.loads(view.tool_template(tools["run_tests"])) == {}


def test_a_diff_is_escaped_and_coloured() -> None:
    diff = diff_files({"a.py": "x = 1\n"}, {"a.py": "x = '<b>'\n"})
    assert diff == "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = '<b>'\n"
    rendered = view.diff_html(diff)
    assert '<span class="add">+x = &#x27;&lt;b&gt;&#x27;</span>' in rendered
    assert "<b>" not in rendered
    assert "no code changed" in view.diff_html("")


def test_a_whole_file_view_is_remembered_but_not_a_range() -> None:
    obs = {"tool_output": "   1 | import os\n   2 | x = 1\n"}
    assert view.seen_file({"action_type": "view_file", "path": "src/a.py"}, obs) == ("src/a.py", "import os\nx = 1\n")
    assert view.seen_file({"action_type": "view_file", "path": "src/a.py", "start_line": 2}, obs) is None
    assert view.seen_file({"action_type": "view_file", "path": "src/a.py"}, {**obs, "error": "no such file"}) is None


# -- sessions ------------------------------------------------------------------------------------


def test_a_session_plays_easy_to_the_same_score_as_the_environment(runtime, catalog) -> None:
    fix = {"action_type": "submit_fix", "fixed_code": fixed_easy(catalog), "hypothesis": FIX_HYPOTHESIS}
    direct = DebugEnvironment(runtime)
    direct.reset(task_id="easy", seed=1)
    expected = direct.step(DebugAction(**fix))
    session = DemoSession(lambda: InProcessDriver(runtime))
    session.start(summary(runtime, "easy"), "default", 1)
    obs = session.act(fix)
    assert obs["done"] and obs["grader_score"] == expected.grader_score
    assert view.score_line(obs) == f"**Score: {expected.grader_score:.3f}** (solved)"
    assert session.rewards == [expected.reward]
    with pytest.raises(DemoError, match=r"^this episode is over; start a new one$"):
        session.act(fix)
    saved = session.trajectory()
    assert (saved.task_id, saved.seed, saved.profile, saved.score, len(saved.steps)) == ("easy", 1, "default", expected.grader_score, 1)
    session.close()


def test_two_sessions_are_two_episodes(runtime, catalog) -> None:
    a, b = DemoSession(lambda: InProcessDriver(runtime)), DemoSession(lambda: InProcessDriver(runtime))
    a.start(summary(runtime, "easy"), "default", 1)
    b.start(summary(runtime, "easy"), "default", 1)
    a.act({"action_type": "submit_fix", "fixed_code": fixed_easy(catalog), "hypothesis": FIX_HYPOTHESIS})
    assert a.obs["done"] and a.obs["episode_id"] != b.obs["episode_id"]
    assert not b.obs["done"] and b.obs["step_number"] == 0 and b.steps == []
    obs = b.act({"action_type": "query_context", "query_type": "function_signature", "query_target": "binary_search"})
    assert obs["step_number"] == 1 and not obs["done"]
    a.close(), b.close()


def test_a_session_refuses_a_profile_the_task_lacks_and_actions_before_a_start(runtime) -> None:
    session = DemoSession(lambda: InProcessDriver(runtime))
    with pytest.raises(DemoError, match=r"^start an episode first$"):
        session.act({"action_type": "give_up"})
    with pytest.raises(DemoError, match=r"^task 'easy' has no 'minimal' interface; it offers default, bash, pdb, pdb_shell, trace$"):
        session.start(summary(runtime, "easy"), "minimal", 1)


def test_a_session_remembers_repository_files_it_was_shown_and_marks_edits(runtime) -> None:
    session = DemoSession(lambda: InProcessDriver(runtime))
    session.start(summary(runtime, "repo-slice-window"), "default", 3)
    path = "src/sensorkit/window.py"
    session.act({"action_type": "view_file", "path": path})
    assert session.files[path] == runtime.catalog.get("repo-slice-window").files[path]
    session.act({"action_type": "replace_text", "path": path, "old_text": session.files[path].splitlines()[0], "new_text": '"""Edited."""'})
    assert session.edited == {path}
    session.act({"action_type": "view_file", "path": path})
    assert session.edited == set() and session.files[path].startswith('"""Edited."""')
    session.close()


# -- trajectories --------------------------------------------------------------------------------


def test_a_saved_trajectory_replays_with_the_fix_as_its_diff(runtime, catalog) -> None:
    session = DemoSession(lambda: InProcessDriver(runtime))
    session.start(summary(runtime, "easy"), "default", 1)
    session.act({"action_type": "query_context", "query_type": "function_signature", "query_target": "binary_search"})
    session.act({"action_type": "submit_fix", "fixed_code": fixed_easy(catalog), "hypothesis": FIX_HYPOTHESIS})
    loaded = load(session.trajectory().dumps())
    frames = replay(loaded, DebugEnvironment(runtime)).frames
    assert [f.reward for f in frames] == [f.recorded_reward for f in frames] == session.rewards
    assert frames[0].diff == ""
    assert frames[1].diff == (
        "--- a/binary_search.py\n+++ b/binary_search.py\n@@ -1,7 +1,7 @@\n def binary_search(arr, target):\n"
        '     """Return the index of target in the sorted list arr, or -1 if it is not there."""\n'
        "     left, right = 0, len(arr) - 1\n-    while left < right:\n+    while left <= right:\n"
        "         mid = (left + right) // 2\n         if arr[mid] == target:\n             return mid\n"
    )
    assert frames[1].grader_score == session.obs["grader_score"]


def test_an_evaluation_steps_file_replays_too(runtime, tmp_path) -> None:
    steps = tmp_path / "run0.jsonl"
    with InProcessDriver(runtime) as driver:
        result = play(driver, "oracle", summary(runtime, "repo-slice-window"), 0, steps)
    trajectory = load(steps.read_text())
    assert (trajectory.task_id, trajectory.seed, trajectory.agent) == ("repo-slice-window", result["seed"], "oracle")
    frames = replay(trajectory, DebugEnvironment(runtime)).frames
    assert [f.reward for f in frames] == result["rewards"]
    assert frames[0].diff.startswith("--- a/src/sensorkit/window.py\n+++ b/src/sensorkit/window.py\n")
    assert frames[-1].grader_score == result["score"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the file is empty"),
        ("not json", "not a trajectory: Expecting value: line 1 column 1 (char 0)"),
        ('{"step": 1, "action": {}, "reward": 0}\n{"step": 2, "action": {}, "reward": 0}', "this steps file does not name its task_id and seed (files written by env.eval before they were recorded cannot be replayed)"),
        ("[1, 2]", "not a trajectory: expected one JSON object per line"),
        ("[" * 100_000, "not a trajectory: nested too deeply"),
        ('{"task_id": "easy"}', "not a trajectory: seed: Field required"),
        ('{"task_id": "easy", "seed": 1, "steps": [{"step": 0, "action": {}, "reward": 0}]}', "not a trajectory: steps.0.step: Input should be greater than or equal to 1"),
        ('{"task_id": "easy", "seed": 1}\n{"action": {}}', "not a trajectory: a step has no 'step'"),
    ],
)
def test_a_bad_trajectory_file_says_why(text: str, message: str) -> None:
    with pytest.raises(TrajectoryError) as caught:
        load(text)
    assert str(caught.value) == message


def test_replaying_an_unknown_task_says_so(runtime) -> None:
    with pytest.raises(TrajectoryError, match=r"^unknown task_id 'nope'"):
        replay(Trajectory(task_id="nope", seed=1), DebugEnvironment(runtime))


# -- against a server ----------------------------------------------------------------------------


def test_http_drivers_play_separate_episodes_on_a_server(live_server, runtime, catalog) -> None:
    with HttpDriver(live_server.url) as a, HttpDriver(live_server.url) as b:
        a.reset("easy", 1)
        b.reset("easy", 1)
        assert a.episode_id and b.episode_id and a.episode_id != b.episode_id
        obs, reward, done = a.step({"action_type": "submit_fix", "fixed_code": fixed_easy(catalog), "hypothesis": FIX_HYPOTHESIS})
        assert done and obs["grader_score"] > 0.9 and reward > 0.5
        obs, _, done = b.step({"action_type": "query_context", "query_type": "function_signature"})
        assert not done and obs["step_number"] == 1
        assert a.task("proc-easy-train-2")["id"] == "proc-easy-train-2"


def test_without_a_web_ui_the_library_s_shared_playground_is_never_mounted(runtime, monkeypatch) -> None:
    monkeypatch.setenv("ENABLE_WEB_INTERFACE", "true")
    with pytest.raises(RuntimeError, match="^ENABLE_WEB_INTERFACE is on, but this app was built without a web UI"):
        build_app(runtime=runtime, settings=Settings())


def test_the_demo_is_mounted_at_web_when_the_web_interface_is_on(runtime, monkeypatch) -> None:
    from env.server.main import web_ui

    monkeypatch.setenv("ENABLE_WEB_INTERFACE", "true")
    with TestClient(build_app(runtime=runtime, settings=Settings(), web_ui=web_ui)) as client:
        page = client.get("/web/")
        assert page.status_code == 200
        config = client.get("/web/config").json()
        ids = {c.get("props", {}).get("elem_id") for c in config["components"]}
        assert {"task", "start", "submit-fix", "score", "watch-play", "replay-file"} <= ids
        assert client.get("/health").json()["status"] == "healthy"
        # The replay tab's upload is a multipart form: capped in size, not refused as "not JSON".
        uploaded = client.post("/web/gradio_api/upload", files={"files": ("t.json", b'{"task_id": "easy", "seed": 1}', "application/json")})
        assert uploaded.status_code == 200 and uploaded.json()[0].endswith("t.json")
        assert client.post("/reset", content=b"--x\r\n", headers={"content-type": "multipart/form-data; boundary=x"}).status_code == 400


def test_the_demo_plays_on_a_server_given_its_url(live_server, runtime, catalog) -> None:
    from app import remote_demo

    demo = remote_demo(live_server.url)  # lists the server's tasks when built
    assert "task" in {getattr(b, "elem_id", None) for b in demo.blocks.values()}
    session = DemoSession(lambda: HttpDriver(live_server.url))
    task = HttpDriver(live_server.url).task("easy")
    session.start(task, "default", 1)
    obs = session.act({"action_type": "submit_fix", "fixed_code": fixed_easy(catalog), "hypothesis": FIX_HYPOTHESIS})
    direct = DebugEnvironment(runtime)
    direct.reset(task_id="easy", seed=1)
    expected = direct.step(DebugAction(action_type="submit_fix", fixed_code=fixed_easy(catalog), hypothesis=FIX_HYPOTHESIS))
    assert obs["done"] and obs["grader_score"] == expected.grader_score and session.rewards == [expected.reward]
    session.close()


def test_a_dead_server_is_an_error_message_not_a_crash(runtime) -> None:
    from env.demo.session import describe

    session = DemoSession(lambda: HttpDriver("http://127.0.0.1:9", timeout_s=2))
    with pytest.raises(Exception) as caught:
        session.start(summary(runtime, "easy"), "default", 1)
    assert describe(caught.value) == "the environment did not answer (ConnectError: [Errno 111] Connection refused)"


def test_the_space_runs_app_py_on_a_configurable_port(monkeypatch) -> None:
    from pathlib import Path

    from env.demo.launch import DEFAULT_PORT, port_from_env

    front = Path("README.md").read_text().split("---\n")[1]
    assert "sdk: gradio" in front and "app_file: app.py" in front and Path("app.py").is_file()
    monkeypatch.delenv("PORT", raising=False)
    monkeypatch.delenv("GRADIO_SERVER_PORT", raising=False)
    assert port_from_env() == DEFAULT_PORT == 7860
    monkeypatch.setenv("GRADIO_SERVER_PORT", "7000")
    assert port_from_env() == 7000
    monkeypatch.setenv("PORT", "8123")
    assert port_from_env() == 8123


def test_debugger_commands_typed_in_the_demo_drive_a_live_session(runtime) -> None:
    session = DemoSession(lambda: InProcessDriver(runtime))
    session.start(summary(runtime, "repo-slice-window"), "pdb", 1)
    test = "tests/test_smoothing.py::test_moving_average_length_and_values"
    obs = session.act(commands.parse(f"start {test}"))
    assert obs["error"] is None and obs["tool_result"]["frame"] == {"file": "tests/test_smoothing.py", "line": 7, "function": "test_moving_average_length_and_values"}
    obs = session.act(commands.parse("n"))
    assert obs["tool_result"]["frame"]["line"] == 8
    obs = session.act(commands.parse("p values"))
    assert obs["error"] is None and obs["tool_output"].startswith("[10.0, 12.0, 14.0, 13.0, 11.0, 16.0]  (list)")
    session.close()


def test_a_replay_stops_when_its_time_budget_is_spent(runtime, catalog) -> None:
    steps = [{"step": i, "action": {"action_type": "query_context", "query_type": "test_details"}, "reward": 0.0} for i in (1, 2)]
    trajectory = Trajectory(task_id="easy", seed=1, steps=steps)
    assert replay(trajectory, DebugEnvironment(runtime), budget_s=0).model_dump() == {"frames": [], "cut": "stopped after 0 of 2 steps: a replay may take 0 s", "secret_note": None}
    seen = []
    result = replay(trajectory, DebugEnvironment(runtime), progress=lambda done, total: seen.append((done, total)))
    assert result.cut is None and len(result.frames) == 2 and seen == [(1, 2), (2, 2)]


def test_a_failed_start_keeps_the_episode_that_was_playing(runtime) -> None:
    drivers = iter([InProcessDriver(runtime), HttpDriver("http://127.0.0.1:9", timeout_s=2)])
    session = DemoSession(lambda: next(drivers))
    session.start(summary(runtime, "easy"), "default", 1)
    with pytest.raises(Exception, match="Connection refused"):
        session.start(summary(runtime, "medium"), "default", 1)
    obs = session.act({"action_type": "query_context", "query_type": "test_details"})
    assert obs["task_id"] == "easy" and obs["step_number"] == 1 and len(session.steps) == 1
    session.close()


class _ForgetfulServer:
    """A driver whose server restarted after the reset."""

    def __init__(self, runtime) -> None:
        self.inner = InProcessDriver(runtime)

    def reset(self, task_id, seed, **options):
        return self.inner.reset(task_id, seed, **options)

    def step(self, action):
        return {"error": "unknown or expired episode_id 'x'; call POST /reset to start an episode", "done": True, "reward": 0.0}, 0.0, True

    def __exit__(self, *exc) -> None:
        self.inner.__exit__(*exc)


def test_an_episode_the_server_lost_is_a_message_and_the_page_keeps_its_state(runtime) -> None:
    session = DemoSession(lambda: _ForgetfulServer(runtime))
    before = session.start(summary(runtime, "easy"), "default", 1)
    with pytest.raises(DemoError, match=r"^this episode is no longer on the server \(it expired or the server restarted\); start a new one$"):
        session.act({"action_type": "give_up"})
    assert session.obs is before and session.steps == []
    session.close()


def test_closing_an_http_driver_gives_its_episode_up(live_server) -> None:
    driver = HttpDriver(live_server.url)
    driver.reset("easy", 1)
    episode = driver.episode_id
    driver.__exit__(None, None, None)
    import httpx

    state = httpx.get(f"{live_server.url}/state", params={"episode_id": episode}).json()
    assert state["done"] and state["gave_up"]


def test_the_minimal_profile_shows_the_files_cat_printed(runtime) -> None:
    session = DemoSession(lambda: InProcessDriver(runtime))
    session.start(summary(runtime, "repo-slice-window"), "minimal", 1)
    session.act({"action_type": "cat", "path": "src/sensorkit/window.py"})
    assert session.shown == "src/sensorkit/window.py" and session.files[session.shown].startswith('"""')
    session.act({"action_type": "test"})
    assert session.shown == "src/sensorkit/window.py"
    session.close()


# -- scratch folders: nothing outlives the demo ------------------------------------------------------

SCRATCH_PROCESS = """
import time
from env.demo import scratch
from env.server.signals import exit_cleanly_on_sigterm
exit_cleanly_on_sigterm()
print(scratch.new_folder(), flush=True)
time.sleep(60)
"""


def scratch_process(tmp_path):
    """A process that opens one scratch folder under ``tmp_path`` (its TMPDIR), says where, and waits."""
    import subprocess
    import sys
    from pathlib import Path

    process = subprocess.Popen([sys.executable, "-c", SCRATCH_PROCESS], cwd=Path(__file__).resolve().parents[1],
                               env={"PATH": "/usr/bin:/bin", "TMPDIR": str(tmp_path)}, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    return process, Path(process.stdout.readline().strip())


def test_a_session_s_download_folder_carries_the_pid_and_goes_with_the_session(runtime, tmp_path, monkeypatch) -> None:
    import os
    import tempfile
    from pathlib import Path

    from env.demo.parts import save

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    session = DemoSession(lambda: InProcessDriver(runtime))
    session.start(summary(runtime, "easy"), "default", 1)
    saved = save(session)
    assert saved is not None
    folder = Path(saved).parent
    assert folder.name.startswith(f"adbg-demo-{os.getpid()}-") and [p.name for p in folder.iterdir()] == ["trajectory-easy-seed1.json"]
    session.close()
    assert list(tmp_path.iterdir()) == []


def test_scratch_folders_go_at_exit_and_a_killed_process_s_at_the_next_start(tmp_path) -> None:
    import os
    import signal

    from env.demo import scratch

    stopped, stopped_folder = scratch_process(tmp_path)
    killed, killed_folder = scratch_process(tmp_path)
    assert stopped_folder.is_dir() and stopped_folder.name.startswith(f"adbg-demo-{stopped.pid}-")
    stopped.send_signal(signal.SIGTERM)
    assert stopped.wait(30) == 0 and not stopped_folder.exists()  # SIGTERM exits normally: atexit removes it
    killed.kill()
    assert killed.wait(30) == -signal.SIGKILL and killed_folder.is_dir()  # nothing runs on SIGKILL
    mine = tmp_path / f"adbg-demo-{os.getpid()}-open"  # a live process's folder
    unnamed = tmp_path / "adbg-demo-k2x9q7w1"  # named before folders carried the PID: whose it is is unknown
    mine.mkdir()
    unnamed.mkdir()
    assert scratch.sweep(tmp_path) == [killed_folder]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([mine.name, unnamed.name])


def test_building_the_demo_sweeps_the_folders_of_dead_demos(runtime, tmp_path, monkeypatch) -> None:
    import tempfile

    from app import local_demo

    killed, folder = scratch_process(tmp_path)
    killed.kill()
    killed.wait(30)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    local_demo(runtime)
    assert list(tmp_path.iterdir()) == []
