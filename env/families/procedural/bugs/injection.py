"""Putting a site's defect into a gold module: its gold text replaced by the buggy text, inside the
site's function only, so the gold fix touches that function alone.
"""

from __future__ import annotations

import ast

from env.families.procedural.bugs.site import Site
from env.pyparse import parse


class InjectionError(ValueError):
    pass


def function_node(tree: ast.AST, dotted: str) -> ast.AST:
    scope: list[ast.stmt] = list(getattr(tree, "body", []))
    node: ast.AST | None = None
    for part in dotted.split("."):
        node = next((n for n in scope if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == part), None)
        if node is None:
            raise InjectionError(f"no function {dotted} in the module")
        scope = list(getattr(node, "body", []))
    assert node is not None
    return node


def inject(source: str, site: Site) -> str:
    """``source`` with the site's defect: its gold text replaced, inside its function only."""
    node = function_node(parse(source), site.function)
    lines = source.splitlines(keepends=True)
    start, end = node.lineno - 1, node.end_lineno or node.lineno  # type: ignore[attr-defined]
    body = "".join(lines[start:end])
    count = body.count(site.gold)
    if count != 1:
        raise InjectionError(f"{site.id}: the gold text occurs {count} times in {site.function}, expected once")
    changed = "".join(lines[:start]) + body.replace(site.gold, site.buggy) + "".join(lines[end:])
    parse(changed)  # still Python
    return changed
