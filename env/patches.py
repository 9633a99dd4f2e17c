"""Unified diffs over a project held as ``{relative path: text}``: apply, make, and locate.

    fixed = apply_patch(files, gold_patch_text)     # raises PatchError on any mismatch
    text = make_patch(files, fixed)                  # `diff --git` text, as SWE-bench stores it
    touched(files, gold_patch_text)                  # [Location(file, function, start, end)]
    changed_lines(files, fixed)                      # the same, per run of changed lines and per function

Parsing and hunk application are whatthepatch's; the strictness (every hunk must apply,
paths must stay inside the project) is ours.
"""

from __future__ import annotations

import ast
import difflib
import posixpath
import re

import whatthepatch
from pydantic import BaseModel

from env.pyparse import parse

Files = dict[str, str]
MAX_NAME_BYTES = 255  # a file name's limit on Linux file systems: a longer one could never be written to a tree


class PatchError(ValueError):
    pass


class Location(BaseModel):
    """Lines of the original file a patch changes, and the function (or class) holding them."""

    file: str
    function: str = ""
    start: int
    end: int


def _clean(path: str | None) -> str | None:
    if path is None or path == "/dev/null":
        return None
    if path.startswith(("a/", "b/")):
        path = path[2:]
    norm = posixpath.normpath(path)
    if norm.startswith(("../", "/")) or norm == "..":
        raise PatchError(f"patch path {path!r} leaves the project")
    if norm == ".":
        raise PatchError(f"patch path {path!r} names no file")
    if "\0" in norm or any(len(part.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES for part in norm.split("/")):
        raise PatchError(f"patch path {path[:80]!r} cannot be a file's path (a NUL, or a name over {MAX_NAME_BYTES} bytes)")
    return norm


_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def _sections(patch: str) -> list[str]:
    """The patch cut into one text per file. whatthepatch reads a plain multi-file diff (``--- a/x`` ... ``--- a/y``
    with no ``diff`` lines between, as ``diff -u`` of single files or an agent writes it) as one file, so the cut is
    made here, by the hunks' own line counts: a removed line reading ``--- `` inside a hunk never starts a file."""
    sections: list[list[str]] = [[]]
    old_left = new_left = 0
    has_header = has_paths = False
    lines = patch.splitlines(keepends=True)
    for index, line in enumerate(lines):
        if old_left > 0 or new_left > 0:  # inside a hunk
            if line.startswith("-"):
                old_left -= 1
            elif line.startswith("+"):
                new_left -= 1
            elif not line.startswith("\\"):  # context ("\ No newline at end of file" counts for neither)
                old_left, new_left = old_left - 1, new_left - 1
            sections[-1].append(line)
            continue
        hunk = _HUNK.match(line)
        if hunk:
            old_left = int(hunk.group(1)) if hunk.group(1) is not None else 1
            new_left = int(hunk.group(2)) if hunk.group(2) is not None else 1
        # a file starts at a `diff` line after another file's header, or at `---`/`+++` after another file's `+++`
        if (line.startswith("diff ") and has_header) or (
            has_paths and line.startswith("--- ") and index + 1 < len(lines) and lines[index + 1].startswith("+++ ")
        ):
            sections.append([])
            has_header = has_paths = False
        has_header = has_header or line.startswith(("diff ", "+++ "))
        has_paths = has_paths or line.startswith("+++ ")
        sections[-1].append(line)
    return ["".join(section) for section in sections if section]


def _diffs(patch: str) -> list:
    try:
        diffs = [d for section in _sections(patch) for d in whatthepatch.parse_patch(section) if d.header is not None]
    except Exception as exc:  # whatthepatch raises its own exception types
        raise PatchError(f"cannot parse the patch: {exc}") from None
    if patch.strip() and not diffs:
        raise PatchError("the patch contains no file changes")
    return diffs


def _join(lines: list[str]) -> str:
    return "\n".join(lines) + "\n" if lines else ""


def apply_patch(files: Files, patch: str, reverse: bool = False) -> Files:
    """The project after ``patch`` (or before it, with ``reverse``); ``files`` is not modified."""
    result = dict(files)
    for diff in _diffs(patch):
        old, new = _clean(diff.header.old_path), _clean(diff.header.new_path)
        # whatthepatch keeps `diff --git` paths even for created or deleted files: read the markers.
        text = diff.text or ""
        if "\n--- /dev/null" in "\n" + text or "\nnew file mode" in "\n" + text:
            old = None
        if "\n+++ /dev/null" in "\n" + text or "\ndeleted file mode" in "\n" + text:
            new = None
        if reverse:
            old, new = new, old
        source = old or new
        if source is None:
            raise PatchError("a file change without a path")
        if old is not None and old not in result:
            raise PatchError(f"the patch changes {old}, which is not in the project")
        original = result.get(old, "") if old else ""
        try:
            lines = whatthepatch.apply_diff(diff, original.splitlines(), reverse=reverse)
        except Exception as exc:
            raise PatchError(f"the patch does not apply to {source}: {exc}") from None
        if old is not None:
            del result[old]
        if new is not None:
            result[new] = _join(list(lines or []))
    _check_tree(result)
    return result


def _check_tree(files: Files) -> None:
    """A project written to disk cannot hold a path as a file and as a directory of another file: refused here, when
    the patch is applied, not where the tree is written (a task's test patch is applied when its folder loads)."""
    directories = {parent for path in files for parent in _parents(path)}
    both = sorted(directories & set(files))
    if both:
        raise PatchError(f"the patch makes {both[0]} both a file and a directory")


def _parents(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def make_patch(before: Files, after: Files) -> str:
    """A ``diff --git`` patch turning ``before`` into ``after`` (empty when they are equal)."""
    chunks = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if old == new:
            continue
        header = [f"diff --git a/{path} b/{path}"]
        if old is None:
            header.append("new file mode 100644")
        elif new is None:
            header.append("deleted file mode 100644")
        body = difflib.unified_diff(
            (old or "").splitlines(keepends=True),
            (new or "").splitlines(keepends=True),
            fromfile=f"a/{path}" if old is not None else "/dev/null",
            tofile=f"b/{path}" if new is not None else "/dev/null",
        )
        text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in body)
        chunks.append("\n".join(header) + "\n" + text)
    return "".join(chunks)


def patched_paths(patch: str) -> list[str]:
    """The files a patch creates, changes or deletes (in the order it names them)."""
    paths = (_clean(d.header.new_path) or _clean(d.header.old_path) for d in _diffs(patch))
    return list(dict.fromkeys(p for p in paths if p is not None))


def touched(files: Files, patch: str) -> list[Location]:
    """Where ``patch`` changes ``files``: line ranges of the original, with their functions."""
    found = []
    for diff in _diffs(patch):
        path = _clean(diff.header.old_path) or _clean(diff.header.new_path)
        if path is None:
            continue
        hunks: dict[int, list[int]] = {}
        for change in diff.changes or []:
            if change.old is None or change.new is None:  # removed or added: anchor to the old side
                anchor = change.old if change.old is not None else _previous_old_line(diff.changes, change)
                hunks.setdefault(change.hunk, []).append(max(1, anchor))
        scopes = _scopes(files.get(path, ""))
        for lines in hunks.values():
            start, end = min(lines), max(lines)
            found.append(Location(file=path, function=_enclosing(scopes, start), start=start, end=end))
    return found


def changed_lines(before: Files, after: Files) -> list[Location]:
    """Every run of changed lines of ``before``, one Location per run and per function it falls in
    (a hunk's context can span two functions; a ``suspect`` names one)."""
    found = []
    for path in sorted(before):
        old, new = before[path].splitlines(), after.get(path, "").splitlines()
        scopes = _scopes(before[path])
        for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
            if tag == "equal":
                continue
            lines = range(i1 + 1, i2 + 1) if i2 > i1 else range(max(1, i1), max(1, i1) + 1)  # an insertion: the line it follows
            runs: dict[str, list[int]] = {}
            for line in lines:
                runs.setdefault(_enclosing(scopes, line), []).append(line)
            found += [Location(file=path, function=f, start=min(ls), end=max(ls)) for f, ls in runs.items()]
    return found


def _previous_old_line(changes: list, target: object) -> int:
    """An added line is located at the original line it follows (1 at the top of a file)."""
    last = 0
    for change in changes:
        if change is target:
            return last or 1
        if change.old is not None:
            last = change.old
    return last or 1


def _scopes(source: str) -> list[tuple[int, int, str]]:
    """(first line, last line, dotted name) of every function and class, outermost first."""
    try:
        tree = parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    scopes = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                scopes.append((child.lineno, child.end_lineno or child.lineno, name))
                visit(child, name + ".")

    visit(tree, "")
    return scopes


def _enclosing(scopes: list[tuple[int, int, str]], line: int) -> str:
    best = ""
    for first, last, name in scopes:
        if first <= line <= last:
            best = name  # later entries are nested deeper
    return best
