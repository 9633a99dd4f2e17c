"""A Runtime owns what it keeps between episodes: its verdicts' test trees and warm test hosts, its workspaces'
templates. Two runtimes share none of it, and ``close()`` leaves nothing behind (issue 52)."""

from __future__ import annotations

import os
from pathlib import Path

from env.runtime import Runtime
from env.sandbox.limits import Limits
from env.sandbox.runner import Sandbox
from env.verdict.outcome import resolution
from env.verdict.repo_judge import run_tests, tree_of
from env.verdict.testenv import ensure


def test_a_runtime_owns_its_verdict_state_and_closes_it(isolation, catalog):
    task = catalog.get("repo-cache-stale")
    runtime = Runtime(catalog, Sandbox(Limits(), isolation), workers=2)
    verdict = run_tests(runtime.sandbox, task, task.gold_files, hosts=runtime.verdict_hosts)
    assert resolution(verdict.outcomes, task.fail_to_pass, task.pass_to_pass) == "FULL", verdict.error
    tree, template = Path(tree_of(task, True, runtime.verdict_hosts)), runtime.templates.get(task)
    server = runtime.verdict_hosts.host(ensure(task.requirements))
    assert server._proc is not None and server._proc.poll() is None  # the warm host its run used
    pid = server._proc.pid
    other = Runtime(catalog, Sandbox(Limits(), isolation), workers=2)
    try:
        assert Path(tree_of(task, True, other.verdict_hosts)) != tree and other.templates.get(task) != template
        assert other.verdict_hosts.host(ensure(task.requirements)) is not server
        assert tree_of(task, True) != str(tree)  # nor does the process's, for verdicts outside any runtime
    finally:
        other.close()
    assert tree.is_dir() and template.is_dir()
    runtime.close()
    assert not tree.exists() and not template.exists()
    assert not os.path.exists(f"/proc/{pid}")  # stopped and reaped
