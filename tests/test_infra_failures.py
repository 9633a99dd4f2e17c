"""Infrastructure failures are never scored as the agent's (issue 50, item 2). Each cause is made to happen for real
(the fork server killed mid-run, the sandbox closed under a run, the scratch space full) and the step is flagged,
paid nothing and not counted; a submission that itself crashes, loops or exhausts memory stays the agent's failure."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from env.config import Settings
from env.infra import InfraFailure
from env.models import DebugAction
from env.runtime import Runtime
from env.sandbox import zygote as zygote_module
from env.sandbox.limits import Limits
from env.sandbox.runner import Sandbox
from env.server.app import build_app
from env.server.environment import DebugEnvironment
from env.server.ors import run_tool_output
from tests.conftest import TEST_SECRET
from tests.helpers import GOLD, GOOD_HYPOTHESIS

# easy's gold fix behind a few seconds of work at import: long enough to pull the floor from under the run
SLOW_GOLD = "def _spin():\n    n = 0\n    for i in range(60_000_000):\n        n += i\n    return n\n\n\n_spin()\n\n\n" + GOLD["easy"]


def submit(code: str) -> DebugAction:
    return DebugAction(action_type="submit_fix", fixed_code=code, hypothesis=GOOD_HYPOTHESIS["easy"])


@pytest.fixture()
def own_runtime(isolation, catalog) -> Iterator[Runtime]:
    """A runtime with a sandbox of its own: its fork server is this test's to kill."""
    runtime = Runtime(catalog, Sandbox(Limits(), isolation), workers=4, secret=TEST_SECRET)
    yield runtime
    runtime.sandbox.close()


def zygote_pid(runtime: Runtime) -> int:
    assert runtime.sandbox.zygote is not None, "these tests need the warm fork server (SANDBOX_ZYGOTE on)"
    deadline = time.monotonic() + 20
    while runtime.sandbox.zygote.pid is None:
        assert time.monotonic() < deadline, "the fork server never started"
        time.sleep(0.01)
    return runtime.sandbox.zygote.pid


def step_while(env: DebugEnvironment, action: DebugAction, fault: callable, after_s: float = 0.6):  # type: ignore[valid-type]
    """Step ``env`` with ``action`` while ``fault`` happens ``after_s`` into the step."""
    timer = threading.Timer(after_s, fault)
    timer.start()
    try:
        return env.step(action)
    finally:
        timer.cancel()


def test_a_fork_server_killed_mid_run_is_infrastructure_not_the_agent(own_runtime):
    env = DebugEnvironment(runtime=own_runtime)
    env.reset(task_id="easy", seed=0)
    pid = zygote_pid(own_runtime)  # the reset's baseline run started it
    obs = step_while(env, submit(SLOW_GOLD), lambda: os.kill(pid, signal.SIGKILL))
    assert (obs.infra_failed, obs.infra_cause, obs.reward, obs.done) == (True, "fork_server_died", 0.0, False)
    assert obs.error.startswith("the sandbox's fork server died during the run (infrastructure: fork_server_died; not your code's doing")
    assert obs.metadata == {"infra_failed": True, "infra_cause": "fork_server_died"}
    assert (obs.step_number, obs.attempts_remaining) == (0, 5)  # not counted: no step, no attempt
    assert env.state.infra_failures == ["fork_server_died"]
    again = env.step(submit(GOLD["easy"]))  # a new fork server takes the step again
    assert (again.infra_failed, again.done, again.grader_score, again.step_number) == (False, True, 0.96, 1)


def test_a_sandbox_closed_under_a_run_is_the_replica_stopping(own_runtime, monkeypatch):
    monkeypatch.setattr(zygote_module, "CLOSE_GRACE_S", 0.2)  # the runs in flight get this long before the kill
    env = DebugEnvironment(runtime=own_runtime)
    env.reset(task_id="easy", seed=0)
    zygote_pid(own_runtime)
    obs = step_while(env, submit(SLOW_GOLD), own_runtime.sandbox.close)
    assert (obs.infra_failed, obs.infra_cause, obs.reward, obs.step_number) == (True, "replica_stopping", 0.0, 0)
    assert obs.error.startswith("the server closed its sandbox (it is shutting down) during the run")


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ("while True:\n    pass\n", "time limit"),  # loops
        ("x = [0] * (10 ** 10)\n", "MemoryError"),  # exhausts its memory
        ("raise SystemExit(3)\n", "SystemExit"),  # crashes its own process
    ],
    ids=["loops", "exhausts-memory", "crashes"],
)
def test_a_submission_that_fails_by_itself_is_the_agent_s_failure(own_runtime, code, said):
    env = DebugEnvironment(runtime=own_runtime)
    env.reset(task_id="easy", seed=0)
    obs = env.step(submit(code + GOLD["easy"]))
    assert (obs.infra_failed, obs.infra_cause, obs.step_number, obs.attempts_remaining) == (False, None, 1, 4)
    assert said in obs.current_error_output and env.state.infra_failures == []


@pytest.fixture()
def full_scratch() -> Iterator[Path]:
    """A scratch directory on a tmpfs of its own, filled up: no file can be made there."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root and mount(8) (CI runs as root)")
    folder = Path(tempfile.mkdtemp(prefix="adbg-full-"))
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k,nr_inodes=8,mode=0700", "tmpfs", str(folder)], capture_output=True, text=True)
    if done.returncode != 0:
        folder.rmdir()
        pytest.skip(f"this host lets no tmpfs be mounted: {done.stderr.strip()}")
    try:
        with suppress(OSError), open(folder / "bytes", "wb", buffering=0) as filler:  # every byte ...
            while True:
                filler.write(b"\0" * 4096)
        for n in range(64):  # ... then every inode
            try:
                (folder / f"inode-{n}").touch()
            except OSError:
                break
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)
        folder.rmdir()


def test_a_full_scratch_space_is_infrastructure(isolation, catalog, own_runtime, full_scratch):
    env = DebugEnvironment(runtime=own_runtime)
    env.reset(task_id="easy", seed=0)
    own_runtime.sandbox.tmp_root = str(full_scratch)  # where each run makes its output file: full from now on
    obs = env.step(submit(GOLD["easy"]))
    assert (obs.infra_failed, obs.infra_cause, obs.reward, obs.step_number) == (True, "scratch_full", 0.0, 0)
    assert obs.error.startswith("the server's scratch space is full while starting a sandbox run: No space left on device")
    with pytest.raises(InfraFailure) as raised:
        Sandbox(Limits(), isolation, tmp_root=str(full_scratch), warm=False).start("x = 1\n", "m.py", "m")
    assert raised.value.cause == "scratch_full"


def test_the_flag_reaches_openenv_ors_and_metrics(own_runtime):
    app = build_app(runtime=own_runtime, settings=Settings())
    with TestClient(app) as client:
        episode = client.post("/reset", json={"task_id": "easy", "seed": 0}).json()["observation"]["episode_id"]
        pid = zygote_pid(own_runtime)
        timer = threading.Timer(0.6, lambda: os.kill(pid, signal.SIGKILL))
        timer.start()
        body = {"action": {"action_type": "submit_fix", "fixed_code": SLOW_GOLD, "hypothesis": "h"}, "episode_id": episode}
        answer = client.post("/step", json=body).json()
        timer.cancel()
        assert (answer["reward"], answer["done"], answer["observation"]["infra_failed"], answer["observation"]["infra_cause"]) == (0.0, False, True, "fork_server_died")
        assert answer["observation"]["metadata"] == {"infra_failed": True, "infra_cause": "fork_server_died"}
        assert 'adbg_infra_failures_total{cause="fork_server_died"} 1.0' in client.get("/metrics").text
        state = client.get("/state", params={"episode_id": episode}).json()
        assert (state["step_count"], state["infra_failures"]) == (0, ["fork_server_died"])


def test_ors_output_keeps_an_infra_failed_step_in_band_with_its_flag():
    from openenv.core.env_server.mcp_types import CallToolObservation, ToolError, ToolErrorType

    data = {"step_number": 0, "max_steps": 8, "tests_passed": 6, "tests_total": 8, "infra_failed": True, "infra_cause": "fork_server_died"}
    answer = CallToolObservation(
        tool_name="submit_fix", result={"content": [{"type": "text", "text": "the sandbox's fork server died"}], "data": data, "is_error": True},
        error=ToolError(error_type=ToolErrorType.EXECUTION_ERROR, message="the sandbox's fork server died"), done=False, reward=0.0,
    )
    out = run_tool_output(answer)
    assert out["ok"] is True and out["output"]["reward"] == 0.0 and out["output"]["finished"] is False
    assert (out["output"]["metadata"]["infra_failed"], out["output"]["metadata"]["infra_cause"]) == (True, "fork_server_died")


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _cmdline(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


def hosts_of(root: int) -> list[int]:
    """The trusted test processes running a test run below ``root``: each a fork of its warm host server (which
    keeps the server's command line), or a process of its own (not a server)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            pid = int(entry.name)
            if "adbg_host.pytest_host" not in _cmdline(pid):
                continue
            parent = _parent(pid)
            forked = "adbg_host.pytest_host" in _cmdline(parent)
            if (forked and _parent(parent) == root) or (not forked and "--serve" not in _cmdline(pid) and parent == root):
                found.append(pid)
        except (OSError, ValueError, IndexError):
            continue
    return found


def test_a_test_host_killed_mid_run_is_infrastructure(own_runtime):
    env = DebugEnvironment(runtime=own_runtime)
    env.reset(task_id="repo-cache-stale", seed=0)
    first = env.step(DebugAction(action_type="view_file", path="pricebook/money.py")).tool_output.splitlines()[0]
    line = first.split("|", 1)[1].lstrip() if "|" in first else first  # the viewer may number its lines
    slow = "for _spin in range(80_000_000):\n    pass\n" + line
    edited = env.step(DebugAction.model_validate({"action_type": "replace_text", "path": "pricebook/money.py", "old_text": line, "new_text": slow}))
    assert edited.error is None, edited.error

    def kill_the_host() -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            hosts = hosts_of(os.getpid())
            if hosts:
                time.sleep(0.3)
                for pid in hosts:
                    with suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                return
            time.sleep(0.02)

    killer = threading.Thread(target=kill_the_host)
    killer.start()
    obs = env.step(DebugAction(action_type="run_tests"))
    killer.join()
    assert (obs.infra_failed, obs.infra_cause, obs.reward, obs.step_number) == (True, "test_host_crashed", 0.0, 2)
    assert obs.error.startswith("the trusted test process died before it finished")


def test_the_evaluation_leaves_the_machine_s_episodes_out_and_reports_the_rate(own_runtime, full_scratch, tmp_path):
    import json

    from env.eval import report
    from env.eval.run import completed, play, steps_path
    from env.server.in_process import InProcessDriver

    driver = InProcessDriver(own_runtime)
    good_root = own_runtime.sandbox.tmp_root
    results = []
    for task_id, root in (("easy", str(full_scratch)), ("medium", good_root)):
        own_runtime.sandbox.tmp_root = root  # easy's runs cannot start: its reset is the machine's failure
        task = driver.task(task_id)
        results.append(play(driver, "heuristic", task, 0, steps_path(tmp_path, "heuristic", task_id, 0)))
    easy, medium = results
    assert (easy["infra_failed"], easy["infra_causes"], easy["steps"]) == (True, ["scratch_full"], 0)
    assert (medium["infra_failed"], medium["infra_causes"]) == (False, [])
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results))
    assert completed(tmp_path) == {("heuristic", "medium", 0)}  # a resumed run plays easy again
    assert [r["task_id"] for r in report.load([tmp_path])] == ["medium"]
    text = report.report([tmp_path], tmp_path / "report")
    assert "1 of 2 episodes (50.0 %) met an infrastructure failure and are left out of every statistic below (steps by cause: scratch_full 1)" in text
    assert "`easy`" not in text


def test_inference_leaves_the_machine_s_steps_out_and_says_so(own_runtime, full_scratch, capsys, monkeypatch):
    import importlib
    import random

    from env.agents.retry import RetryPolicy
    from env.server.in_process import InProcessDriver

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1]))
    inference = importlib.import_module("inference")
    good_root = own_runtime.sandbox.tmp_root

    class Driver(InProcessDriver):
        """inference.py's WsDriver, in process: the scratch space fills after the reset."""

        def __init__(self, url: str) -> None:
            super().__init__(own_runtime)
            self.client = self

        def state(self) -> dict:
            return self.env.state.model_dump()

        def tools(self) -> list[dict]:
            return []

        def reset(self, task_id: str, seed: int, **options: object) -> dict:
            own_runtime.sandbox.tmp_root = good_root
            obs = super().reset(task_id, seed, **options)
            own_runtime.sandbox.tmp_root = str(full_scratch)
            return obs

    class Agent:
        aliases_used: list = []

        def begin(self, task: dict, obs: dict, rng: random.Random) -> None:
            pass

        def act(self, obs: dict) -> dict:
            return {"action_type": "submit_fix", "fixed_code": GOLD["easy"], "hypothesis": GOOD_HYPOTHESIS["easy"]}

        def usage(self) -> dict[str, int]:
            return {"prompt_tokens": 1, "completion_tokens": 1}

    settings = inference.Settings(api_base="http://model", model="m", token="", env_url="http://env", results_path=Path("unused.json"), profile="default", retry=RetryPolicy())
    episode = inference.play("easy", settings, Driver, Agent)
    out, err = capsys.readouterr()
    assert (episode.steps, episode.rewards, episode.infra_causes) == (0, [], ["scratch_full"] * 3)
    assert out.splitlines() == ["[START] task=easy env=agentdebugger-env model=m", "[END] success=false steps=0 score=0.000 rewards="]
    assert err.count("easy: infrastructure failure (scratch_full), not counted: the server's scratch space is full") == 3


def test_a_run_that_waits_past_the_slot_bound_is_the_machine_s(isolation, catalog):
    from env.sandbox.slots import CpuSlots

    slots = CpuSlots(1, wait_bound_s=0.2)
    holder = slots.claim("another-episode")
    holder.hold()
    started = time.monotonic()
    with pytest.raises(InfraFailure) as raised:
        slots.claim("this-episode").hold()
    assert 0.2 <= time.monotonic() - started < 2.0 and raised.value.cause == "slot_wait"
    assert str(raised.value).startswith("a run waited 0.2 s for one of the server's 1 CPU slots (ENV_SLOT_WAIT_S): the machine is too busy")
    assert slots.queued == 0  # the claim that gave up left the queue
    holder.release()
    assert slots.busy == 0

    runtime = Runtime(catalog, Sandbox(Limits(), isolation), workers=4, cpu_slots=1, secret=TEST_SECRET)
    try:
        env = DebugEnvironment(runtime=runtime)
        env.reset(task_id="easy", seed=0)
        runtime.cpu.wait_bound_s = 0.3
        blocker = runtime.cpu.claim("a-busy-neighbour")
        blocker.hold()  # the only slot, held by another episode for as long as this step may wait
        obs = env.step(submit(GOLD["easy"]))
        blocker.release()
        assert (obs.infra_failed, obs.infra_cause, obs.reward, obs.step_number) == (True, "slot_wait", 0.0, 0)
        again = env.step(submit(GOLD["easy"]))
        assert (again.infra_failed, again.done, again.grader_score) == (False, True, 0.96)
    finally:
        runtime.sandbox.close()


def test_a_trusted_side_out_of_memory_is_the_machine_s(own_runtime, monkeypatch):
    """A MemoryError of the server's own code (the submission runs in its own process, and is at most 64 KiB)."""
    from env.families.classic import episode as classic_episode

    env = DebugEnvironment(runtime=own_runtime)
    env.reset(task_id="easy", seed=0)

    def out_of_memory(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(classic_episode, "judge_on", out_of_memory)
    obs = env.step(submit(GOLD["easy"]))
    assert (obs.infra_failed, obs.infra_cause, obs.step_number, obs.attempts_remaining) == (True, "trusted_memory", 0, 5)
    assert obs.error.startswith("the server ran out of memory while the step 'submit_fix' ran (infrastructure: trusted_memory")


def test_a_run_whose_trusted_side_is_starved_of_the_cpu_is_the_machine_s(isolation, catalog):
    """The thread that judges a submission (it sends the code each request) is starved for real: pinned to one CPU
    with two spinning processes, under SCHED_IDLE. The run's wall clock runs out while that thread waits for the
    CPU (the kernel's schedstat says how long): the machine's failure, not the code's."""
    import sys

    if not Path("/proc/thread-self/schedstat").exists():
        pytest.skip("this kernel keeps no schedstat: starvation of the server's side cannot be told")
    cpu = min(os.sched_getaffinity(0))
    runtime = Runtime(catalog, Sandbox(Limits(wall_seconds=1.5), isolation), workers=4, secret=TEST_SECRET)
    hogs = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))  # noqa: PLW1509
        for _ in range(2)
    ]
    try:
        env = DebugEnvironment(runtime=runtime)
        env.reset(task_id="easy", seed=0)
        answers = []

        def starved_step() -> None:  # its own thread: the priority it gives up is never taken back by another test
            os.sched_setaffinity(0, {cpu})
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))  # this thread runs only when the CPU has nothing else
            answers.append(env.step(submit(GOLD["easy"])))

        worker = threading.Thread(target=starved_step)
        worker.start()
        worker.join(timeout=120)
        for hog in hogs:
            hog.kill()
        (obs,) = answers
        assert (obs.infra_failed, obs.infra_cause, obs.reward, obs.step_number) == (True, "trusted_time", 0.0, 0), obs.error
        assert obs.error.startswith("the run's 1.5 s ran out while the server's side of it waited ")
        again = env.step(submit(GOLD["easy"]))  # not starved, the same fix passes
        assert (again.infra_failed, again.done, again.grader_score) == (False, True, 0.96)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
        runtime.sandbox.close()
