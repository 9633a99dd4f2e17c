"""A release's own words about what it changed: its section of the changelog its sdist ships.

    entry(files, "3.1.3")           # the text under 3.1.3's heading in CHANGES.rst (CHANGELOG.md, HISTORY.txt, NEWS ...), or ""
    entry(files, "3.0.4", "3.0.2")  # the sections of every release after 3.0.2 up to 3.0.4 (3.0.3 was withdrawn from PyPI)
    section(text, "3.1.3")          # one section, from one changelog's text

Where: files named CHANGES, CHANGELOG, HISTORY or NEWS (any case; ``.rst``, ``.md``, ``.txt``, ``.markdown`` or no
extension) at the project's root, then in ``docs/`` or ``doc/``; the first one holding a section for the version wins.
A heading is a short line (at most ``MAX_HEADING`` characters) that is a markdown heading (``#``), has an rst underline
below it, or begins with a version (``1.2.3 (2024-01-10)``, ``v1.2.3``, ``Version 1.2.3``, ``[1.2.3]``); its version is
the first version it names. The section is what lies between the version's heading and the next heading naming any
version, cut to ``MAX_LINES`` lines and ``MAX_CHARS`` characters (a changelog entry, not the whole history). Given the
release before (``after``), the entry holds the sections of every release after it, each under its version: a release
PyPI no longer lists (withdrawn) may have been the one that made the change.
"""

from __future__ import annotations

import re

from env.patches import Files

MAX_HEADING = 100
MAX_LINES = 40
MAX_CHARS = 3000
NAMES = re.compile(r"^(changes|changelog|history|news)(\.(rst|md|txt|markdown))?$", re.I)
FOLDERS = ("", "docs/", "doc/")
_VERSION = re.compile(r"(?<![\w.])v?(\d+(?:\.\d+)+(?:(?:a|b|rc|\.post|\.dev)\d+)?)(?![\w]|\.\d)", re.I)
_UNDERLINE = re.compile(r"^\s*([=\-~^*+#\"'`])\1{2,}\s*$")
_LEADING = re.compile(r"^[\[*\-\s]*(?:version|release)?\s*v?(?=\d+\.\d)", re.I)  # what may come before a heading's version


def changelog_files(files: Files) -> list[str]:
    """The changelog files of a project, the root's first."""
    return [
        p
        for folder in FOLDERS
        for p in sorted(files)
        if p.startswith(folder) and "/" not in p[len(folder) :] and NAMES.match(p[len(folder) :])
    ]


def entry(files: Files, version: str, after: str = "") -> str:
    """The section of ``version`` in the first changelog that has one ("" when none does); with ``after``, the sections
    of the releases between too, each under its version."""
    for path in changelog_files(files):
        text = files[path]
        found = section(text, version)
        if not found:
            continue
        lines = text.splitlines()
        between = {
            v: None for v in (heading_version(lines, i) for i in range(len(lines))) if v and after and _key(after) < _key(v) < _key(version)
        }
        if not between:
            return found
        parts = [f"{v}:\n{section(text, v)}" for v in sorted(between, key=_key) if section(text, v)]
        return "\n\n".join([*parts, f"{version}:\n{found}"])
    return ""


def _norm(version: str) -> str:
    return re.sub(r"(\.0)+$", "", version.lower().lstrip("v"))


def _same(a: str, b: str) -> bool:
    """Two spellings of one release: ``3.0`` and ``3.0.0`` are one, ``1.2`` and ``1.2.1`` are not."""
    return _norm(a) == _norm(b)


def _key(version: str) -> tuple[int, ...]:
    """A final release's order: its numbers (``3.0.4`` after ``3.0.3``, ``3.0`` before ``3.0.1``)."""
    return tuple(int(n) for n in re.findall(r"\d+", _norm(version)))


def heading_version(lines: list[str], i: int) -> str:
    """The version line ``i`` is the heading of ("" when it is no version's heading)."""
    line = lines[i].strip()
    found = _VERSION.search(line)
    if not line or len(line) > MAX_HEADING or found is None or _UNDERLINE.match(line):
        return ""
    underlined = i + 1 < len(lines) and bool(_UNDERLINE.match(lines[i + 1]))
    leading = _LEADING.match(line)
    if line.startswith("#") or underlined or (leading is not None and leading.end() == found.start(1)):
        return found.group(1)
    return ""


def section(text: str, version: str) -> str:
    lines = text.splitlines()
    versions = [heading_version(lines, i) for i in range(len(lines))]
    start = next((i for i, v in enumerate(versions) if v and _same(v, version)), None)
    if start is None:
        return ""
    end = next((j for j in range(start + 1, len(lines)) if versions[j]), len(lines))
    body = [line.rstrip() for line in lines[start + 1 : end]]
    while body and (not body[0].strip() or _UNDERLINE.match(body[0])):
        body.pop(0)
    while body and (not body[-1].strip() or _UNDERLINE.match(body[-1])):  # the next heading's rst overline
        body.pop()
    cut = len(body) > MAX_LINES
    found = "\n".join(body[:MAX_LINES])
    if len(found) > MAX_CHARS:
        found, cut = found[:MAX_CHARS].rsplit("\n", 1)[0], True
    return found + ("\n…" if cut and found else "")
