"""The split's two halves speak the tags of one table (env/sandbox/inside/protocol.py): each half's code is read here,
and the tags it writes and reads must be exactly the table's (a tag one side drops, or a new one only one side knows,
fails here, not in a verdict)."""

from __future__ import annotations

import ast
import importlib.util
import re
import runpy
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INSIDE = ROOT / "env" / "sandbox" / "inside"
HOST = ROOT / "env" / "verdict" / "host"
TABLE = runpy.run_path(str(INSIDE / "protocol.py"))


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _defs(path: Path, *names: str) -> list[ast.AST]:
    return [n for n in ast.walk(_tree(path)) if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name in names]


def _texts(node: ast.AST) -> set[str]:
    """The string constants of ``node`` (a branch ``"a" if x else "b"`` gives both)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.IfExp):
        return _texts(node.body) | _texts(node.orelse)
    return set()


def test_the_test_sides_value_tags_are_the_tables():
    """{None: (tag, ...)}: written by the trusted codec, read by the sandbox's _repo_decode."""
    written: set[str] = set()
    for path in (HOST / "codec.py", HOST / "conversation.py"):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Dict) and len(node.keys) == 1 and isinstance(node.keys[0], ast.Constant) and node.keys[0].value is None:
                value = node.values[0]
                if isinstance(value, ast.Tuple) and value.elts:
                    written |= _texts(value.elts[0])
    read: set[str] = set()
    for node in ast.walk(_defs(INSIDE / "values.py", "_repo_decode")[0]):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == "tag":
            for right in node.comparators:
                read |= _texts(right) | {t for e in getattr(right, "elts", ()) for t in _texts(e)}
    assert written == set(TABLE["VALUE_TAGS"])
    assert read == set(TABLE["VALUE_TAGS"])


def test_the_sandboxs_reply_tags_are_the_tables():
    """The keys of the JSON objects the sandbox's encoder writes, and those the trusted codec reads."""
    written: set[str] = set()
    for node in _defs(INSIDE / "values.py", "_RepoEncoder", "_special", "_moment"):
        skip = {id(a) for n in ast.walk(node) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "get" for a in n.args}
        for constant in ast.walk(node):
            if isinstance(constant, ast.Constant) and isinstance(constant.value, str) and id(constant) not in skip:
                written |= set(re.findall(r'"(\w+)":', constant.value))
                if re.fullmatch(r"[A-Za-z]{1,2}", constant.value):  # a key chosen by %s ("L" if list else "S")
                    written.add(constant.value)
    read: set[str] = set()
    for node in _defs(HOST / "codec.py", "decode", "proxy", "_container"):
        for n in ast.walk(node):
            if isinstance(n, ast.Compare) and isinstance(n.left, ast.Constant) and all(isinstance(c, ast.Name) for c in n.comparators):
                read |= _texts(n.left)
            elif isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id in ("value", "info"):
                read |= _texts(n.slice)
            elif isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "get" and getattr(n.func.value, "id", "") in ("value", "info"):
                read |= _texts(n.args[0])
            elif isinstance(n, ast.Tuple) and len(n.elts) == 2 and isinstance(n.elts[1], (ast.Name, ast.Attribute)):
                read |= _texts(n.elts[0])  # for tag, kind in (("T", tuple), ...)
            elif isinstance(n, ast.Set):
                read |= {t for e in n.elts for t in _texts(e)}
    assert written == set(TABLE["REPLY_TAGS"])
    assert read == set(TABLE["REPLY_TAGS"])


def test_handle_kinds_are_the_tables():
    written: set[str] = set()
    for node in ast.walk(_defs(INSIDE / "values.py", "_RepoEncoder")[0]):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript) and _texts(node.targets[0].slice) == {"k"}:
            written |= _texts(node.value)
    read: set[str] = set()
    for node in ast.walk(_defs(HOST / "codec.py", "proxy")[0]):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == "kind":
            read |= {t for c in node.comparators for t in _texts(c)}
    assert written == set(TABLE["HANDLE_KINDS"])
    assert read <= set(TABLE["HANDLE_KINDS"])  # "call" and "obj" both become a RemoteObject: no test reads them
    assert set(TABLE["HANDLE_KINDS"]) - read == {"call", "obj"}


def _inside_package():
    """env/sandbox/inside loaded as the child loads it (a package by path, then out of sys.modules)."""
    spec = importlib.util.spec_from_file_location("_adbg_inside_t", INSIDE / "__init__.py", submodule_search_locations=[str(INSIDE)])
    assert spec is not None and spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules["_adbg_inside_t"] = package
    try:
        spec.loader.exec_module(package)
        return importlib.import_module("_adbg_inside_t.ops")
    finally:
        for name in [n for n in sys.modules if n.startswith("_adbg_inside_t")]:
            del sys.modules[name]


def test_the_operations_are_the_tables():
    """Every operation the sandbox answers is in the table, and every operation the trusted side names is answered."""
    served = set(_inside_package()._repo_ops())
    for node in ast.walk(_tree(INSIDE / "serve.py")):  # state["ops"]["name"] = ...
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript) and isinstance(node.targets[0].value, ast.Subscript):
            served |= _texts(node.targets[0].slice)
    assert served == set(TABLE["OPS"])
    named: set[str] = set()
    for path in HOST.glob("*.py"):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") in ("op", "request") and node.args:
                named |= _texts(node.args[0])
    assert named and named <= set(TABLE["OPS"])
