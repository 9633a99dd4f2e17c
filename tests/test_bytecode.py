"""The host's fast reading of a code object's instructions (env/verdict/host/bytecode.py) against ``dis``: the same
fields, instruction for instruction, over the standard library's modules and test files as pytest rewrites them."""

from __future__ import annotations

import dis
import importlib.util
import sys
import types
from pathlib import Path

from _pytest.assertion.rewrite import rewrite_asserts

from env.verdict.host import bytecode

ROOT = Path(__file__).resolve().parents[1]
STDLIB = ["dis", "inspect", "typing", "enum", "dataclasses", "asyncio.base_events", "json.decoder", "re._parser", "argparse",
          "functools", "collections", "statistics", "decimal", "fractions", "string", "textwrap", "email.message"]  # fmt: skip
# this suite's own files and every test file of the bundled tasks (what the host reads in a served run)
TEST_FILES = ["tests/test_repo_verdict.py", "tests/test_sandbox.py", *sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("tasks/**/test_*.py"))]


def _all_code(code: types.CodeType) -> list[types.CodeType]:
    found = [code]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found += _all_code(const)
    return found


def _module_code(name: str) -> types.CodeType:
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None
    source = Path(spec.origin).read_text(encoding="utf-8")
    return compile(source, spec.origin, "exec")


def _rewritten(path: Path) -> types.CodeType:
    """The file as pytest runs it: its asserts rewritten (hundreds of instructions a test, the host's usual reading)."""
    import ast

    source = path.read_bytes()
    tree = ast.parse(source)
    rewrite_asserts(tree, source, str(path))
    return compile(tree, str(path), "exec")


def _expected(code: types.CodeType) -> list[tuple]:
    return [(i.opname, i.opcode, i.arg, i.argval, i.argrepr if i.opname == "BINARY_OP" else "", i.offset, i.is_jump_target)
            for i in dis.get_instructions(code) if i.opname != "CACHE"]  # fmt: skip


def _codes() -> list[types.CodeType]:
    codes = [c for name in STDLIB for c in _all_code(_module_code(name))]
    codes += [c for rel in TEST_FILES for c in _all_code(_rewritten(ROOT / rel))]
    return codes


def test_every_field_is_what_dis_reads_over_the_standard_library_and_rewritten_tests():
    codes = _codes()
    assert len(codes) > 2000 and len(TEST_FILES) > 60
    instructions = 0
    for code in codes:
        got = [tuple(op) for op in bytecode.instructions(code)]
        assert got == _expected(code), (code.co_filename, code.co_name)
        instructions += len(got)
    assert instructions > 100_000


def test_jump_targets_are_the_jumps_targets_forward_and_backward():
    def loop(items):
        total = 0
        for item in items:  # a backward jump to the loop's head, a forward one past it
            if item:
                total += item
        return total

    ops = bytecode.instructions(loop.__code__)
    targets = {op.offset for op in ops if op.is_jump_target}
    jumps = [op for op in ops if op.opcode in dis.hasjrel]
    assert any(op.opname.startswith("JUMP_BACKWARD") for op in jumps) and any(not op.opname.startswith("JUMP_BACKWARD") for op in jumps)
    assert targets == {op.argval for op in jumps}


def test_binary_operators_are_named_as_dis_names_them():
    ops = [op for op in bytecode.instructions(compile("a + b; a - b; a * b; a //= b", "<ops>", "exec")) if op.opname == "BINARY_OP"]
    assert [op.argrepr for op in ops] == ["+", "-", "*", "//="]


def test_another_version_reads_dis_with_the_same_fields(monkeypatch):
    """Where the fast reading does not serve (any Python but 3.11), ``dis`` is read: the same fields come out."""
    monkeypatch.setattr(bytecode, "FAST", False)
    code = _module_code("textwrap")
    assert [tuple(op) for op in bytecode.instructions(code)] == _expected(code)


def test_the_fast_reading_serves_the_version_it_decodes():
    assert bytecode.FAST == (sys.version_info[:2] == (3, 11))
