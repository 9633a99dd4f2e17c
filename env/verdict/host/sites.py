"""Bytecode call-site analysis: which consumer took a project iterator, which call a method read feeds, which comparison a
dunder serves. Caches keyed by (code object, instruction): the code object is kept alive in the key.
"""

from __future__ import annotations

import dis
import functools
import operator
import sys
import types

# C functions that, called on an iterator, take every item before they return or run anything else (so pulling
# them in batches runs no project code they would not run, in the same order): "all" whatever the items; "plain"
# while each item is plain hashable data (hashing a project object would ask the project between two items, and an
# unhashable one stops the consumer); "numbers" while each is an int, float or bool (adding or comparing anything
# else may run project code or fail, and stop the consumer).
_CONSUMERS = ((list, "all"), (tuple, "all"), (sorted, "all"), (set, "plain"), (frozenset, "plain"),
              (sum, "numbers"), (min, "numbers"), (max, "numbers"))


_CALL_SITES: dict[tuple[types.CodeType, int], tuple[str, str] | None] = {}


_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_NAME"})


def _consumer(frame: types.FrameType) -> str | None:
    """The mode of the consumer the frame's current instruction calls (``_CONSUMERS``), None for anything else: a
    ``for`` loop, ``next()``, ``any()``, ``map()``, a call whose callee this cannot name for sure."""
    key = (frame.f_code, frame.f_lasti)
    site = _CALL_SITES.get(key, ())
    if site == ():
        site = _CALL_SITES[key] = _call_site(*key) if len(_CALL_SITES) < 100_000 else None
    if site is None:
        return _reducer(frame)
    callee = _value(frame, *site)
    return next((mode for function, mode in _CONSUMERS if callee is function), None)


_MISSING = object()


def _value(frame: types.FrameType, load: str, name: object) -> object:
    """What the load instruction ``load`` of ``name`` gives in ``frame`` now (``_MISSING`` when it would fail)."""
    if load == "LOAD_CONST":
        return name
    if load in ("LOAD_FAST", "LOAD_DEREF"):
        return frame.f_locals.get(str(name), _MISSING)
    namespaces = (frame.f_globals, frame.f_builtins) if load == "LOAD_GLOBAL" else (frame.f_locals, frame.f_globals, frame.f_builtins)
    return next((namespace[name] for namespace in namespaces if name in namespace), _MISSING)


# functools.reduce(f, it[, initial]) takes every item too when f is one of these and every value is a number: none of
# them runs project code or fails on an int, float or bool, so the reduction never stops between two items.
_PURE_REDUCERS = (operator.add, operator.mul, operator.sub, max, min)
_REDUCE_SITES: dict[tuple[types.CodeType, int], tuple[tuple[tuple[str, object], ...], ...] | None] = {}
_NUMBERS = (int, float, bool)


def _reducer(frame: types.FrameType) -> str | None:
    """"numbers" when the frame's current instruction is ``reduce(f, it)`` or ``reduce(f, it, initial)`` whose callee is
    functools.reduce, ``f`` a pure reducer and ``initial`` a number, each of the call's operands read by loads that run
    no code (a name, a constant, a standard-library module's attribute), so what was passed is what they give now;
    None for anything else (the caller pulls item by item)."""
    key = (frame.f_code, frame.f_lasti)
    site = _REDUCE_SITES.get(key, ())
    if site == ():
        site = _REDUCE_SITES[key] = _operands_of_call(*key) if len(_REDUCE_SITES) < 100_000 else None
    if site is None or len(site) not in (3, 4) or _operand(frame, site[0]) is not functools.reduce:
        return None
    function = _operand(frame, site[1])
    if not any(function is pure for pure in _PURE_REDUCERS):
        return None
    if len(site) == 4 and type(_operand(frame, site[3])) not in _NUMBERS:
        return None
    return "numbers"


_Operand = tuple[tuple[str, object], ...]  # a load, then the attributes read off it
_PLAIN_LOADS = frozenset({"LOAD_FAST", "LOAD_CONST", "LOAD_DEREF", "LOAD_GLOBAL", "LOAD_NAME"})


def _operand(frame: types.FrameType, loads: _Operand) -> object:
    """The value an operand's loads give now; ``_MISSING`` when an attribute is read off anything but a module of the
    standard library (reading one could run code)."""
    value = _value(frame, *loads[0])
    for _, name in loads[1:]:
        if type(value) is not types.ModuleType or value.__name__.partition(".")[0] not in sys.stdlib_module_names:
            return _MISSING
        value = getattr(value, str(name), _MISSING)
    return value


def _operands_of_call(code: types.CodeType, offset: int) -> tuple[_Operand, ...] | None:
    """For the call at ``offset``: the callee's loads, then each argument's, when every operand is one plain load
    followed by attribute reads (``functools.reduce``, ``mul``, ``x``, ``1``) and nothing jumps between them; None
    for anything else (an argument that calls, indexes or computes)."""
    found = _call_at(code, offset)
    if found is None:
        return None
    instructions, at = found
    count = instructions[at].arg
    at -= 1
    if at >= 0 and instructions[at].opname == "PRECALL":  # 3.11
        if instructions[at].arg != count:
            return None
        at -= 1
    operands: list[_Operand] = []
    while len(operands) < count + 1:
        attributes: list[tuple[str, object]] = []
        while at >= 0 and instructions[at].opname == "LOAD_ATTR":
            attributes.insert(0, ("LOAD_ATTR", instructions[at].argval))
            at -= 1
        if at < 0 or instructions[at].opname not in _PLAIN_LOADS:
            return None
        load = instructions[at]
        callee = len(operands) == count
        if load.opname == "LOAD_GLOBAL" and bool(load.arg & 1) != callee:
            return None  # only the callee's global load pushes the NULL a call needs
        operands.insert(0, ((load.opname, load.argval), *attributes))
        if load.is_jump_target and not callee:
            return None
        at -= 1
    # The callee's NULL: pushed by its own global load, or just before any other (pytest's assertion rewriting reads
    # ``functools.reduce`` into a local first)
    if operands[0][0][0] != "LOAD_GLOBAL" and (at < 0 or instructions[at].opname != "PUSH_NULL" or operands[0][0][0] == "LOAD_CONST"):
        return None
    return tuple(operands)


def _call_at(code: types.CodeType, offset: int) -> tuple[list[dis.Instruction], int] | None:
    """``code``'s instructions and the index of the CALL at ``offset`` (or the one its PRECALL leads to: 3.11 once
    the call site is specialised, PRECALL makes the call of a builtin class itself); None for anything else."""
    try:
        instructions = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
    except Exception:  # noqa: BLE001  (bytecode this cannot read: no batching)
        return None
    at = next((n for n, i in enumerate(instructions) if i.offset == offset), None)
    if at is not None and instructions[at].opname == "PRECALL" and at + 1 < len(instructions):
        at += 1
    if at is None or instructions[at].opname != "CALL":
        return None
    return instructions, at


def _call_site(code: types.CodeType, offset: int) -> tuple[str, str] | None:
    """How the callee of the one-argument call at ``offset`` was loaded: (LOAD_GLOBAL or LOAD_NAME, its name), found
    by walking back over the argument's instructions; None when the instruction is anything else or the walk meets
    a jump, a jump target or an instruction it cannot account for (the caller then pulls item by item)."""
    found = _call_at(code, offset)
    if found is None or found[0][found[1]].arg != 1:
        return None
    instructions, at = found
    at -= 1
    if at >= 0 and instructions[at].opname == "PRECALL":  # 3.11
        if instructions[at].arg != 1:
            return None
        at -= 1
    depth = 0  # stack slots the instructions from here to the call leave: the argument's one, then the callee
    while at >= 0:
        instruction = instructions[at]
        if instruction.opcode in dis.hasjrel or instruction.opcode in dis.hasjabs or instruction.opname == "KW_NAMES":
            return None
        try:
            effect = dis.stack_effect(instruction.opcode, instruction.arg, jump=False) if instruction.opcode >= dis.HAVE_ARGUMENT \
                else dis.stack_effect(instruction.opcode)
        except ValueError:
            return None
        if depth == 1 and effect >= 1:  # the instruction that pushed the slot below the argument: the callee
            # (a jump to the callee's load, the line after a ``with`` block, still runs every instruction from it to the call)
            if instruction.opname in _LOADS and isinstance(instruction.argval, str):
                return instruction.opname, instruction.argval
            return None
        if instruction.is_jump_target:  # a jump into the argument's instructions: the callee may be another
            return None
        depth += effect
        if depth > 1:  # no proper part of one argument leaves two values: not code this walk understands
            return None
        at -= 1
    return None


_METHOD_SITES: dict[tuple[types.CodeType, int], str | None] = {}


_QUIET_LOADS = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_CONST", "LOAD_DEREF"})  # they run no code at all


def _method_call(frame: types.FrameType, name: str) -> bool:
    """Whether the frame is reading attribute ``name`` to call it at once: a method load whose arguments are only
    local names, constants and globals, so nothing (no project code) can run between the read and the call."""
    key = (frame.f_code, frame.f_lasti)
    site = _METHOD_SITES.get(key, "")
    if site == "":
        site = _METHOD_SITES[key] = _method_site(*key) if len(_METHOD_SITES) < 100_000 else None
    return site == name


def _method_site(code: types.CodeType, offset: int) -> str | None:
    """The attribute the method load at ``offset`` reads, if the instructions after it up to its call are quiet
    loads (``_QUIET_LOADS``, globals) and nothing jumps into them; None otherwise."""
    try:
        instructions = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
    except Exception:  # noqa: BLE001  (bytecode this cannot read: no fusing)
        return None
    at = next((n for n, i in enumerate(instructions) if i.offset == offset), None)
    if at is None:
        return None
    load = instructions[at]
    # LOAD_ATTR too: 3.11 reads ``module.function`` for a call that way. The value read is the callee when the call
    # right after takes exactly the quiet loads between them as its arguments.
    if load.opname not in ("LOAD_METHOD", "LOAD_ATTR"):
        return None
    count, at = 0, at + 1
    while at < len(instructions):
        instruction = instructions[at]
        if instruction.is_jump_target:
            return None
        if not (instruction.opname in _QUIET_LOADS or instruction.opname == "LOAD_GLOBAL" and not instruction.arg & 1):
            break
        count, at = count + 1, at + 1
    if at < len(instructions) and instructions[at].opname == "KW_NAMES":
        at += 1
    if at < len(instructions) and instructions[at].opname == "PRECALL":  # 3.11
        if instructions[at].arg != count:
            return None
        at += 1
    if at < len(instructions) and instructions[at].opname == "CALL" and instructions[at].arg == count and not instructions[at].is_jump_target:
        return load.argval if isinstance(load.argval, str) else None
    return None


_COMPARE_SITES: dict[tuple[types.CodeType, int], bool] = {}


_COMPARE_OP = dis.opmap["COMPARE_OP"]


def _compare_site(frame: types.FrameType) -> bool:
    """Whether the frame's current instruction is a comparison operator (not a call of ``__eq__`` and kin)."""
    key = (frame.f_code, frame.f_lasti)
    site = _COMPARE_SITES.get(key)
    if site is None:
        code = frame.f_code.co_code  # the unspecialised bytecode: COMPARE_OP whatever the interpreter made of it
        site = 0 <= frame.f_lasti < len(code) and code[frame.f_lasti] == _COMPARE_OP
        if len(_COMPARE_SITES) < 100_000:
            _COMPARE_SITES[key] = site
    return site
