"""Bytecode call-site analysis: which consumer took a project iterator, which call a method read feeds, which comparison a
dunder serves. Caches keyed by (code object, instruction): the code object is kept alive in the key.
"""

from __future__ import annotations

import dis
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
        return None
    kind, name = site
    namespaces = (frame.f_globals, frame.f_builtins) if kind == "LOAD_GLOBAL" else (frame.f_locals, frame.f_globals, frame.f_builtins)
    for namespace in namespaces:
        if name in namespace:
            callee = namespace[name]
            return next((mode for function, mode in _CONSUMERS if callee is function), None)
    return None


def _call_site(code: types.CodeType, offset: int) -> tuple[str, str] | None:
    """How the callee of the one-argument call at ``offset`` was loaded: (LOAD_GLOBAL or LOAD_NAME, its name), found
    by walking back over the argument's instructions; None when the instruction is anything else or the walk meets
    a jump, a jump target or an instruction it cannot account for (the caller then pulls item by item)."""
    try:
        instructions = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
    except Exception:  # noqa: BLE001  (bytecode this cannot read: no batching)
        return None
    at = next((n for n, i in enumerate(instructions) if i.offset == offset), None)
    if at is not None and instructions[at].opname == "PRECALL" and at + 1 < len(instructions):
        at += 1  # 3.11 once the call site is specialised: PRECALL makes the call of a builtin class itself
    if at is None or instructions[at].opname != "CALL" or instructions[at].arg != 1:
        return None
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
