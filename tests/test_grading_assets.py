"""Grading assets are never readable by sandboxed code, on every tier a run may start at: a classic submission,
a script (``run_script``'s path: the debugging sandbox, pytest and the installed packages readable), the
debugger's ``debug_eval``, a shell command (``run_bash``) and a repository's own code during ``run_tests`` each try to
read every asset."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from env.debugger.session import DebugError, DebugSession, Project
from env.families.catalog import TaskCatalog
from env.families.repo.family import REPO
from env.models import DebugAction
from env.project import load_repo_task
from env.runtime import Runtime
from env.sandbox.isolation import probe_isolation
from env.sandbox.limits import Limits
from env.sandbox.runner import Sandbox
from env.sandbox.shell import ShellLimits, ShellRunner
from env.scratch import scratch_root
from env.secret import ServerSecret
from tests import repo_fixture

TIERS = {"full": {"uid"}, "landlock+seccomp": {"netns", "uid"}}


@pytest.fixture(scope="module")
def assets(catalog: TaskCatalog) -> Iterator[list[str]]:
    """Every kind of asset, made real on this host: a secret file as an in-process evaluation keeps it, too."""
    other = Path(tempfile.mkdtemp(prefix="adbg-ws-", dir=scratch_root()))  # stands for another episode's workspace
    (other / "app.py").write_text("SECRET_WORK = 1\n")
    secrets_dir = Path(tempfile.mkdtemp(prefix="adbg-test-secret-"))
    ServerSecret.for_directory(secrets_dir)
    found = [
        str(catalog.get("medium").folder / "fix.py"),
        str(catalog.get("hard").folder / "fix.py"),
        str(catalog.get("easy").folder / "held_out.py"),  # the held-out cases' categories and how they are drawn
        str(catalog.get("medium").folder / "held_out.py"),
        str(catalog.get("medium").folder / "task.json"),  # the gold hypothesis, suspect and mechanism
        str(catalog.get("repo-cache-stale").folder / "task.json"),  # the named tests and the gold suspect
        str(catalog.get("repo-cache-stale").folder / "gold.patch"),
        str(catalog.get("repo-cache-stale").folder / "test_patch.diff"),  # the held-out tests
        str(catalog.get("repo-cache-stale").folder / "overfit.patch"),
        str(catalog.get("proc-easy-test-0").folder / "gold.patch"),
        str(catalog.get("proc-easy-test-0").folder / "task.json"),
        str(other / "app.py"),
        str(secrets_dir / "secret"),
        f"/proc/{os.getpid()}/environ",
    ]
    for path in found:
        assert os.path.exists(path), path
    yield found
    shutil.rmtree(other, ignore_errors=True)
    shutil.rmtree(secrets_dir, ignore_errors=True)


def tier_isolation(tier: str):
    iso = probe_isolation(disabled=TIERS[tier], allow_unsafe=False)
    if not iso.can_execute:
        pytest.skip(f"this host cannot run code at the {tier} tier: {iso.reason}")
    return iso


def reader(paths: list[str]) -> str:
    return "\n".join(
        f"try:\n    open({p!r}, 'rb').read()\n    print('READ', {p!r})\nexcept OSError as exc:\n    print('DENIED', type(exc).__name__)"
        for p in paths
    )


@pytest.mark.parametrize("tier", sorted(TIERS))
def test_a_submission_reads_no_asset(assets, tier):
    sandbox = Sandbox(Limits(), tier_isolation(tier), warm=False)
    with sandbox.start(reader(assets) + "\ndef f():\n    return 1\n", "m.py", "m") as run:
        assert run.call("f") == 1
    assert run.result.output.splitlines() == ["DENIED PermissionError"] * len(assets)


@pytest.mark.parametrize("tier", sorted(TIERS))
def test_a_script_reads_no_asset(assets, tier):
    sandbox = Sandbox(Limits(), tier_isolation(tier), warm=False, debug=True)
    with sandbox.start_debug({"probe.py": reader(assets)}, [""], {}, {"kind": "script", "path": "probe.py"}, [], False) as run:
        pass  # the script runs to its end at the start of the session
    lines = [line for line in run.result.output.splitlines() if line.startswith(("READ", "DENIED"))]
    assert lines == ["DENIED PermissionError"] * len(assets)


@pytest.mark.parametrize("tier", sorted(TIERS))
def test_a_shell_command_reads_no_asset(assets, tier):
    workspace = Path(tempfile.mkdtemp(prefix="adbg-test-ws-", dir=scratch_root()))
    try:
        shell = ShellRunner(tier_isolation(tier), ShellLimits())
        if shell.refusal:
            pytest.skip(shell.refusal)
        result = shell.run(workspace, "; ".join(f"cat {p} >/dev/null 2>&1 && echo READ {p} || echo DENIED" for p in assets))
        assert result.output.splitlines() == ["DENIED"] * len(assets)
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


@pytest.mark.parametrize("tier", sorted(TIERS))
def test_debug_eval_reads_no_asset(assets, tier):
    """The debugger's expression runs in the stopped program's frame, in the same sandbox child as the script."""
    sandbox = Sandbox(Limits(), tier_isolation(tier), warm=False, debug=True)
    project = Project(files=lambda: {"probe.py": "x = 1\nx += 1\n"}, paths=[""], environ={}, tests=[])
    session = DebugSession(sandbox, project)
    try:
        stop = session.start(script="probe.py")
        assert stop.data["frame"]["line"] == 1, stop.text
        for path in assets:
            with pytest.raises(DebugError) as denied:
                session.evaluate(f"open({path!r}, 'rb').read()")
            assert "PermissionError" in str(denied.value), (path, str(denied.value))
        assert session.evaluate("len('abc') + 39").data["value"] == {"type": "int", "repr": "42"}  # the session still answers
    finally:
        session.close()


@pytest.mark.parametrize("tier", sorted(TIERS))
def test_a_project_file_reads_no_asset_during_run_tests(assets, tier, catalog, tmp_path):
    """A repository task's own code, imported by its tests under the verdict, tries every asset and another live
    episode's workspace."""
    runtime = Runtime(catalog, Sandbox(Limits(), tier_isolation(tier), warm=False), workers=2)
    task = load_repo_task(repo_fixture.write_task(tmp_path))
    episode, other = REPO.episode(runtime, task, seed=3, episode_id="ep"), REPO.episode(runtime, task, seed=4, episode_id="other")
    try:
        targets = [*assets, str(other.workspace.root / "shop" / "cart.py")]
        assert os.path.exists(targets[-1])
        probe = reader(targets)
        episode.step(DebugAction(action_type="replace_text", path="shop/cart.py", old_text="STOCK = {", new_text=probe + "\nSTOCK = {"))
        obs = episode.step(DebugAction(action_type="run_tests"))
        assert obs.error is None
        assert "READ" not in obs.tool_output, obs.tool_output
        assert obs.tool_output.count("DENIED PermissionError") >= len(targets)
    finally:
        episode.close()
        other.close()
        runtime.debug_sandbox.close()
