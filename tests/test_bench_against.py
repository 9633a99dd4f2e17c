"""`bench/bench_server.py --against REF`: the commit it compares with is checked out beside this tree and removed after;
a name that is no commit is refused before anything starts. (The figures themselves are the bench's to print.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_server import worktree  # noqa: E402


def listed() -> str:
    return subprocess.run(["git", "worktree", "list", "--porcelain"], cwd=ROOT, capture_output=True, text=True, check=True).stdout


def test_the_commit_compared_with_is_checked_out_apart_and_removed_after():
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    with worktree("HEAD") as (tree, sha):
        assert sha == head
        assert tree != ROOT and (tree / "env" / "server" / "app.py").is_file()
        assert f"worktree {tree}\n" in listed()
        shown = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=tree, capture_output=True, text=True, check=True).stdout.strip()
        assert shown == head
    assert not tree.exists() and not tree.parent.exists()
    assert f"worktree {tree}\n" not in listed()


def test_a_name_that_is_no_commit_is_refused_naming_it():
    with pytest.raises(SystemExit, match=r"^--against no-such-ref-here: not a commit of this repository \(fatal: "):
        with worktree("no-such-ref-here"):
            pytest.fail("no worktree for a name that is no commit")
