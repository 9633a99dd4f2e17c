"""Held-out tests for authored tasks: which tests to keep from the agent, and the test files without them.

    held = expand(changed_tests(base_tests, patched_tests, listed), listed)   # what a test patch adds or changes
    visible = strip_tests(patched_tests, held)                               # repo/'s test files: their code gone
    test_patch = make_patch(visible, patched_tests)                          # test_patch.diff puts it back

A test is a function (or a method of a test class) in a test file; a pytest node id names it as
``path::Class::function[parameters]``. Code is removed per function, so every parametrisation of a function
is held out together (``expand``): a case left visible would have its code in repo/.
"""

from __future__ import annotations

import ast
import hashlib

from env.patches import Files
from env.pyparse import parse
from env.test_source import Definition, definition_span, find_definition, function_key, source_of


def changed_tests(before: Files, after: Files, ids: list[str]) -> list[str]:
    """The ids whose code ``after`` adds or changes (a test patch's own tests), in their order."""
    return [t for t in ids if source_of(after, t) is not None and source_of(before, t) != source_of(after, t)]


def expand(held: list[str], listed: list[str]) -> list[str]:
    """``held`` with every listed id of the same function (its other parametrisations), in ``listed``'s order."""
    keys = {function_key(t) for t in held}
    return [t for t in dict.fromkeys(listed) if function_key(t) in keys]


def strip_tests(files: Files, ids: list[str]) -> Files:
    """``files`` without the functions ``ids`` name (a class left empty keeps a ``pass``); other files unchanged."""
    by_path: dict[str, set[tuple[str, ...]]] = {}
    for test_id in ids:
        path, *names = function_key(test_id).split("::")
        if names:
            by_path.setdefault(path, set()).add(tuple(names))
    result = dict(files)
    for path, wanted in by_path.items():
        if path not in files:
            continue
        text = files[path]
        lines = text.splitlines(keepends=True)
        tree = parse(text)
        cuts: list[tuple[int, int, str]] = []  # (first, last, replacement) 1-based
        for qualname in sorted(wanted):
            node = find_definition(tree, list(qualname))
            if node is None:
                continue
            first, last = definition_span(node)
            parent = find_definition(tree, list(qualname[:-1])) if len(qualname) > 1 else None
            # a class whose every statement is removed keeps one `pass`, where its first one was
            emptied = isinstance(parent, ast.ClassDef) and node is parent.body[0] and all(
                isinstance(n, Definition) and (*qualname[:-1], n.name) in wanted for n in parent.body
            )
            line = lines[node.lineno - 1]
            cuts.append((first, last, f"{line[: len(line) - len(line.lstrip())]}pass\n" if emptied else ""))
        for first, last, replacement in sorted(cuts, reverse=True):
            lines[first - 1 : last] = [replacement] if replacement else []
        result[path] = "".join(lines)
    return result


def share(ids: list[str], fraction: float, salt: str, minimum: int = 0, keep: int = 0) -> list[str]:
    """A deterministic share of ``ids`` by function (``fraction`` of the functions, at least ``minimum`` of them, always
    leaving ``keep`` functions out): the functions in the order of a hash of ``salt`` and their key."""
    keys = list(dict.fromkeys(function_key(t) for t in ids))
    count = min(max(minimum, int(len(keys) * fraction)), max(0, len(keys) - keep))
    ranked = sorted(keys, key=lambda k: hashlib.sha256(f"{salt}\0{k}".encode()).hexdigest())
    chosen = set(ranked[:count])
    return [t for t in ids if function_key(t) in chosen]
