"""`bench/bench_server.py --against REF`: the commit it compares with is checked out beside this tree and removed after;
a name that is no commit is refused before anything starts. (The figures themselves are the bench's to print.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from env.timing import PHASES

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


def test_the_phase_table_is_written_between_its_markers_and_a_file_without_them_is_refused(tmp_path):
    from bench.bench_server import KINDS, PHASES_BEGIN, PHASES_END, between_markers, phases_markdown

    table = {kind: {name: 0.0 for name in PHASES} | {"fork": 1.25, "total": 3.5} for kind in KINDS}
    block = phases_markdown(table, 20, "abc1234", "2026-12-06", (0.5, 1.25))
    assert block.splitlines()[0] == "Measured 2026-12-06 at abc1234 (load average 0.5 before, 1.2 after), 20 steps of each kind, each in a new episode:"
    assert block.splitlines()[2] == "| phase | easy `submit_fix` | medium `submit_fix` | hard `submit_fix` | repository `submit` | `query_context` | `view_file` |"
    assert block.splitlines()[4:] == ["| `fork` | 1.25 | 1.25 | 1.25 | 1.25 | 1.25 | 1.25 |", "| `total` | 3.50 | 3.50 | 3.50 | 3.50 | 3.50 | 3.50 |"]
    doc = f"# before\n{PHASES_BEGIN}\nold table\n{PHASES_END}\nafter\n"
    assert between_markers(doc, block, "doc.md") == f"# before\n{PHASES_BEGIN}\n{block}\n{PHASES_END}\nafter\n"
    for broken in ("no markers\n", f"{PHASES_BEGIN}\nonly the first\n", doc + doc):
        with pytest.raises(SystemExit, match=r"^doc\.md has no single pair of markers to write the table between: <!-- phases"):
            between_markers(broken, block, "doc.md")


def test_the_docs_tables_are_the_scripts():
    from bench.bench_server import FIGURES_BEGIN, FIGURES_END, PHASES_BEGIN, PHASES_END

    text = (ROOT / "docs" / "performance.md").read_text()
    for begin, end in ((PHASES_BEGIN, PHASES_END), (FIGURES_BEGIN, FIGURES_END)):
        assert text.count(begin) == 1 and text.count(end) == 1
    block = text.split(PHASES_BEGIN)[1].split(PHASES_END)[0].strip().splitlines()
    assert block[0].startswith("Measured ") and "steps of each kind" in block[0]
    assert block[2].startswith("| phase | easy `submit_fix` |") and block[-1].startswith("| `total` |")
    figures = text.split(FIGURES_BEGIN)[1].split(FIGURES_END)[0].strip().splitlines()
    assert figures[0].startswith("Measured ") and "round(s):" in figures[0] and figures[2] == "| figure | measured |"
    assert figures[4].startswith("| easy `submit_fix` p50 / p99 | ") and figures[-1].startswith("| clean easy episodes per second, 1 → 8 sessions | ")


def test_the_headline_figures_are_written_with_the_originals_beside_them():
    from bench.bench_server import FIGURES_BEGIN, FIGURES_END, between_markers, figures_markdown

    m = {"easy_p50": 17.84, "easy_p99": 23.3, "hard_p50": 127.1, "hard_p99": 151.5, "health_p99": 23.8, "health_easy_p99": 13.0,
         "rate_1": 36.3, "rate_8": 40.2, "dirty": 0}  # fmt: skip
    block = figures_markdown(m, 3, "abc1234", "2026-12-07", (0.4, 3.9))
    assert block.splitlines()[0] == "Measured 2026-12-07 at abc1234 (load average 0.4 before, 3.9 after), the median of 3 round(s):"
    assert block.splitlines()[4] == "| easy `submit_fix` p50 / p99 | 17.8 / 23.3 ms (70 ms) |"
    assert block.splitlines()[-1] == "| clean easy episodes per second, 1 → 8 sessions | 36.3 → 40.2, 0 with cross-talk (≈ 14/s for one session of the original) |"
    doc = f"x\n{FIGURES_BEGIN}\nold\n{FIGURES_END}\ny\n"
    assert between_markers(doc, block, "d.md", (FIGURES_BEGIN, FIGURES_END)) == f"x\n{FIGURES_BEGIN}\n{block}\n{FIGURES_END}\ny\n"
