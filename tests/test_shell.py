"""run_bash: a shell in the workspace, isolated (env.sandbox.shell), and the tool around it (env.tools.shell)."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest

import env.sandbox.shell as shell_module
from env.families.catalog import TaskCatalog
from env.sandbox.isolation import LayerState
from env.sandbox.readable import PROJECT_ROOT, shell_paths
from env.sandbox.runner import RefusedToRun
from env.sandbox.seccomp import compile_filter
from env.sandbox.shell import ShellLimits, ShellRunner
from env.scratch import scratch_root
from env.tools.base import TOOLS, ToolError
from env.tools.shell import RunBash, RunBashArgs
from env.workspace import Templates, Workspace

CALC = "def add(a, b):\n    return a + b\n"
TEST_CALC = (
    "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_add_negative():\n    assert add(-1, -1) == -3\n"
)


@pytest.fixture(scope="module")
def shell(isolation) -> ShellRunner:
    return ShellRunner(isolation, ShellLimits())


@pytest.fixture(scope="module")
def quick(isolation) -> ShellRunner:
    """A one-second wall clock, for the tests that provoke a timeout."""
    return ShellRunner(isolation, ShellLimits(timeout_seconds=1))


def _scratch_dir(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix, dir=scratch_root()))


@pytest.fixture()
def workspace() -> Iterator[Path]:
    root = _scratch_dir("adbg-test-ws-")
    (root / "calc.py").write_text(CALC)
    (root / "test_calc.py").write_text(TEST_CALC)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _running(marker: str) -> str:
    return subprocess.run(["pgrep", "-af", marker], capture_output=True, text=True, check=False).stdout


def _left_running(marker: str, grace: float = 5.0) -> str:
    """What still runs under ``marker`` once the SIGKILLs sent without a PID namespace have landed. Nothing waits for
    those processes to exit (with a namespace the runner waits for its pid 1): a killed process exits when the
    scheduler next runs it, which on a loaded machine, at the sandbox's nice 10, can come after ``pgrep`` looked (the
    likely cause of two failures in four full runs with four test workers on 2 cores, where pgrep listed them). A
    process that escaped the kill is still listed after ``grace``: every one left behind here sleeps 30 s or more."""
    deadline = time.monotonic() + grace
    while (left := _running(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def ctx_for(shell: ShellRunner, root: Path, task: object | None = None) -> SimpleNamespace:
    return SimpleNamespace(task=task or SimpleNamespace(), workspace=SimpleNamespace(root=root), runtime=SimpleNamespace(shell=shell))


# -- commands and their results ------------------------------------------------------------------


def test_echo_ls_and_exit_status(shell, workspace):
    result = shell.run(workspace, "echo hello; ls; echo oops >&2; exit 3")
    assert result.output == "hello\ncalc.py\ntest_calc.py\noops\n"
    assert (result.exit_code, result.timed_out, result.output_truncated, result.note) == (3, False, False, "")


def test_python_and_pytest_on_a_tiny_project(shell, workspace):
    assert shell.run(workspace, "python -c 'import calc; print(calc.add(2, 3))'").output == "5\n"
    result = shell.run(workspace, "python -m pytest -q 2>&1 | tail -1; exit ${PIPESTATUS[0]}")
    assert re.fullmatch(r"1 failed, 1 passed in [\d.]+s\n", result.output), result.output
    assert result.exit_code == 1


def test_a_record_pipe_on_fd_3_is_read_apart_from_the_output(shell, workspace):
    """The server's own commands (trace_report's tracer) get fd 3, read into ``record``: nothing printed reaches it,
    and a command run without one (every run_bash) has no fd 3 at all."""
    command = "echo out; echo rec >&3; echo err >&2; python -c 'import os; os.write(3, b\"py\"); os.write(1, b\"stdout\\n\")'"
    result = shell.run(workspace, command, record=True)
    assert (result.output, result.record, result.record_truncated, result.exit_code) == ("out\nerr\nstdout\n", b"rec\npy", False, 0)
    plain = shell.run(workspace, "echo out; echo rec >&3")
    assert (plain.output, plain.record, plain.exit_code) == ("out\nbash: line 1: 3: Bad file descriptor\n", None, 1)


def test_a_record_pipe_keeps_its_cap(shell, workspace):
    """Past the cap the pipe is closed: the writer stops (EPIPE), it never waits for the wall clock."""
    result = shell.run(workspace, f"head -c {4 * shell_module.RECORD_BYTES} /dev/zero >&3; echo done", record=True)
    assert result.record == bytes(shell_module.RECORD_BYTES) and result.record_truncated
    assert (result.output, result.timed_out) == ("done\n", False) and result.duration_ms < 5000


def test_reopening_stdout_keeps_earlier_output(shell, workspace):
    # The output is a pipe: `> /dev/stdout` (O_TRUNC) cannot erase what came before.
    assert shell.run(workspace, "echo a; echo b > /dev/stdout; echo c >> /dev/stderr").output == "a\nb\nc\n"


def test_files_written_by_the_command_stay_readable_by_the_server(shell, workspace):
    command = "echo new > made.txt && sed -i 's/a + b/a - b/' calc.py && mkdir sub && echo x > sub/f && chmod 000 made.txt sub"
    assert shell.run(workspace, command).exit_code == 0
    assert (workspace / "made.txt").read_text() == "new\n"
    assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"
    assert (workspace / "sub" / "f").read_text() == "x\n"


def test_a_workspace_stays_the_servers_between_commands(shell, catalog):
    """Whatever uid a command runs as, the workspace goes back to the server's uid, closed to every other (0700)."""
    ws = Workspace.create(catalog.get("repo-cache-stale"), Templates())
    try:
        assert (ws.root.stat().st_mode & 0o777, ws.root.stat().st_uid) == (0o700, os.geteuid())
        assert shell.run(ws.root, "mkdir made && touch made/here").exit_code == 0
        owners = {os.lstat(os.path.join(d, n)).st_uid for d, dirs, files in os.walk(ws.root) for n in dirs + files}
        assert owners == {os.geteuid()} and ws.root.stat().st_uid == os.geteuid()
        assert (ws.root / "made" / "here").exists()
    finally:
        ws.close()


def test_private_tmp_dir_is_outside_the_workspace_and_removed(shell, workspace):
    result = shell.run(workspace, 'echo "$TMPDIR"; echo "$HOME"; touch "$TMPDIR/scratch" && echo ok')
    tmp, home, ok = result.output.splitlines()
    assert (tmp, ok) == (home, "ok")
    assert Path(tmp).parent == Path(scratch_root()) and not Path(tmp).is_relative_to(workspace)
    assert not Path(tmp).exists()
    assert sorted(p.name for p in workspace.iterdir()) == ["calc.py", "test_calc.py"]


def test_output_over_the_cap_is_cut_and_marked(isolation, workspace):
    runner = ShellRunner(isolation, ShellLimits(output_bytes=1000))
    result = runner.run(workspace, "head -c 5000 /dev/zero | tr '\\0' a")
    assert result.output == "a" * 750 + "\n... [output cut: 4000 bytes not shown] ...\n" + "a" * 250
    assert (result.output_truncated, result.exit_code) == (True, 0)


def test_an_endless_output_is_stopped(isolation, workspace):
    runner = ShellRunner(isolation, ShellLimits(output_bytes=1000, file_bytes=100_000))
    result = runner.run(workspace, "yes")
    assert result.exit_code == 141  # SIGPIPE, once the server stopped reading
    assert result.note == "the output passed 100000 bytes, so its pipe was closed"
    assert result.output_truncated and result.output.startswith("y\ny\n")


def test_many_threads_at_once(shell, workspace):
    with ThreadPoolExecutor(6) as pool:
        results = list(pool.map(lambda i: shell.run(workspace, f"echo {i}; python -c 'print({i} * 2)'"), range(6)))
    assert [r.output for r in results] == [f"{i}\n{i * 2}\n" for i in range(6)]


# -- what the command cannot reach ---------------------------------------------------------------


def test_cannot_read_outside_the_workspace(shell, workspace):
    outside = _scratch_dir("adbg-test-outside-")
    try:
        canary = outside / "canary.txt"
        canary.write_text("canary-" + secrets.token_hex(8))
        gold = PROJECT_ROOT / "tasks" / "repo" / "repo-slice-window" / "gold.patch"
        for path in (canary, gold):
            result = shell.run(workspace, f"cat {path}")
            assert result.output == f"cat: {path}: Permission denied\n"
            assert result.exit_code == 1
            assert path.read_text() not in result.output
        result = shell.run(workspace, f"ls {PROJECT_ROOT}; ls {outside}; echo x > {outside}/written")
        assert result.output == (
            f"ls: cannot open directory '{PROJECT_ROOT}': Permission denied\n"
            f"ls: cannot open directory '{outside}': Permission denied\n"
            f"bash: line 1: {outside}/written: Permission denied\n"
        )
        assert not (outside / "written").exists()
    finally:
        shutil.rmtree(outside)


def test_no_project_tree_in_the_read_only_paths():
    granted = shell_paths()
    assert not any(PROJECT_ROOT.is_relative_to(p) for p in granted)  # neither the tree nor a parent of it
    venv = Path(sys.prefix).resolve()  # inside the project here, and that is all of it that is granted
    assert all(Path(p).is_relative_to(venv) for p in granted if Path(p).is_relative_to(PROJECT_ROOT))
    # Were the project inside /usr, /usr would be granted entry by entry, around it.
    fake = Path("/usr/share/doc")
    granted = shell_paths(fake)
    assert "/usr" not in granted and "/usr/share/doc" not in granted and "/usr/bin" in granted


def test_no_network(shell, workspace):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.3)
    port = server.getsockname()[1]
    try:
        command = (
            f"python -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), timeout=2)' 2>&1 | tail -1; "
            f"python -c 'import socket; socket.socket(socket.AF_INET6)' 2>&1 | tail -1; "
            f"(exec 3<>/dev/tcp/127.0.0.1/{port}); echo status=$?"
        )
        result = shell.run(workspace, command)
        assert result.output == (
            "PermissionError: [Errno 13] Permission denied\n"
            "PermissionError: [Errno 13] Permission denied\n"
            "bash: socket: Permission denied\n"
            f"bash: line 1: /dev/tcp/127.0.0.1/{port}: Permission denied\n"
            "status=1\n"
        )
        with pytest.raises(socket.timeout):
            server.accept()  # nothing ever connected
    finally:
        server.close()


def test_cannot_create_links_or_namespaces(shell, workspace):
    command = (
        "ln -s calc.py soft; ln calc.py hard; mkfifo fifo; "
        'python -c \'import os; os.symlink("calc.py", "soft2")\' 2>&1 | tail -1; '
        "unshare -Ur true"
    )
    result = shell.run(workspace, command)
    assert result.output == (
        "ln: failed to create symbolic link 'soft': Operation not permitted\n"
        "ln: failed to create hard link 'hard' => 'calc.py': Operation not permitted\n"
        "mkfifo: cannot create fifo 'fifo': Operation not permitted\n"
        "PermissionError: [Errno 1] Operation not permitted: 'calc.py' -> 'soft2'\n"
        "unshare: unshare failed: Operation not permitted\n"
    )
    assert sorted(p.name for p in workspace.iterdir()) == ["calc.py", "test_calc.py"]


def test_the_servers_environment_stays_out(shell, workspace, monkeypatch):
    secret = "server-secret-" + secrets.token_hex(8)
    monkeypatch.setenv("ADBG_SHELL_TEST_SECRET", secret)
    result = shell.run(workspace, f"env; cat /proc/1/environ; cat /proc/{os.getpid()}/environ", env={"EXTRA": "1"})
    assert secret not in result.output
    assert f"cat: /proc/{os.getpid()}/environ: Permission denied\n" in result.output
    assert "cat: /proc/1/environ: Permission denied\n" in result.output
    names = {line.split("=", 1)[0] for line in result.output.splitlines() if "=" in line and not line.startswith("cat:")}
    assert names == {
        "PATH", "HOME", "TMPDIR", "LANG", "PYTHONDONTWRITEBYTECODE", "PYTEST_ADDOPTS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
        "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_TERMINAL_PROMPT", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL",
        "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EXTRA", "PWD", "SHLVL", "_",
    }  # fmt: skip


def test_seccomp_variant_keeps_the_default_filter():
    default = compile_filter()
    if default is None:
        pytest.skip("libseccomp is not available")
    assert compile_filter(allow_processes=False) == default
    assert compile_filter(allow_processes=True) not in (None, default)


# -- time, processes and cleanup -----------------------------------------------------------------


def test_the_command_has_its_own_pid_namespace(shell, workspace):
    if not shell.layers["netns"] and os.geteuid() != 0:
        pytest.skip("no PID namespace on this host")
    # pid 1 is the namespace's init; bash is its first child. Signals work as anywhere else.
    assert shell.run(workspace, "echo $$; sleep 5 & kill -TERM $!; wait $!; echo $?").output == "2\n143\n"


def test_a_sleep_beyond_the_timeout_is_killed(quick, workspace):
    started = time.monotonic()
    result = quick.run(workspace, "echo started; sleep 30")
    assert (result.output, result.exit_code, result.timed_out, result.note) == ("started\n", None, True, "timed out after 1 s")
    assert 1000 <= result.duration_ms < 3000 and time.monotonic() - started < 3


def test_orphans_and_daemons_are_gone_when_run_returns(shell, workspace):
    marker = "adbg-orphan-" + secrets.token_hex(4)
    command = f"(exec -a {marker} sleep 30 &) ; setsid bash -c 'exec -a {marker} sleep 30' & nohup sleep 30 & echo started"
    assert shell.run(workspace, command).output == "started\n"
    assert _running(marker) == ""


def test_daemons_are_gone_after_a_timeout(isolation, workspace):
    # Three seconds, not one: on a loaded machine the daemons must have started before the command times out.
    runner = ShellRunner(isolation, ShellLimits(timeout_seconds=3))
    marker = "adbg-daemon-" + secrets.token_hex(4)
    seen = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set() and not seen:
            if _running(marker):
                seen.append(True)
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        result = runner.run(
            workspace, f"setsid bash -c 'exec -a {marker} sleep 30' & (trap '' TERM HUP; exec -a {marker} sleep 31) & sleep 30"
        )
    finally:
        done.set()
        watcher.join()
    assert result.timed_out and seen == [True]  # they were running during the command
    assert _running(marker) == ""


@pytest.mark.parametrize("cgroup", [True, False], ids=["with-cgroup", "without-cgroup"])
def test_process_group_fallback_without_a_pid_namespace(isolation, workspace, monkeypatch, cgroup):
    if not cgroup:
        monkeypatch.setattr(shell_module.PidsCgroup, "create", classmethod(lambda cls, limit: None))
    elif shell_module.pids_cgroup_parent() is None:
        pytest.skip("no pids cgroup on this host")
    runner = ShellRunner(isolation, ShellLimits(timeout_seconds=1), pid_namespace=False)
    how = "its process group and its pids cgroup" if cgroup else "its process group (and Landlock's signal scope, if any)"
    if runner.layers["landlock"] < 6:  # without a PID namespace only Landlock's signal scope confines kill(-1)
        assert runner.refusal.startswith("refusing to run shell commands: this host cannot guarantee processes_confined")
        with pytest.raises(RefusedToRun):
            runner.run(workspace, "echo hi")
        return
    marker = "adbg-fallback-" + secrets.token_hex(4)
    leave = f"(exec -a {marker} sleep 30 &); setsid bash -c 'exec -a {marker} sleep 31' & setsid -f bash -c 'trap \"\" TERM; exec -a {marker} sleep 32'"
    try:
        result = runner.run(workspace, f"echo $$; {leave}; echo done")
        pid, done = result.output.split()
        assert pid != "2" and done == "done"
        assert result.note == f"no PID namespace on this host: processes left behind were killed through {how}"
        assert f"{marker} 30" not in _left_running(marker)
        assert _left_running(marker) == ""
        result = runner.run(workspace, f"{leave}; sleep 30")  # the same at the deadline
        assert result.note == f"timed out after 1 s; no PID namespace on this host: processes left behind were killed through {how}"
        assert f"{marker} 30" not in _left_running(marker)
        assert _left_running(marker) == ""
    finally:
        subprocess.run(["pkill", "-f", marker], check=False)


def test_a_fork_bomb_is_contained(isolation, workspace):
    runner = ShellRunner(isolation, ShellLimits(timeout_seconds=2, processes=24))
    if not runner.process_limit:
        pytest.skip("nothing limits processes here (root server, no pids cgroup, no separate uid): not running a fork bomb")

    def count() -> int:
        return sum(1 for p in Path("/proc").iterdir() if p.name.isdigit())

    before, peak, done = count(), [0], threading.Event()

    def watch() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], count())
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        result = runner.run(workspace, ":(){ :|:& };:; sleep 10")
    finally:
        done.set()
        watcher.join()
    assert result.timed_out and result.note == "timed out after 2 s"
    assert peak[0] - before <= 24 + 16  # the run's own processes, plus whatever else the host started meanwhile
    assert subprocess.run(["true"], check=False).returncode == 0  # the server can still start processes
    assert runner.run(workspace, "echo ok").output == "ok\n"


def test_refuses_to_run_without_isolation(isolation, workspace):
    unsafe = isolation.model_copy(update={"can_execute": False, "reason": "no kernel isolation layer here"})
    runner = ShellRunner(unsafe)
    with pytest.raises(RefusedToRun, match="^no kernel isolation layer here$"):
        runner.run(workspace, "echo hi")
    with pytest.raises(ToolError) as info:
        RunBash().run(ctx_for(runner, workspace), RunBashArgs(command="echo hi"))
    assert str(info.value) == "run_bash: commands cannot run on this server: no kernel isolation layer here"


def test_refuses_to_run_without_landlock(isolation, workspace, monkeypatch):
    monkeypatch.delenv("SANDBOX_ALLOW_UNSAFE", raising=False)
    layers = {**isolation.layers, "landlock": LayerState(active=False, detail="not on this host")}
    runner = ShellRunner(isolation.model_copy(update={"layers": layers}))
    with pytest.raises(RefusedToRun) as info:
        runner.run(workspace, "echo hi")
    assert str(info.value) == (
        "refusing to run shell commands: this host cannot guarantee "
        "read_confined (no read outside the allowed system paths and the run's own directory) needs Landlock (Linux 5.13 or later, "
        "enabled in the LSM list); write_confined (no write outside the run's own directory) needs Landlock (Linux 5.13 or later, "
        "enabled in the LSM list); processes_confined (no signal, ptrace or /proc access to any process outside the run) needs "
        "seccomp and Landlock, with Landlock ABI 6 (Linux 6.12) or user namespaces for a PID namespace. "
        "Set SANDBOX_ALLOW_UNSAFE=1 only for local development"
    )


def test_refuses_to_run_where_nothing_keeps_signals_inside_the_command(isolation, workspace):
    """Landlock before ABI 6 does not scope signals; without a PID namespace a command could signal the server."""
    old_landlock = isolation.model_copy(update={"landlock_abi": 5})
    assert ShellRunner(old_landlock).refusal == ""  # a PID namespace of its own keeps them in
    runner = ShellRunner(old_landlock, pid_namespace=False)
    with pytest.raises(RefusedToRun, match="^refusing to run shell commands: this host cannot guarantee processes_confined "):
        runner.run(workspace, "echo hi")
    assert ShellRunner(isolation.model_copy(update={"landlock_abi": 6}), pid_namespace=False).refusal == ""


# -- the tool ------------------------------------------------------------------------------------


def test_tool_output_and_data(shell, workspace):
    result = RunBash().run(ctx_for(shell, workspace), RunBashArgs(command="echo hi; exit 2"))
    assert re.fullmatch(r"hi\n\[exit status 2, \d+ ms\]", result.output), result.output
    assert set(result.data) == {"exit_code", "timed_out", "output_truncated", "duration_ms"}
    assert (result.data["exit_code"], result.data["timed_out"], result.data["output_truncated"]) == (2, False, False)
    assert re.fullmatch(
        r"\(no output\)\n\[exit status 0, \d+ ms\]", RunBash().run(ctx_for(shell, workspace), RunBashArgs(command="true")).output
    )


def test_tool_reports_a_timeout(quick, workspace):
    result = RunBash().run(ctx_for(quick, workspace), RunBashArgs(command="echo waiting; sleep 5"))
    assert result.output == "waiting\n[timed out after 1 s]"
    assert (result.data["exit_code"], result.data["timed_out"]) == (None, True)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"command": "echo \0"}, "run_bash: field 'command': the command contains a NUL character"),
        ({"command": "echo \ud800"}, "run_bash: field 'command': the command is not valid UTF-8 text (it contains a lone surrogate)"),
        ({"command": ""}, "run_bash: field 'command': String should have at least 1 character"),
        ({"command": "x" * 10_001}, "run_bash: field 'command': String should have at most 10000 characters"),
        ({"command": "ls", "cwd": "/"}, "run_bash: unknown field 'cwd'"),
        ({}, "run_bash: missing field 'command'"),
    ],
)
def test_tool_arguments(raw, message):
    with pytest.raises(ToolError) as info:
        TOOLS["run_bash"].parse(raw)
    assert str(info.value) == message


def test_git_in_a_repository_workspace(shell):
    task = TaskCatalog.builtin().get("repo-slice-window")  # PYTHONPATH=src
    workspace = Workspace.create(task, Templates())
    try:
        ctx = ctx_for(shell, workspace.root, task)
        tool = RunBash()
        out = tool.run(ctx, RunBashArgs(command="git status; git log --format=%s")).output
        assert re.fullmatch(
            r"On branch main\nnothing to commit, working tree clean\nRepository snapshot\n\[exit status 0, \d+ ms\]", out
        ), out
        out = tool.run(ctx, RunBashArgs(command="python -m pytest -q 2>&1 | tail -1")).output
        # the workspace holds the visible tests only: the held-out ones are never in it
        assert re.match(rf"{len(task.visible_fail_to_pass)} failed, {len(task.visible_pass_to_pass)} passed in [\d.]+s\n", out), out
        out = tool.run(ctx, RunBashArgs(command="echo '# note' >> README.md && git status --short")).output
        assert re.fullmatch(r" M README.md\n\[exit status 0, \d+ ms\]", out), out
        with pytest.raises(ToolError) as info:
            tool.run(ctx, RunBashArgs(command="git log --all"))
        assert str(info.value) == (
            "refused by the git guard: `git log --all` reaches history beyond the workspace's single commit; "
            "the workspace has one commit (HEAD) and no other refs"
        )
    finally:
        workspace.close()
