"""Grading assets are never readable by sandboxed code, on every tier a run may start at: a classic submission,
a script (``run_script``'s path: the debugging sandbox, pytest and the installed packages readable) and a shell
command (``run_bash``) each try to read every asset."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from env.sandbox.isolation import probe_isolation
from env.sandbox.limits import Limits
from env.sandbox.runner import Sandbox
from env.sandbox.shell import ShellLimits, ShellRunner
from env.scratch import scratch_root
from env.secret import ServerSecret
from env.tasks.registry import TaskRegistry

TIERS = {"full": {"uid"}, "landlock+seccomp": {"netns", "uid"}}


@pytest.fixture(scope="module")
def assets(registry: TaskRegistry) -> Iterator[list[str]]:
    """Every kind of asset, made real on this host: a secret file as an in-process evaluation keeps it, too."""
    other = Path(tempfile.mkdtemp(prefix="adbg-ws-", dir=scratch_root()))  # stands for another episode's workspace
    (other / "app.py").write_text("SECRET_WORK = 1\n")
    secrets_dir = Path(tempfile.mkdtemp(prefix="adbg-test-secret-"))
    ServerSecret.for_directory(secrets_dir)
    found = [
        str(registry.get("medium").folder / "fix.py"),
        str(registry.get("hard").folder / "fix.py"),
        str(registry.get("repo-cache-stale").folder / "gold.patch"),
        str(registry.get("proc-easy-test-0").folder / "gold.patch"),
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
