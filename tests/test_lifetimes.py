"""Nothing outlives its parent (issue 33): every command that starts test hosts, sandbox children or fork servers
(the server, ``env.authoring``, ``env.eval``, the validator) is started here as a real process in a session of its own,
twice at once; once its children are busy in a run, one is stopped with SIGTERM (as ``timeout`` does) and the other
with SIGKILL, and every process recorded below either must be gone within seconds. Each start must also sweep the
planted scratch folders of processes that no longer exist and keep every other one.

The busy run is a copy of a bundled repository task whose project code sleeps for two minutes when a test calls it:
before this change, the sandbox child sleeping in it and the forked test host waiting for its answer outlived a
killed command, and the validator's server outlived the validator. Only processes below the commands started here
are counted, never anything else on the machine.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from env.scratch import process_start, scratch_base, sweep
from env.server.local import free_port

ROOT = Path(__file__).resolve().parents[1]
SLOW_TASK = "lt-slow"
SIGNALS = (signal.SIGTERM, signal.SIGKILL)
GONE_WITHIN_S = 5.0
# Two commands starting at once on a shared machine. The validator's server makes its procedural tasks (each validated
# by running its tests, about a second apiece idle) before any run forks: on CI's loaded 2 cores that took over 90 s.
# Only how long the test waits for the start; what it asserts (nothing outlives the kill) is timed by GONE_WITHIN_S.
BUSY_WITHIN_S = 300.0

Ready = Callable[[dict[int, int]], bool]
Command = Callable[[int, Path], tuple[list[str], dict[str, str], Ready]]


@pytest.fixture(scope="module")
def task_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding one repository task whose tests block in the sandbox (``ewma`` sleeps)."""
    folder = tmp_path_factory.mktemp("lifetime-tasks")
    task = folder / SLOW_TASK
    shutil.copytree(ROOT / "tasks" / "repo" / "repo-slice-window", task)
    meta = json.loads((task / "task.json").read_text())
    (task / "task.json").write_text(json.dumps({**meta, "id": SLOW_TASK}))
    source = task / "repo" / "src" / "sensorkit" / "smoothing.py"
    doc = '    """Exponentially weighted moving average, same length as ``values``."""\n'
    assert doc in source.read_text()
    source.write_text(source.read_text().replace(doc, doc + '    __import__("time").sleep(120)\n'))
    return folder


@pytest.fixture
def bases() -> Iterator[dict[int, Path]]:
    """A scratch base (SANDBOX_TMPDIR) for each of the two runs of a command, holding its planted folders."""
    made = {}
    for signum in SIGNALS:
        made[signum] = Path(tempfile.mkdtemp(prefix="adbg-test-lifetimes-", dir=scratch_base()))
        os.chmod(made[signum], 0o711)  # like the real base: out of the sandbox's reach
    yield made
    for root in made.values():
        shutil.rmtree(root, ignore_errors=True)


# -- the planted scratch folders -----------------------------------------------------------------------------------


def plant(base: Path) -> set[str]:
    """Folders a command's start must sweep or keep; returns those to keep."""
    never = int(Path("/proc/sys/kernel/pid_max").read_text()) + 1  # no process can have this PID
    me, started = os.getpid(), process_start(os.getpid())
    assert started is not None
    swept = {
        f"adbg-{never}-abcdefgh",  # named before the start time was recorded
        f"adbg-{never}-12345-abcdefgh",  # a process killed outright
        f"adbg-{me}-{started + 1}-abcdefgh",  # this PID, but a process started at another time: a reused PID
    }
    kept = {
        f"adbg-{me}-{started}-abcdefgh",  # this live process's
        f"adbg-{me}-abcdefgh",  # a live PID, without a start time
        "adbg-notapid-abcdefgh",  # no PID in the name
        f"adbg-{never}-abc",  # not named by mkdtemp
        f"adbg-demo-{never}-abcdefgh",  # another prefix: the demo's sweep, not this one
    }
    for name in swept | kept:
        (base / name).mkdir()
    (base / f"adbg-{never}-link1234").symlink_to(base / f"adbg-{me}-abcdefgh")  # a link is never followed nor removed
    kept.add(f"adbg-{never}-link1234")
    if os.geteuid() == 0:
        other = base / f"adbg-{never}-nobody12"
        other.mkdir()
        os.chown(other, 65534, 65534)  # another user's: never ours to remove
        kept.add(other.name)
    return kept


def assert_swept(base: Path, kept: set[str], pids: set[int]) -> None:
    """What is left is what was to be kept, and the folders of the command's own processes."""
    own = tuple(f"adbg-{pid}-" for pid in pids)
    assert {p.name for p in base.iterdir() if not p.name.startswith(own)} == kept


# -- processes -----------------------------------------------------------------------------------------------------


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent, start time) of ``pid``, or None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    fields = stat[stat.rindex(b")") + 2 :].split()
    return fields[0].decode(), int(fields[1]), int(fields[19])


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def parent_of(pid: int) -> int | None:
    """``pid``'s parent (None once it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat[stat.rindex(")") + 2 :].split()[1])  # after the command name (which may hold spaces): state, ppid


def descendants(pid: int) -> dict[int, int]:
    """Every process below ``pid``: pid -> start time (so that a reused PID is not taken for a survivor)."""
    found: dict[int, int] = {}
    todo = [pid]
    while todo:
        try:
            tasks = list(Path(f"/proc/{todo.pop()}/task").iterdir())
        except OSError:  # it ended since its parent listed it (a run finishing): nothing is below it any more
            continue
        for task in tasks:
            try:
                children = [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
            for child in children:
                stat = _stat(child)
                if child not in found and stat is not None:
                    found[child] = stat[2]
                    todo.append(child)
    return found


def survivors(recorded: dict[int, int]) -> dict[int, str]:
    left = {}
    for pid, started in recorded.items():
        stat = _stat(pid)
        if stat is not None and stat[2] == started and stat[0] != "Z":  # a zombie has ended (this init may not reap)
            left[pid] = cmdline(pid)
    return left


def forked_host(tree: dict[int, int]) -> bool:
    """A test host forked by the warm host for one run, and a sandbox child: the run is under way."""
    hosts = {pid for pid in tree if "adbg_host.pytest_host" in cmdline(pid)}
    forked = any((_stat(pid) or ("", 0, 0))[1] in hosts for pid in hosts)
    return forked and any("sandbox/inside/child.py" in cmdline(pid) for pid in tree)


def running_host(tree: dict[int, int]) -> bool:
    """A test host running one run (forked by the warm host, or started for the run: a validation's runs each draw a
    hash seed, and a test process of their own), and a sandbox child: the run is under way."""
    started = any("adbg_host.pytest_host" in cmdline(pid) and "--serve" not in cmdline(pid) for pid in tree)
    return (started and any("sandbox/inside/child.py" in cmdline(pid) for pid in tree)) or forked_host(tree)


def launch(args: list[str], env: dict[str, str]) -> subprocess.Popen:
    """The command in a session of its own (so that the test can kill what it left, whatever happens)."""
    err = tempfile.TemporaryFile()
    proc = subprocess.Popen(args, cwd=ROOT, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    proc.stderr = err  # type: ignore[assignment]  # Popen keeps no handle on a file it was given: busy() reads it
    return proc


def busy(proc: subprocess.Popen, ready: Ready, deadline: float) -> None:
    """Wait until ``ready`` says the command's children are busy."""
    while time.monotonic() < deadline:
        if ready(descendants(proc.pid)):
            return
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.stderr.seek(0)  # type: ignore[union-attr]
    raise AssertionError(f"{proc.args} did not get busy children (exit {proc.poll()}): {proc.stderr.read()[-3000:]!r}")  # type: ignore[union-attr]


def stopped(proc: subprocess.Popen, tree: dict[int, int], signum: int) -> int:
    """Wait for the signalled command and everything recorded below it to be gone; its exit status."""
    code = proc.wait(timeout=20)
    deadline = time.monotonic() + GONE_WITHIN_S
    while survivors(tree) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = survivors(tree)
    for pid in left:  # in sessions of their own: the test's cleanup of the command's group would miss them
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    assert left == {}, f"outlived their parent ({signal.Signals(signum).name}): {left}"
    return code


def both(bases: dict[int, Path], command: Command) -> dict[int, tuple[subprocess.Popen, dict[int, int]]]:
    """Two runs of ``command`` at once, each with its planted scratch base: checks what each start swept, stops one
    with SIGTERM and one with SIGKILL, and checks that nothing below either survives. Their processes and records."""
    kept = {signum: plant(base) for signum, base in bases.items()}
    commands = {signum: command(signum, base) for signum, base in bases.items()}
    procs = {signum: launch(args, env) for signum, (args, env, _) in commands.items()}
    try:
        deadline = time.monotonic() + BUSY_WITHIN_S
        for signum, proc in procs.items():
            busy(proc, commands[signum][2], deadline)
        time.sleep(0.5)  # the runs reach the sleep
        runs = {signum: (proc, descendants(proc.pid)) for signum, proc in procs.items()}
        for signum, (proc, tree) in runs.items():
            assert_swept(bases[signum], kept[signum], {proc.pid, *tree})
        for signum, proc in procs.items():
            os.kill(proc.pid, signum)  # the command alone, not its group
        codes = {signum: stopped(proc, tree, signum) for signum, (proc, tree) in runs.items()}
    finally:  # whatever the verdict, nothing of ours is left running
        for proc in procs.values():
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert codes[signal.SIGKILL] == -signal.SIGKILL
    return runs


def check_scratch(bases: dict[int, Path], runs: dict[int, tuple[subprocess.Popen, dict[int, int]]]) -> None:
    """SIGTERM: the command removed its own folder at exit. SIGKILL: it could not, and the next start sweeps it."""
    for signum, (proc, _) in runs.items():
        own = [p for p in bases[signum].iterdir() if p.name.startswith(f"adbg-{proc.pid}-")]
        if signum == signal.SIGTERM:
            assert own == []
        else:
            assert len(own) == 1 and sweep(bases[signum]) == own


# -- the commands --------------------------------------------------------------------------------------------------


def test_env_tasks_takes_its_test_hosts_and_sandbox_children_with_it(task_dir, bases):
    runs = both(bases, lambda signum, base: (
        [sys.executable, "-m", "env.authoring", "validate", str(task_dir / SLOW_TASK), "--runs", "1"],
        {"SANDBOX_TMPDIR": str(base)},
        running_host,
    ))  # fmt: skip
    assert runs[signal.SIGTERM][0].returncode == 128 + signal.SIGTERM  # exited through SystemExit: atexit ran
    check_scratch(bases, runs)


def test_env_eval_takes_its_children_with_it(task_dir, bases, tmp_path):
    runs = both(bases, lambda signum, base: (
        [sys.executable, "-m", "env.eval", "run", "--agent", "oracle", "--tasks", SLOW_TASK, "--runs", "1", "--out", str(tmp_path / str(signum))],
        {"SANDBOX_TMPDIR": str(base), "ENV_TASK_DIRS": str(task_dir)},
        forked_host,
    ))  # fmt: skip
    assert runs[signal.SIGTERM][0].returncode == 128 + signal.SIGTERM
    check_scratch(bases, runs)


def running_tests(port: int) -> Ready:
    """Once the server answers: an episode of the slow task whose tests run (and block) in a thread of this test."""
    url, asked = f"http://127.0.0.1:{port}", threading.Event()

    def ready(tree: dict[int, int]) -> bool:
        if not asked.is_set():
            try:
                httpx.get(f"{url}/health", timeout=1)
            except httpx.HTTPError:
                return False
            asked.set()
            episode = httpx.post(f"{url}/reset", json={"task_id": SLOW_TASK, "seed": 1}, timeout=30).json()["observation"]["episode_id"]

            def run_tests() -> None:  # answered only when the server goes
                with contextlib.suppress(httpx.HTTPError):
                    httpx.post(f"{url}/step", json={"action": {"action_type": "run_tests"}, "episode_id": episode}, timeout=60)

            threading.Thread(target=run_tests, daemon=True).start()
        return forked_host(tree)

    return ready


def test_the_server_takes_its_children_with_it(task_dir, bases):
    ports = {signum: free_port() for signum in bases}
    readies = {signum: running_tests(port) for signum, port in ports.items()}
    runs = both(bases, lambda signum, base: (
        [sys.executable, "-m", "env.server"],
        # SIGTERM: uvicorn finishes the step in flight first, which ends by the run's wall clock (shortened here);
        # SIGKILL: a wall clock well beyond GONE_WITHIN_S, so that only dying with the server can end the run in time.
        {"SANDBOX_TMPDIR": str(base), "ENV_TASK_DIRS": str(task_dir), "HOST": "127.0.0.1", "PORT": str(ports[signum]), "ENV_DRAIN_SECONDS": "0",
         "SANDBOX_WALL_SECONDS": "4" if signum == signal.SIGTERM else "60"},
        readies[signum],
    ))  # fmt: skip
    assert runs[signal.SIGTERM][0].returncode == 0  # its own handler (env.server.signals): a normal exit
    check_scratch(bases, runs)


def test_the_validator_takes_its_server_and_the_server_s_children_with_it(bases):
    servers: dict[int, int] = {}

    def server_working(signum: int, base: Path) -> Ready:
        def ready(tree: dict[int, int]) -> bool:
            for pid in tree:
                if "-m env.server" in cmdline(pid) and descendants(pid):  # a fork server or test host of its own
                    # and the validator working too: its scratch folder is made with its first task (sooner or later
                    # than the server's child, by load and by whether the procedural store is warm)
                    if any(base.glob(f"adbg-{parent_of(pid)}-*")):
                        servers[signum] = pid
                        return True
            return False

        return ready

    runs = both(bases, lambda signum, base: ([sys.executable, "validator.py"], {"SANDBOX_TMPDIR": str(base)}, server_working(signum, base)))
    assert runs[signal.SIGTERM][0].returncode == 128 + signal.SIGTERM
    for signum, (proc, _) in runs.items():
        # Either way the server was killed outright (on SIGTERM the validator kills it first, so that the checks in
        # flight fail at once): its folder is left for the next start to sweep; the validator's own only on SIGKILL.
        expected = {servers[signum], proc.pid} if signum == signal.SIGKILL else {servers[signum]}
        assert sorted(int(p.name.split("-")[1]) for p in sweep(bases[signum])) == sorted(expected)


# -- in this process: what dying with the parent must not break ----------------------------------------------------


def test_a_fork_server_started_from_a_thread_that_ends_lives_on(isolation):
    """PR_SET_PDEATHSIG follows the thread that forked: a zygote started by a worker thread that then ends (as
    idle server threads do) must not die with it. ``spawn`` starts it on a thread that lives as long as the process."""
    from env.sandbox.limits import Limits
    from env.sandbox.runner import Sandbox

    sandbox = Sandbox(Limits(), isolation)
    try:
        answers: list[object] = []

        def first_run() -> None:
            with sandbox.start("def f():\n    return 1\n", "m.py", "m") as run:
                answers.append(run.call("f"))

        worker = threading.Thread(target=first_run)
        worker.start()
        worker.join()
        zygote = sandbox.zygote.pid if sandbox.zygote else None
        assert answers == [1] and zygote is not None
        time.sleep(0.3)  # a signal sent at the thread's exit has arrived by now
        assert (_stat(zygote) or ("X",))[0] not in ("X", "Z")
        with sandbox.start("def f():\n    return 2\n", "m.py", "m") as run:
            assert run.call("f") == 2
        assert sandbox.zygote is not None and sandbox.zygote.pid == zygote  # the same one: it never failed
    finally:
        sandbox.close()


def test_a_replaced_zygote_leaves_its_runs_in_flight_to_finish(isolation, monkeypatch):
    """A zygote replaced after its quota of runs says "stop" and waits for its runs in flight, however long (their own
    deadlines end them): its children die with it now, so killing it after a grace would kill them too. The grace
    (shortened here) is for ``close`` alone."""
    from env.sandbox import zygote
    from env.sandbox.limits import Limits
    from env.sandbox.runner import Sandbox

    monkeypatch.setenv("SANDBOX_ZYGOTE_RUNS", "1")
    monkeypatch.setattr(zygote, "CLOSE_GRACE_S", 0.1)
    sandbox = Sandbox(Limits(), isolation)
    try:
        with sandbox.start("import time\ndef f():\n    time.sleep(0.5)\n    return 3\n", "m.py", "m") as first:
            old = sandbox.zygote.pid if sandbox.zygote else None
            with sandbox.start("def g():\n    return 4\n", "m.py", "m") as second:  # replaces the zygote
                assert second.call("g") == 4
            assert sandbox.zygote is not None and sandbox.zygote.pid != old
            assert first.call("f") == 3
    finally:
        sandbox.close()


def test_a_program_run_with_die_with_caller_dies_with_the_process():
    """The test environments' builds (uv): a killed process takes the program it was waiting for with it."""
    script = (
        "import subprocess, sys, threading, time\n"
        "from env.sandbox.lifetime import die_with_caller\n"
        "threading.Thread(target=subprocess.run, args=(['sleep', '60'],), kwargs={'preexec_fn': die_with_caller()}, daemon=True).start()\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        # the child is listed from its fork on, still showing python's command line until its exec: wait for the exec
        tree = descendants(proc.pid)
        while [cmdline(pid) for pid in tree] != ["sleep 60 "] and time.monotonic() < deadline:
            time.sleep(0.05)
            tree = descendants(proc.pid)
        assert [cmdline(pid) for pid in tree] == ["sleep 60 "]
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(5) == -signal.SIGKILL
        deadline = time.monotonic() + GONE_WITHIN_S
        while survivors(tree) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert survivors(tree) == {}
    finally:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
