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

import pytest

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


def _table_keys(path: Path, name: str) -> set[str]:
    """The string keys of the module-level dict ``name`` in ``path`` (a half's dispatch table)."""
    for node in _tree(path).body:
        target = node.targets[0] if isinstance(node, ast.Assign) else node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(target, ast.Name) and target.id == name and isinstance(node.value, ast.Dict):
            return {t for key in node.value.keys if key is not None for t in _texts(key)}
    raise AssertionError(f"{path.name} has no table {name}")


def test_the_test_sides_value_tags_are_the_tables():
    """{None: (tag, ...)}: written by the trusted codec, read by the sandbox's repo_decode."""
    written: set[str] = set()
    for path in (HOST / "codec.py", HOST / "conversation.py"):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Dict) and len(node.keys) == 1 and isinstance(node.keys[0], ast.Constant) and node.keys[0].value is None:
                value = node.values[0]
                if isinstance(value, ast.Tuple) and value.elts:
                    written |= _texts(value.elts[0])
    read = _table_keys(INSIDE / "values.py", "_VALUE_DECODERS")
    assert written == set(TABLE["VALUE_TAGS"])
    assert read == set(TABLE["VALUE_TAGS"])


def test_the_sandboxs_reply_tags_are_the_tables():
    """The keys of the JSON objects the sandbox's encoder writes, and those the trusted codec reads."""
    written: set[str] = set()
    for node in _defs(INSIDE / "values.py", "RepoEncoder", "_class_fields", "_special", "_moment"):
        skip = {id(a) for n in ast.walk(node) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "get" for a in n.args}
        for constant in ast.walk(node):
            if isinstance(constant, ast.Constant) and isinstance(constant.value, str) and id(constant) not in skip:
                written |= set(re.findall(r'"(\w+)":', constant.value))
                if re.fullmatch(r"[A-Za-z]{1,2}", constant.value):  # a key chosen by %s ("L" if list else "S")
                    written.add(constant.value)
    read: set[str] = set()
    makers = [n for n in _tree(HOST / "codec.py").body if isinstance(n, ast.AnnAssign) and getattr(n.target, "id", "") == "_HANDLE_MAKERS"]
    handles = ("_exception_class_handle", "_exception_handle", "_remote_object")
    for node in _defs(HOST / "codec.py", "decode", "proxy", "_container", *handles) + makers + _defs(HOST / "classes.py", "class_proxy"):
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
    for node in ast.walk(_defs(INSIDE / "values.py", "RepoEncoder")[0]):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript) and _texts(node.targets[0].slice) == {"k"}:
            written |= _texts(node.value)
    assert written == set(TABLE["HANDLE_KINDS"])
    assert _table_keys(HOST / "codec.py", "_HANDLE_MAKERS") == set(TABLE["HANDLE_KINDS"])


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
    served = set(_inside_package().repo_ops())
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


def _package(name: str, folder: Path, module: str):
    """``folder`` loaded as the package ``name`` (as the child and the test host load theirs), then ``module`` of it."""
    spec = importlib.util.spec_from_file_location(name, folder / "__init__.py", submodule_search_locations=[str(folder)])
    assert spec is not None and spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    try:
        spec.loader.exec_module(package)
        return importlib.import_module(f"{name}.{module}")
    finally:
        for loaded in [n for n in sys.modules if n == name or n.startswith(name + ".")]:
            del sys.modules[loaded]


def test_both_halves_load_the_one_table(tmp_path):
    """The sandbox's package and the test host (started through a link, as repo_judge starts it) read the same file."""
    values = _package("_adbg_inside_v", INSIDE, "values")
    assert Path(values.protocol.__file__).resolve() == INSIDE / "protocol.py"
    (tmp_path / "adbg_host_l").symlink_to(HOST, target_is_directory=True)
    codec = _package("adbg_host_l", tmp_path / "adbg_host_l", "codec")
    assert Path(codec.agree.__globals__["__file__"]).resolve() == INSIDE / "protocol.py"
    assert codec.agree.__module__ == "_adbg_wire_table"


def _tampered(tmp_path: Path, old: str, new: str) -> Path:
    """A copy of env/sandbox/inside and env/verdict/host in their layout, the table edited."""
    import shutil

    for folder in (INSIDE, HOST):
        shutil.copytree(folder, tmp_path / folder.relative_to(ROOT / "env"), ignore=shutil.ignore_patterns("__pycache__"))
    table = tmp_path / "sandbox" / "inside" / "protocol.py"
    text = table.read_text(encoding="utf-8")
    assert text.count(old) == 1
    table.write_text(text.replace(old, new), encoding="utf-8")
    return tmp_path


def test_the_sandbox_half_refuses_a_table_it_disagrees_with(tmp_path):
    root = _tampered(tmp_path, '    "Q": "a Fraction: (numerator, denominator) as text",\n', "")
    with pytest.raises(RuntimeError) as raised:
        _package("_adbg_inside_x", root / "sandbox" / "inside", "values")
    assert str(raised.value) == (
        "the split's wire table (protocol.py VALUE_TAGS) and the sandbox's value decoder (values.py) disagree: "
        "not in the table: Q"
    )


def test_the_host_half_refuses_a_table_it_disagrees_with(tmp_path):
    root = _tampered(tmp_path, '    "obj": "anything else: a RemoteObject",\n',
                     '    "obj": "anything else: a RemoteObject",\n    "weak": "a weak reference",\n')
    with pytest.raises(RuntimeError) as raised:
        _package("adbg_host_x", root / "verdict" / "host", "codec")
    assert str(raised.value) == (
        "the split's wire table (protocol.py HANDLE_KINDS) and the test host's codec (codec.py) disagree: not handled: weak"
    )


def test_the_operations_check_names_both_sides_of_a_difference():
    agree = runpy.run_path(str(INSIDE / "protocol.py"))["agree"]
    served = set(TABLE["OPS"]) - {"pull"} | {"teleport"}
    with pytest.raises(RuntimeError) as raised:
        agree("OPS", served, "the sandbox's operations (ops.py, serve.py)")
    assert str(raised.value) == (
        "the split's wire table (protocol.py OPS) and the sandbox's operations (ops.py, serve.py) disagree: "
        "not handled: pull; not in the table: teleport"
    )
    agree("OPS", set(TABLE["OPS"]), "the sandbox's operations")  # the real names pass


def test_a_missing_table_stops_the_host_with_its_path(tmp_path):
    import shutil

    shutil.copytree(HOST, tmp_path / "verdict" / "host", ignore=shutil.ignore_patterns("__pycache__"))
    with pytest.raises(RuntimeError) as raised:
        _package("adbg_host_m", tmp_path / "verdict" / "host", "protocol")
    missing = tmp_path / "sandbox" / "inside" / "protocol.py"
    assert str(raised.value) == f"the split's wire table is missing ({missing}): the test host cannot speak to the sandbox"


def test_the_test_host_started_is_this_checkouts():
    """The test process's PYTHONPATH links adbg_host to this checkout's env/verdict/host, whatever other checkout on
    the same host linked before (a shared link ran another checkout's host, with its own wire table)."""
    from env.verdict.hosts import host_path

    linked = Path(host_path(), "adbg_host")
    assert linked.resolve() == HOST
    assert Path(host_path()) == linked.parent  # the same one each time
