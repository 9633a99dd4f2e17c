"""The workspace quota (issue 47, finding 6): bytes and files an episode's workspace may hold, whatever writes them.

Every ``run_bash`` test runs at both tiers: ``tmpfs`` (the namespace layer: the command runs on a copy of the
workspace in a tmpfs of the quota's size, copied back only if it fits) and ``server count`` (no user namespaces, as in
Docker: the server counts while the command runs, stops it past the quota and puts its copy back). At the kernel's
tier the figures in the messages are exact; at the server's they are how far the command got before it was stopped.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from env.sandbox.isolation import Isolation, LayerState
from env.sandbox.limits import Limits, WorkspaceQuota
from env.sandbox.quota import Usage, measure
from env.sandbox.runner import Sandbox
from env.sandbox.shell import QuotaExceeded, ShellLimits, ShellRunner, already_over
from env.scratch import scratch_root
from env.tools.base import ToolError
from env.tools.shell import RunBash, RunBashArgs

MiB = 1024 * 1024
QUOTA = WorkspaceQuota(bytes=4 * MiB, files=100)
CALC = "def add(a, b):\n    return a + b\n"
PREFIX = (
    "the command filled the workspace's quota of 4194304 bytes (SANDBOX_WORKSPACE_BYTES) and 100 files and directories "
    "(SANDBOX_WORKSPACE_FILES), its temporary directory counted with it (it reached "
)
UNDONE = "), so its changes were undone: the workspace is as it was before the command"


def without_user_namespaces(isolation: Isolation) -> Isolation:
    """This host as Docker's default profile leaves it: no user (so no mount) namespaces."""
    layers = {**isolation.layers, "network_namespace": LayerState(active=False, detail="simulated: no user namespaces")}
    return isolation.model_copy(update={"layers": layers})


@pytest.fixture(scope="module")
def root() -> Iterator[Path]:
    """The runner's own scratch directory: everything a command may leave on the host is under it."""
    path = Path(tempfile.mkdtemp(prefix="adbg-test-quota-", dir=scratch_root()))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _runner(isolation: Isolation, tier: str, root: Path, **limits: float) -> ShellRunner:
    if tier == "tmpfs" and not isolation.netns:
        pytest.skip("no namespace layer on this host: the kernel's quota needs a mount namespace")
    iso = isolation if tier == "tmpfs" else without_user_namespaces(isolation)
    runner = ShellRunner(iso, ShellLimits(quota=QUOTA, **limits), tmp_root=str(root))
    if runner.refusal:
        pytest.skip(f"run_bash is refused at this tier here: {runner.refusal}")
    assert runner.quota_held_by == tier
    return runner


@pytest.fixture(scope="module", params=["tmpfs", "server count"])
def shell(request, isolation, root) -> ShellRunner:
    return _runner(isolation, request.param, root, timeout_seconds=5)


@pytest.fixture()
def workspace(root) -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="adbg-test-ws-", dir=root))
    (path / "calc.py").write_text(CALC)
    (path / "notes").mkdir()
    (path / "notes" / "todo.txt").write_text("fix add\n")
    yield path
    shutil.rmtree(path, ignore_errors=True)


BEFORE = Usage(bytes=8192, files=3)  # calc.py and notes/todo.txt (a page each), and notes/


def snapshot(path: Path) -> dict[str, str | None]:
    """{relative path: text, or None for a directory}: what the workspace holds."""
    return {p.relative_to(path).as_posix(): None if p.is_dir() else p.read_text() for p in sorted(path.rglob("*"))}


def host_leftovers(root: Path, workspace: Path) -> list[str]:
    """What the runner left on the host besides the workspace (its temporary directories and copies go at once)."""
    return sorted(p.name for p in root.iterdir() if p != workspace)


def fill(shell: ShellRunner, workspace: Path, command: str) -> QuotaExceeded:
    with pytest.raises(QuotaExceeded) as info:
        shell.run(workspace, command)
    return info.value


def assert_undone(error: QuotaExceeded, shell: ShellRunner, workspace: Path, root: Path, exact: str | None) -> None:
    """The command filled the quota: the error names it, the workspace is as before, nothing is left on the host."""
    if shell.quota_held_by == "tmpfs" and exact is not None:
        assert str(error) == PREFIX + exact + UNDONE
    else:
        assert str(error).startswith(PREFIX) and str(error).endswith(UNDONE), str(error)
    assert snapshot(workspace) == {"calc.py": CALC, "notes": None, "notes/todo.txt": "fix add\n"}
    assert measure([workspace]) == BEFORE
    assert host_leftovers(root, workspace) == []


# -- run_bash, at both tiers -------------------------------------------------------------------------------------------


def test_many_small_files_stop_at_the_file_quota(shell, workspace, root):
    error = fill(shell, workspace, 'python -c \'for i in range(5000): open("f%d" % i, "w").close()\'; echo exit $?')
    assert_undone(error, shell, workspace, root, "8192 bytes in 100 files and directories")
    if shell.quota_held_by == "tmpfs":  # the kernel refused the 98th new file: 3 were there, and the rest are the 97
        output = error.result.output
        assert "OSError: [Errno 28] No space left on device: 'f97'" in output and output.endswith("exit 1\n")


def test_one_big_write_stops_at_the_byte_quota(shell, workspace, root):
    result = fill(shell, workspace, "head -c 3M /dev/zero > a; head -c 3M /dev/zero > b; echo done")
    # a: 3 MiB; b: what was left of the 4 MiB (1 MiB less the two pages already used)
    assert_undone(result, shell, workspace, root, "4194304 bytes in 5 files and directories")


def test_a_sparse_file_counts_its_size(shell, workspace, root):
    """Holes take no page of the tmpfs, but copied back (or read by the server) the file is its size."""
    result = fill(shell, workspace, "truncate -s 5M sparse && du -k sparse")
    assert_undone(result, shell, workspace, root, f"{5 * MiB + 8192} bytes in 4 files and directories")


def test_nested_directories_count_as_files(shell, workspace, root):
    result = fill(shell, workspace, "mkdir -p $(printf 'd%d/' $(seq 150))")
    assert_undone(result, shell, workspace, root, "8192 bytes in 100 files and directories")


def test_the_temporary_directory_counts_with_the_workspace(shell, workspace, root):
    result = fill(shell, workspace, 'echo kept > kept.txt; head -c 5M /dev/zero > "$TMPDIR/big"; echo done')
    assert_undone(result, shell, workspace, root, "4194304 bytes in 5 files and directories")


@pytest.mark.parametrize(
    "start",
    [
        "(for i in $(seq 20000); do : > bg$i; done) &",
        "setsid bash -c 'for i in $(seq 20000); do : > bg$i; done' &",
        "nohup bash -c 'for i in $(seq 200); do head -c 1M /dev/zero > bg$i; done' > /dev/null 2>&1 & disown;",
    ],
    ids=["background-job", "setsid", "nohup-disown"],
)
def test_a_background_writer_is_bounded_and_stops_with_the_command(shell, workspace, root, start):
    """The writer runs on after the foreground is done; it fills the quota before the command returns, and writes
    nothing once it has returned (every process of the command is gone)."""
    result = fill(shell, workspace, f"{start} sleep 1; echo returned")
    assert_undone(result, shell, workspace, root, None)
    time.sleep(0.3)
    assert measure([workspace]) == BEFORE and host_leftovers(root, workspace) == []


def test_the_host_never_holds_more_than_the_quota_while_a_command_writes(shell, workspace, root):
    """200 MiB written as fast as the machine goes: on the host, the workspace and the command's temporary directory
    never pass the quota (the kernel's tier: the host copy never changes at all) or pass it by what the command
    writes between two counts (the server's tier, docs/sandbox.md "Workspace quota": a few MiB here; the bound below
    leaves room for a loaded machine and still catches a count that never stopped the command)."""
    peak, done = [0], threading.Event()

    def watch() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], measure([root]).bytes)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        result = fill(shell, workspace, "for i in $(seq 200); do head -c 1M /dev/zero > f$i; done")
    finally:
        done.set()
        watcher.join()
    assert_undone(result, shell, workspace, root, None)
    if shell.quota_held_by == "tmpfs":
        assert peak[0] == BEFORE.bytes
    else:
        assert peak[0] <= QUOTA.bytes + 64 * MiB, peak[0]


def test_a_workspace_already_over_its_quota_runs_nothing(shell, workspace, root):
    (workspace / "data.bin").write_bytes(b"x" * (5 * MiB))
    error = fill(shell, workspace, "touch ran")
    assert (
        str(error)
        == already_over(QUOTA, Usage(bytes=5 * MiB + 8192, files=4))
        == (
            "the workspace already holds 5251072 bytes in 4 files and directories, more than its quota of 4194304 bytes "
            "(SANDBOX_WORKSPACE_BYTES) and 100 files and directories (SANDBOX_WORKSPACE_FILES), so the command did not run"
        )
    )
    assert not (workspace / "ran").exists() and host_leftovers(root, workspace) == []


def test_the_tool_reports_the_quota_as_an_error_and_the_next_command_runs(shell, workspace, root):
    ctx = SimpleNamespace(task=SimpleNamespace(), workspace=SimpleNamespace(root=workspace), runtime=SimpleNamespace(shell=shell))
    with pytest.raises(ToolError) as info:
        RunBash().run(ctx, RunBashArgs(command="echo new > made.txt; mkdir -p $(printf 'd%d/' $(seq 150))"))
    message = str(info.value)
    assert message.startswith("run_bash: " + PREFIX) and message.endswith(UNDONE)
    if shell.quota_held_by == "tmpfs":
        assert message == "run_bash: " + PREFIX + "12288 bytes in 100 files and directories" + UNDONE  # made.txt: a page
    result = RunBash().run(ctx, RunBashArgs(command="echo new > made.txt && cat made.txt"))
    assert result.output.startswith("new\n[exit status 0, ") and (workspace / "made.txt").read_text() == "new\n"


# -- the kernel's tier: what only a tmpfs can show ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def kernel(isolation, root) -> ShellRunner:
    return _runner(isolation, "tmpfs", root, timeout_seconds=1)


def test_a_command_that_filled_the_quota_and_cleaned_up_keeps_its_changes(kernel, workspace, root):
    result = kernel.run(workspace, "head -c 5M /dev/zero > a; rm a; echo kept > kept.txt; cat kept.txt")
    assert result.output == "head: error writing 'standard output': No space left on device\nkept\n"
    assert result.exit_code == 0
    assert (workspace / "kept.txt").read_text() == "kept\n" and not (workspace / "a").exists()
    assert host_leftovers(root, workspace) == []


def test_a_timed_out_command_keeps_its_changes_and_its_quota(kernel, workspace, root):
    result = kernel.run(workspace, "echo kept > kept.txt; head -c 5M /dev/zero > a; rm a; sleep 30")
    assert result.output == "head: error writing 'standard output': No space left on device\n"
    assert result.timed_out
    assert (workspace / "kept.txt").read_text() == "kept\n"
    error = fill(kernel, workspace, "echo more > more.txt; head -c 5M /dev/zero > a; sleep 30")
    assert error.result.timed_out
    assert str(error) == PREFIX + "4194304 bytes in 6 files and directories" + UNDONE
    assert sorted(snapshot(workspace)) == ["calc.py", "kept.txt", "notes", "notes/todo.txt"]


def test_changes_are_copied_back_exactly(kernel, workspace, root):
    """The command runs on the quota's tmpfs; only what changed is written back, with its mode and times; what the
    command removed goes."""
    os.utime(workspace / "calc.py", ns=(1_000_000_000, 1_000_000_000))
    command = (
        "sed -i 's/a + b/a - b/' calc.py && rm -r notes && mkdir -p pkg/sub && echo x > pkg/sub/m.py && "
        "chmod 755 pkg/sub/m.py && chmod 500 pkg && touch -d @2000000000 pkg/sub/m.py && stat -f -c '%b %S' ."
    )
    result = kernel.run(workspace, command)
    assert (result.output, result.exit_code) == ("1024 4096\n", 0)  # it ran on the quota's tmpfs: 4 MiB
    assert snapshot(workspace) == {"calc.py": "def add(a, b):\n    return a - b\n", "pkg": None, "pkg/sub": None, "pkg/sub/m.py": "x\n"}
    assert (workspace / "pkg" / "sub" / "m.py").stat().st_mode & 0o777 == 0o755
    assert (workspace / "pkg" / "sub" / "m.py").stat().st_mtime_ns == 2_000_000_000 * 10**9
    assert (workspace / "pkg").stat().st_mode & 0o777 == 0o500
    (workspace / "pkg").chmod(0o700)


# -- the server's count, and the other writers -------------------------------------------------------------------------


def test_a_hard_link_counts_as_a_file_and_its_bytes_once(tmp_path):
    (tmp_path / "a").write_bytes(b"x" * 5000)
    os.link(tmp_path / "a", tmp_path / "b")
    (tmp_path / "d").mkdir()
    with open(tmp_path / "d" / "sparse", "wb") as handle:
        handle.truncate(3 * MiB)
    used = measure([tmp_path])
    assert (used.files, used.bytes - 3 * MiB) == (4, max(5000, (tmp_path / "a").stat().st_blocks * 512))


def test_the_count_stops_once_over_the_quota(tmp_path):
    for i in range(500):
        (tmp_path / f"f{i}").touch()
    assert measure([tmp_path], WorkspaceQuota(bytes=MiB, files=10)) == Usage(bytes=0, files=11)


def test_the_quota_is_a_setting(monkeypatch):
    monkeypatch.setenv("SANDBOX_WORKSPACE_BYTES", "1000000")
    monkeypatch.setenv("SANDBOX_WORKSPACE_FILES", "50")
    assert ShellLimits.from_env().quota == WorkspaceQuota(bytes=1_000_000, files=50)
    monkeypatch.delenv("SANDBOX_WORKSPACE_BYTES")
    monkeypatch.delenv("SANDBOX_WORKSPACE_FILES")
    assert ShellLimits.from_env().quota == WorkspaceQuota() == WorkspaceQuota(bytes=64 * MiB, files=10_000)


def test_a_run_directory_holds_at_most_its_file_count(isolation, tmp_path):
    """A test run, a script or a classic submission: its directory's tmpfs has as many inodes as ``disk_files``
    (an empty file takes no page, so without it a run could fill the host's memory with inodes)."""
    if not isolation.netns:
        pytest.skip("no namespace layer on this host: the run directory is not a tmpfs")
    code = (
        "import os\n\ndef fill():\n    made = 0\n    try:\n        while made < 5000:\n"
        "            open('empty%d' % made, 'w').close()\n            made += 1\n"
        "    except OSError as exc:\n        return [exc.errno, sum(1 + len(d) + len(f) for _, d, f in os.walk('.')) - 1]\n"
        "    return [0, made]\n"
    )
    sandbox = Sandbox(Limits(disk_files=50), isolation, tmp_root=str(tmp_path))
    try:
        with sandbox.start(code, "probe.py", "probe") as run:
            assert run.call("fill") == [errno.ENOSPC, 50]
    finally:
        sandbox.close()


# -- the file tools ----------------------------------------------------------------------------------------------------


def test_the_file_tools_refuse_a_write_past_the_quota(runtime, catalog, isolation, monkeypatch):
    """create_file, edit and replace_text count what the workspace would hold after the write, directories included;
    a write up to the quota, to the page, is fine."""
    from env.families.repo.family import REPO
    from env.models import DebugAction

    episode = REPO.episode(runtime, catalog.get("repo-two-file-fix"), seed=1, episode_id="quota-tools")
    try:
        root = episode.workspace.root
        used = measure([root])  # the task's files, its .git included
        quota = WorkspaceQuota(bytes=used.bytes + 16 * 4096, files=used.files + 2)
        monkeypatch.setattr(runtime, "shell", ShellRunner(isolation, ShellLimits(quota=quota)))
        limits = f"{quota.bytes} bytes (SANDBOX_WORKSPACE_BYTES) and {quota.files} files and directories (SANDBOX_WORKSPACE_FILES)"

        def act(**fields):
            return episode.step(DebugAction(**fields))

        obs = act(action_type="create_file", path="a/b/new.txt", content="hi\n")  # three more: a, a/b and the file
        assert obs.error == (
            f"writing 'a/b/new.txt' would take the workspace past its quota of {limits}: "
            f"it would hold {used.bytes + 4096} bytes in {used.files + 3} files and directories"
        )
        assert not (root / "a").exists() and not obs.done
        assert act(action_type="create_file", path="a/new.txt", content="hi\n").error is None  # two more: at the quota
        obs = act(action_type="edit", path="a/new.txt", start_line=1, end_line=1, new_text="x" * (17 * 4096 - 1))
        assert obs.error == (
            f"writing 'a/new.txt' would take the workspace past its quota of {limits}: "
            f"it would hold {used.bytes + 17 * 4096} bytes in {used.files + 2} files and directories"
        )
        assert (root / "a" / "new.txt").read_text() == "hi\n"
        obs = act(action_type="replace_text", path="a/new.txt", old_text="hi", new_text="x" * (16 * 4096 - 1))
        assert obs.error is None
        assert measure([root]) == Usage(bytes=quota.bytes, files=quota.files)
        obs = act(action_type="create_file", path="one_more.txt", content="")
        assert obs.error == (
            f"writing 'one_more.txt' would take the workspace past its quota of {limits}: "
            f"it would hold {quota.bytes} bytes in {quota.files + 1} files and directories"
        )
    finally:
        episode.close()
