"""Where a test's code is: the function (or test class method) a pytest node id names, found in a test file's syntax
tree, not by its name's text (a file of many test classes defines ``test_basic`` many times).

    source_of(files, "tests/test_more.py::SampleTests::test_negative")   # that method's source, or None
"""

from __future__ import annotations

import ast
import functools

from env.patches import Files
from env.pyparse import parse

Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def function_key(test_id: str) -> str:
    """``path::Class::function`` of a node id: what its code is found by (its parametrisation dropped)."""
    return test_id.split("[", 1)[0]


def find_definition(tree: ast.Module, names: list[str]) -> Definition | None:
    body: list[ast.stmt] = tree.body
    node: Definition | None = None
    for name in names:
        node = next((n for n in body if isinstance(n, Definition) and n.name == name), None)
        if node is None:
            return None
        body = node.body
    return node


def definition_span(node: Definition) -> tuple[int, int]:
    """The node's lines, its decorators included (1-based, inclusive)."""
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return first, node.end_lineno or node.lineno


@functools.lru_cache(maxsize=16)
def _tree(text: str) -> ast.Module | None:
    """A test file's syntax tree, parsed once per text: ``changed_tests`` looks up every listed test of a file in it, and
    a 6000-line file of 600 tests parsed per test took minutes (more-itertools). None when it does not parse."""
    try:
        tree = parse(text)
    except SyntaxError:
        return None
    return tree if isinstance(tree, ast.Module) else None


def source_of(files: Files, test_id: str) -> str | None:
    """The source of the function a test id names, or None when no file defines it (or it does not parse)."""
    path, *names = function_key(test_id).split("::")
    text = files.get(path)
    if text is None or not names:
        return None
    tree = _tree(text)
    node = find_definition(tree, names) if tree is not None else None
    if node is None:
        return None
    first, last = definition_span(node)
    return "".join(text.splitlines(keepends=True)[first - 1 : last])
