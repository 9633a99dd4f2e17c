"""Unified diffs: make, apply (and reverse), locate; bad patches are clear errors."""

from __future__ import annotations

import re

import pytest

from env.patches import Location, PatchError, apply_patch, make_patch, touched

BEFORE = {"pkg/a.py": "def f(x):\n    y = x + 1\n    return y\n\n\ndef g():\n    return 2\n", "README.md": "hi\n"}
AFTER = {"pkg/a.py": "def f(x):\n    y = x + 2\n    return y\n\n\ndef g():\n    return 2\n", "README.md": "hi\n", "pkg/new.py": "N = 1\n"}


def test_make_then_apply_round_trips():
    patch = make_patch(BEFORE, AFTER)
    assert patch.startswith("diff --git a/pkg/a.py b/pkg/a.py\n--- a/pkg/a.py\n+++ b/pkg/a.py\n@@ -1,5 +1,5 @@\n")
    assert "diff --git a/pkg/new.py b/pkg/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/pkg/new.py\n" in patch
    assert apply_patch(BEFORE, patch) == AFTER
    assert apply_patch(AFTER, patch, reverse=True) == BEFORE
    assert make_patch(BEFORE, BEFORE) == ""


def test_deleting_a_file():
    patch = make_patch(AFTER, BEFORE)
    assert "deleted file mode 100644" in patch
    assert apply_patch(AFTER, patch) == BEFORE


def test_touched_names_lines_and_functions():
    assert touched(BEFORE, make_patch(BEFORE, AFTER)) == [
        Location(file="pkg/a.py", function="f", start=2, end=2),
        Location(file="pkg/new.py", function="", start=1, end=1),
    ]


def test_a_patch_that_does_not_fit_is_refused():
    patch = make_patch(BEFORE, AFTER)
    changed = {**BEFORE, "pkg/a.py": BEFORE["pkg/a.py"].replace("x + 1", "x - 1")}
    with pytest.raises(PatchError, match="^the patch does not apply to pkg/a.py"):
        apply_patch(changed, patch)
    with pytest.raises(PatchError, match="^the patch changes pkg/a.py, which is not in the project$"):
        apply_patch({"README.md": "hi\n"}, patch)


def test_paths_may_not_leave_the_project():
    evil = "--- a/../../etc/passwd\n+++ b/../../etc/passwd\n@@ -1 +1 @@\n-x\n+y\n"
    with pytest.raises(PatchError, match="leaves the project"):
        apply_patch({"x": "x\n"}, evil)


def test_a_patch_may_not_name_the_root_or_make_a_file_a_directory():
    """Refused when the patch is applied (a task's patches when its folder loads), not where the tree is written."""
    with pytest.raises(PatchError, match="^patch path '' names no file$"):
        apply_patch({"x": "x\n"}, "--- /dev/null\n+++ b/\n@@ -0,0 +1 @@\n+y\n")
    with pytest.raises(PatchError, match="^the patch makes pkg/a.py both a file and a directory$"):
        apply_patch(BEFORE, "--- /dev/null\n+++ b/pkg/a.py/b.py\n@@ -0,0 +1 @@\n+y\n")
    with pytest.raises(PatchError, match="^the patch makes pkg both a file and a directory$"):
        apply_patch(BEFORE, "--- /dev/null\n+++ b/pkg/sub/..\n@@ -0,0 +1 @@\n+y\n")
    for name, shown in (("te\0st.py", "'tests/te\\x00st.py'"), ("a" * 256 + ".py", repr(("tests/" + "a" * 256)[:80]))):
        with pytest.raises(
            PatchError, match=rf"^patch path {re.escape(shown)} cannot be a file's path \(a NUL, or a name over 255 bytes\)$"
        ):
            apply_patch(BEFORE, f"--- /dev/null\n+++ b/tests/{name}\n@@ -0,0 +1 @@\n+y\n")


def test_garbage_is_not_a_patch():
    with pytest.raises(PatchError, match="^the patch contains no file changes$"):
        apply_patch(BEFORE, "this is not a diff\n")


def test_a_plain_multi_file_diff_changes_every_file():
    """No `diff` lines between files (``diff -u`` of single files, or an agent's patch): each file is its own change,
    and a removed line reading ``--- ...`` inside a hunk never starts a file."""
    before = {"q.sql": "-- old comment\nselect 1;\n", "pkg/a.py": "x = 1\n", "b.txt": "end"}
    patch = (
        "--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1,2 @@\n--- old comment\n++- new comment\n select 1;\n"
        "--- a/pkg/a.py\n+++ b/pkg/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
        "--- b.txt\n+++ b.txt\n@@ -1 +1 @@\n-end\n\\ No newline at end of file\n+end\n"
    )
    assert apply_patch(before, patch) == {"q.sql": "+- new comment\nselect 1;\n", "pkg/a.py": "x = 2\n", "b.txt": "end\n"}
    assert [location.file for location in touched(before, patch)] == ["q.sql", "pkg/a.py", "b.txt"]
