"""A code object's instructions, as ``sites`` reads them at call sites.

    for op in instructions(code):   # CACHE entries left out
        op.opname, op.opcode, op.arg, op.argval, op.offset, op.is_jump_target, op.argrepr

Why not ``dis.get_instructions`` alone: it builds every instruction's source positions, line start and text, and the
call-site analysis reads whole test functions (pytest's assertion rewriting makes them hundreds of instructions
long) once per run in a fresh fork, where nothing is cached: 28-72 ms of a repository run's 220-320 ms, measured on
the bundled tasks. On CPython 3.11, whose bytecode layout this decodes, one pass over ``co_code`` gives the same
fields (``tests/test_bytecode.py`` compares both over the standard library and rewritten tests) at a fraction of the
cost; on any other version ``dis`` is read as before. ``argrepr`` is only BINARY_OP's operator (the one text
``sites`` reads); every other field is ``dis``'s.
"""

from __future__ import annotations

import dis
import sys
import types
from typing import NamedTuple


class Op(NamedTuple):
    opname: str
    opcode: int
    arg: int | None
    argval: object
    argrepr: str
    offset: int
    is_jump_target: bool


def _operators() -> dict[int, str]:
    """BINARY_OP's argument -> its operator, read off ``dis`` once for each operator (no private table)."""
    table: dict[int, str] = {}
    for symbol in ("+", "&", "//", "<<", "@", "*", "%", "|", "**", ">>", "-", "/", "^"):
        for source in (f"a {symbol} b", f"a {symbol}= b"):
            for op in dis.get_instructions(compile(source, "<operators>", "exec")):
                if op.opname == "BINARY_OP" and op.arg is not None:
                    table[op.arg] = op.argrepr
    return table


FAST = sys.version_info[:2] == (3, 11)  # the layout _decode reads: CACHE entries zeroed in co_code, jumps relative

_CACHE = dis.opmap.get("CACHE", -1)
_EXTENDED_ARG = dis.opmap["EXTENDED_ARG"]
_HAVE_ARGUMENT = dis.HAVE_ARGUMENT
_CONST = frozenset(dis.hasconst)
_NAME = frozenset(dis.hasname)
_JABS = frozenset(dis.hasjabs)
_JREL = frozenset(dis.hasjrel)
_BACKWARD = frozenset(op for op in _JREL if "JUMP_BACKWARD" in dis.opname[op])
_LOCAL = frozenset(dis.haslocal) | frozenset(dis.hasfree)
_COMPARE = frozenset(dis.hascompare)
_LOAD_GLOBAL = dis.opmap["LOAD_GLOBAL"]
_LOAD_CONST = dis.opmap["LOAD_CONST"]
_UNKNOWN = getattr(dis, "UNKNOWN", None)
_BINARY_OP = dis.opmap.get("BINARY_OP", -1)
_FORMAT_VALUE = dis.opmap.get("FORMAT_VALUE", -1)
_OPERATORS = _operators() if FAST else {}


def instructions(code: types.CodeType) -> list[Op]:
    """``code``'s instructions but CACHE entries (``dis.get_instructions``'s fields, ``argrepr`` as said above)."""
    if not FAST:
        return [Op(i.opname, i.opcode, i.arg, i.argval, i.argrepr if i.opname == "BINARY_OP" else "", i.offset, i.is_jump_target)
                for i in dis.get_instructions(code) if i.opname != "CACHE"]  # fmt: skip
    return _decode(code)


def _decode(code: types.CodeType) -> list[Op]:
    raw, names, consts = code.co_code, code.co_names, code.co_consts
    local_names = code.co_varnames + tuple(c for c in code.co_cellvars if c not in code.co_varnames) + code.co_freevars
    opname, make = dis.opname, tuple.__new__
    out: list[Op] = []
    at: dict[int, int] = {}  # offset -> index in out
    labels: set[int] = set()  # as dis.get_instructions marks them: jumps' targets (not the exception table's)
    extended = 0
    for offset in range(0, len(raw), 2):
        op = raw[offset]
        if op == _CACHE:
            continue
        argval: object = None
        argrepr = ""
        if op >= _HAVE_ARGUMENT:
            value = raw[offset + 1] | extended
            extended = (value << 8) if op == _EXTENDED_ARG else 0
            arg: int | None = value
            argval = value
            if op in _CONST:  # dis names only LOAD_CONST's constant (KW_NAMES's is left unknown)
                argval = consts[value] if op == _LOAD_CONST else _UNKNOWN
            elif op in _NAME:
                argval = names[value >> 1] if op == _LOAD_GLOBAL else names[value]
            elif op in _JREL:
                target = offset + 2 + (-value if op in _BACKWARD else value) * 2
                labels.add(target)
                argval = target
            elif op in _JABS:
                labels.add(value * 2)
                argval = value * 2
            elif op in _LOCAL:
                argval = local_names[value]
            elif op in _COMPARE:
                argval = dis.cmp_op[value]
            elif op == _FORMAT_VALUE:
                argval = (dis.FORMAT_VALUE_CONVERTERS[value & 0x3][0], bool(value & 0x4))
            elif op == _BINARY_OP:
                argrepr = _OPERATORS[value]
        else:
            arg, extended = None, 0
        at[offset] = len(out)
        out.append(make(Op, (opname[op], op, arg, argval, argrepr, offset, False)))
    for label in labels:
        index = at.get(label)
        if index is not None:
            out[index] = out[index]._replace(is_jump_target=True)
    return out
