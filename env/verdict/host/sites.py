"""Bytecode call-site analysis: which consumer took a project iterator, which call a method read feeds, which comparison a
dunder serves. Caches keyed by (code object, instruction): the code object is kept alive in the key.
"""

from __future__ import annotations

import dis
import functools
import importlib.util
import marshal
import math
import operator
import types
from collections.abc import Mapping

from . import bytecode
from .bytecode import Op
from .protocol import PURE_BUILTINS

# C functions that, called on an iterator, take every item before they return or run anything else (so pulling
# them in batches runs no project code they would not run, in the same order): "all" whatever the items; "plain"
# while each item is plain hashable data (hashing a project object would ask the project between two items, and an
# unhashable one stops the consumer); "numbers" while each is an int, float or bool (comparing anything else may run
# project code or fail, and stop the consumer); "ints" while each is an int or bool and "floats" while each is a
# float or an int a float can hold (adding or multiplying them runs no code and fails only turning an int too large
# into a float: the caller moves from "ints" to "floats" once a float has gone by, see ``Remote.next``).
_CONSUMERS = ((list, "all"), (tuple, "all"), (sorted, "all"), (set, "plain"), (frozenset, "plain"),
              (sum, "ints"), (math.prod, "ints"), (min, "numbers"), (max, "numbers"))


# What ``functools.reduce(function, iterator[, start])`` may take in batches with: the operator module's arithmetic
# (C functions: on plain numbers they run no code), or a lambda written in the call whose body is only that
# arithmetic on its two parameters (``lambda a, b: a * b``: nothing else runs, nothing is observed).
_ARITHMETIC = (operator.add, operator.mul, operator.sub)
# max and min compare: on plain numbers (an int, a float, a bool, however large) that runs no code and cannot fail
_COMPARING = (max, min)
_PURE_OPERATORS = frozenset({"+", "-", "*"})


_CALL_SITES: dict[tuple[types.CodeType, int], tuple | None] = {}


_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_NAME"})
_LOCAL_LOADS = frozenset({"LOAD_FAST", "LOAD_DEREF"})  # a local or a closure's cell: reading either runs no code


_INSTRUCTIONS: dict[types.CodeType, list[Op]] = {}


def _instructions(code: types.CodeType) -> list[Op]:
    """The code's instructions but CACHE entries, read once per code object (every call site of a test function is
    looked up in the same list; the code object is kept alive in the key)."""
    known = _INSTRUCTIONS.get(code)
    if known is None:
        known = bytecode.instructions(code)
        if len(_INSTRUCTIONS) < 20_000:
            _INSTRUCTIONS[code] = known
    return known


def consumer_mode(frame: types.FrameType) -> str | None:
    """The mode of the consumer the frame's current instruction calls (``_CONSUMERS``, or a ``reduce`` of
    arithmetic: "ints" or "floats" by its start), None for anything else: a ``for`` loop, ``next()``, ``any()``,
    ``map()``, a ``reduce`` of a function of the test's, a call whose callee this cannot name for sure."""
    found = consumer_call(frame)
    return None if found is None else found[1]


def consumer_call(frame: types.FrameType) -> tuple[object, str] | None:
    """The consumer the frame's current instruction calls and its mode (``consumer_mode``)."""
    key = (frame.f_code, frame.f_lasti)
    site = _CALL_SITES.get(key, ())
    if site == ():
        site = _CALL_SITES[key] = _call_site(*key) if len(_CALL_SITES) < 100_000 else None
    if site is None:
        return None
    callee = _named(frame, site[0])
    if site[1] is None:  # one argument: a consumer of _CONSUMERS
        return next(((function, mode) for function, mode in _CONSUMERS if callee is function), None)
    if callee is not functools.reduce:
        return None
    function, start = site[1], site[2]
    if type(start) is tuple:
        start = _named(frame, start)
        if type(start) not in (int, float, bool):
            return None
    if function[0] != "code":
        named = _named(frame, function)
        if any(named is f for f in _COMPARING):
            return callee, "numbers"
        if not any(named is f for f in _ARITHMETIC):
            return None
    return callee, "floats" if type(start) is float else "ints"


def after_iter(consumer: object) -> tuple[str, ...] | None:
    """What ``consumer`` does to an iterable right after its iter(), before it takes the first item: () nothing,
    ("len",) a len() of the iterable (list and tuple size themselves), None something else (no fusing). Found by
    running each consumer on a probe as this interpreter loads this module, not assumed."""
    known = _AFTER_ITER.get(id(consumer))
    return known[1] if known is not None and known[0] is consumer else None


def _probe(consumer: object) -> tuple[str, ...] | None:
    seen: list[str] = []

    class Probe:
        def __iter__(self) -> Probe:
            seen.append("iter")
            return self

        def __next__(self) -> int:
            seen.append("next")
            raise StopIteration

        def __len__(self) -> int:
            seen.append("len")
            return 0

    try:
        consumer(Probe()) if consumer is not functools.reduce else functools.reduce(operator.add, Probe(), 0)  # type: ignore[operator]
    except Exception:  # noqa: BLE001  (min() of nothing: what it did before is what counts)
        pass
    after = seen[seen.index("iter") + 1 :] if seen.count("iter") == 1 else []
    return tuple(after[:-1]) if after[-1:] == ["next"] and set(after[:-1]) <= {"len"} and len(after) <= 2 else None


_AFTER_ITER = {id(f): (f, _probe(f)) for f in (*(function for function, _ in _CONSUMERS), functools.reduce)}


_FEED_SITES: dict[tuple[types.CodeType, int], tuple | None] = {}


def feeds_consumer(frame: types.FrameType) -> tuple[str, tuple[int, ...]] | None:
    """Whether the call the frame's current instruction makes is the one argument of a call of a consumer right after
    it (``set(mi.factor(n))``: nothing runs between the two calls but the consumer's iter() of the result): the
    consumer's mode (``_CONSUMERS``) and the offsets its call may be read at (PRECALL and CALL on 3.11); else None."""
    key = (frame.f_code, frame.f_lasti)
    site = _FEED_SITES.get(key, ())
    if site == ():
        site = _FEED_SITES[key] = _feed_site(*key) if len(_FEED_SITES) < 100_000 else None
    if site is None:
        return None
    callee = _named(frame, site[0])
    mode = next((mode for function, mode in _CONSUMERS if callee is function), None)
    return None if mode is None else (mode, site[1])


def _call_at(code: types.CodeType, offset: int) -> tuple[list[Op], int] | None:
    """``code``'s instructions and the index of the CALL at ``offset`` (or the one its PRECALL leads to: 3.11 once the
    call site is specialised, PRECALL makes the call of a builtin class itself); None for anything else, or for
    bytecode this cannot read (the caller then neither batches nor fuses)."""
    try:
        instructions = _instructions(code)
    except Exception:  # noqa: BLE001
        return None
    at = next((n for n, i in enumerate(instructions) if i.offset == offset), None)
    if at is not None and instructions[at].opname == "PRECALL" and at + 1 < len(instructions):
        at += 1
    if at is None or instructions[at].opname != "CALL":
        return None
    return instructions, at


def _feed_site(code: types.CodeType, offset: int) -> tuple | None:
    """(the consumer's callee, its call's offsets) when the call at ``offset`` is directly followed by a call of one
    argument (``_call_site``: its argument is this call, with no jump into either) ; None otherwise."""
    found = _call_at(code, offset)
    if found is None:
        return None
    instructions, at = found
    following = instructions[at + 1 : at + 3]
    if following and following[0].opname == "PRECALL":  # 3.11
        if following[0].arg != 1:
            return None
    else:
        following = following[:1]
    if not following or following[-1].opname != "CALL" or following[-1].arg != 1 or any(i.is_jump_target for i in following):
        return None
    site = _call_site(code, following[-1].offset)
    if site is None or site[1] is not None:
        return None
    return site[0], tuple(i.offset for i in following)


def _named(frame: types.FrameType, load: tuple) -> object:
    """The value a name (``("name", LOAD_GLOBAL or LOAD_NAME, name)``) or a module's attribute (``("attr", load,
    module, attribute)``) loads in ``frame`` now, read without running any code; None when it cannot be read so (a
    missing name, an object that is not a module, an attribute the module's namespace lacks)."""
    if load[0] not in ("name", "attr"):
        return None
    _, kind, name = load[:3]
    if kind in _LOCAL_LOADS:  # a local the call site read (pytest's assertion rewriting reads an attribute into one)
        namespaces: tuple[Mapping[str, object], ...] = (frame.f_locals,)
    elif kind == "LOAD_GLOBAL":
        namespaces = (frame.f_globals, frame.f_builtins)
    else:
        namespaces = (frame.f_locals, frame.f_globals, frame.f_builtins)
    value = next((namespace[name] for namespace in namespaces if name in namespace), None)
    if load[0] == "attr":
        if type(value) is not types.ModuleType:
            return None
        return vars(value).get(load[3])
    return value


def _call_site(code: types.CodeType, offset: int) -> tuple | None:
    """The call at ``offset`` as (callee, None, None) for a call of one argument, or (callee, function, start) for
    ``callee(function, name[, number])`` of two or three arguments (the shape of ``functools.reduce(operator.mul,
    factors, 1)``), where callee and function are how they were loaded (``_named``; function may also be ("code", a
    lambda's code) for a lambda written there whose body is only arithmetic on its parameters) and start is the
    constant number or None. None when the instruction is anything else, or the walk meets a jump, a jump target or
    an instruction it cannot account for (the caller then pulls item by item)."""
    found = _call_at(code, offset)
    if found is None or found[0][found[1]].arg not in (1, 2, 3):
        return None
    instructions, at = found
    count = instructions[at].arg
    at -= 1
    if at >= 0 and instructions[at].opname == "PRECALL":  # 3.11
        if instructions[at].arg != count:
            return None
        at -= 1
    if count > 1:
        return _reduce_site(instructions, at, count)
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
            callee = _load(instructions, at)
            return None if callee is None else (callee, None, None)
        if instruction.is_jump_target:  # a jump into the argument's instructions: the callee may be another
            return None
        depth += effect
        if depth > 1:  # no proper part of one argument leaves two values: not code this walk understands
            return None
        at -= 1
    return None


def _load(instructions: list[Op], at: int) -> tuple | None:
    """The callee whose load starts at ``at``: ("name", load, name), or ("attr", load, module, attribute) when an
    attribute read follows it (an attribute read never starts an argument: it needs the value below it)."""
    first = instructions[at]
    if first.opname not in _LOADS or not isinstance(first.argval, str):
        return None
    after = instructions[at + 1] if at + 1 < len(instructions) else None
    if after is not None and after.opname in ("LOAD_ATTR", "LOAD_METHOD"):
        if after.is_jump_target or not isinstance(after.argval, str):
            return None
        return ("attr", first.opname, first.argval, after.argval)
    return ("name", first.opname, first.argval)


def _reduce_site(instructions: list[Op], at: int, count: int) -> tuple | None:
    """``callee(function, name[, number])`` ending at ``at`` (the instruction before the call), each part exactly one
    of the shapes below and none a jump target but the callee's first instruction; None otherwise."""
    start = None
    if count == 3:  # the start: a constant number, or a local that holds one as the call runs (``consumer_call``)
        last = instructions[at]
        if last.is_jump_target:
            return None
        if last.opname == "LOAD_CONST" and type(last.argval) in (int, float, bool):
            start = last.argval
        elif last.opname in _LOCAL_LOADS:  # pytest's assertion rewriting reads ``-1`` into a local
            start = ("name", last.opname, last.argval)
        else:
            return None
        at -= 1
    iterator = instructions[at] if at >= 0 else None  # the iterator: a local or global name (reading it runs nothing)
    if iterator is None or iterator.is_jump_target or not (
        iterator.opname in ("LOAD_FAST", "LOAD_DEREF", "LOAD_NAME") or iterator.opname == "LOAD_GLOBAL" and not iterator.arg & 1
    ):
        return None
    at -= 1
    function: tuple | None = None
    if at >= 1 and instructions[at].opname == "MAKE_FUNCTION" and instructions[at].arg == 0 \
            and instructions[at - 1].opname == "LOAD_CONST" and isinstance(instructions[at - 1].argval, types.CodeType):
        if not _pure_arithmetic(instructions[at - 1].argval) or instructions[at].is_jump_target or instructions[at - 1].is_jump_target:
            return None
        function, at = ("code", instructions[at - 1].argval), at - 2
    elif at >= 1 and instructions[at].opname == "LOAD_ATTR" and dis.stack_effect(instructions[at].opcode, instructions[at].arg) == 0:
        module = instructions[at - 1]
        if instructions[at].is_jump_target or module.is_jump_target or module.opname not in _LOADS or module.opname == "LOAD_GLOBAL" and module.arg & 1:
            return None
        function, at = ("attr", module.opname, module.argval, instructions[at].argval), at - 2
    elif at >= 0 and (instructions[at].opname in _LOADS or instructions[at].opname in _LOCAL_LOADS) \
            and not (instructions[at].opname == "LOAD_GLOBAL" and instructions[at].arg & 1):
        if instructions[at].is_jump_target:
            return None
        function, at = ("name", instructions[at].opname, instructions[at].argval), at - 1
    else:
        return None
    if at >= 1 and instructions[at].opname in _LOCAL_LOADS and instructions[at - 1].opname == "PUSH_NULL":
        # the callee read into a local (``functools.reduce`` under pytest's assertion rewriting)
        return None if instructions[at].is_jump_target else (("name", instructions[at].opname, instructions[at].argval), function, start)
    for back in (1, 2):  # the callee: a name, or a module's attribute
        if at - back + 1 < 0:
            return None
        callee = _load(instructions, at - back + 1)
        if callee is not None and len(callee) == 2 + back:
            if back == 2 and instructions[at].is_jump_target:
                return None
            return callee, function, start
    return None


def _pure_arithmetic(code: types.CodeType) -> bool:
    """A lambda's code whose body is only ``a + b``, ``a - b`` or ``a * b`` (either order) on its two parameters: no
    defaults, closures, globals or other calls, so running it between two items runs nothing but that arithmetic."""
    if code.co_argcount != 2 or code.co_kwonlyargcount or code.co_freevars or code.co_cellvars \
            or code.co_flags & (0x04 | 0x08 | 0x20 | 0x80 | 0x100 | 0x200):  # *args, **kwargs, generator, coroutine...
        return False
    try:
        body = [i for i in _instructions(code) if i.opname not in ("RESUME", "NOP")]
    except Exception:  # noqa: BLE001
        return False
    names: list[object] = []
    for instruction in body[:-2]:
        if instruction.opname == "LOAD_FAST":
            names.append(instruction.argval)
        elif instruction.opname == "LOAD_FAST_LOAD_FAST" and isinstance(instruction.argval, tuple):  # 3.13
            names.extend(instruction.argval)
        else:
            return False
    return (len(body) >= 3 and sorted(map(str, names)) == sorted(code.co_varnames[:2]) and len(names) == 2
            and body[-2].opname == "BINARY_OP" and body[-2].argrepr in _PURE_OPERATORS and body[-1].opname == "RETURN_VALUE")


_METHOD_SITES: dict[tuple[types.CodeType, int], tuple[str, tuple] | None] = {}


_QUIET_LOADS = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_CONST", "LOAD_DEREF"})  # they run no code at all


def method_call(frame: types.FrameType, name: str) -> bool:
    """Whether the frame is reading attribute ``name`` to call it at once: a method load whose arguments are only
    local names, constants and globals, or ``+``, ``-``, ``*`` of two of them that are plain numbers now (``n + 1``),
    so nothing (no project code) can run, and nothing can fail, between the read and the call."""
    key = (frame.f_code, frame.f_lasti)
    site = _METHOD_SITES.get(key, "")
    if site == "":
        site = _METHOD_SITES[key] = _method_site(*key) if len(_METHOD_SITES) < 100_000 else None
    if site is None or site[0] != name:
        return False
    return all(_quiet_arithmetic(frame, *operation) for operation in site[1])


_PLAIN_NUMBERS = (int, bool, float)
_FLOAT_INT = 2**1023  # an int below this in size turns into a float without failing


def _quiet_arithmetic(frame: types.FrameType, operator_text: str, left: tuple, right: tuple) -> bool:
    """Whether ``left <op> right``, each read as the frame holds it now, is arithmetic on plain numbers that runs no
    code and cannot fail (an int too large for a float meeting a float fails), or ``+`` of two strs."""
    values = []
    for load in (left, right):
        if load[0] == "const":
            values.append(load[1])
            continue
        namespaces = (frame.f_locals,) if load[0] == "local" else (frame.f_globals, frame.f_builtins)
        found = next((namespace[load[1]] for namespace in namespaces if load[1] in namespace), _MISSING)
        if found is _MISSING:
            return False
        values.append(found)
    kinds = (type(values[0]), type(values[1]))
    if kinds == (str, str):
        return operator_text == "+"
    if not all(kind in _PLAIN_NUMBERS for kind in kinds):
        return False
    if float in kinds and any(type(v) is not float and not -_FLOAT_INT < v < _FLOAT_INT for v in values):
        return False
    return True


_MISSING = object()


def _method_site(code: types.CodeType, offset: int) -> tuple[str, tuple] | None:
    """The attribute the method load at ``offset`` reads and the arithmetic its arguments do, if the instructions
    after it up to its call are quiet loads (``_QUIET_LOADS``, globals, a lambda made from its code) or ``+``, ``-``,
    ``*`` of two such loads (checked as they run, ``_quiet_arithmetic``) and nothing jumps into them; None otherwise."""
    try:
        instructions = _instructions(code)
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
    stack: list[tuple | None] = []  # what each argument is: a load ("local"/"global" name, "const" value), else None
    operations: list[tuple[str, tuple, tuple]] = []
    at += 1
    while at < len(instructions):
        instruction = instructions[at]
        if instruction.is_jump_target:
            return None
        if instruction.opname == "MAKE_FUNCTION" and instruction.arg == 0 and stack and instructions[at - 1].opname == "LOAD_CONST" \
                and isinstance(instructions[at - 1].argval, types.CodeType):
            stack[-1], at = None, at + 1  # a lambda written there (its code constant, made a function: nothing runs, nothing can fail)
            continue
        if instruction.opname == "BINARY_OP" and instruction.argrepr in ("+", "-", "*") and len(stack) >= 2 \
                and stack[-1] is not None and stack[-2] is not None:
            right, left = stack.pop(), stack.pop()
            operations.append((instruction.argrepr, left, right))  # type: ignore[arg-type]
            stack.append(None)
            at += 1
            continue
        if instruction.opname in _QUIET_LOADS:
            kind = "const" if instruction.opname == "LOAD_CONST" else "local"
            stack.append((kind, instruction.argval))
        elif instruction.opname == "LOAD_GLOBAL" and not instruction.arg & 1:
            stack.append(("global", instruction.argval))
        else:
            break
        at += 1
    count = len(stack)
    if at < len(instructions) and instructions[at].opname == "KW_NAMES":
        at += 1
    if at < len(instructions) and instructions[at].opname == "PRECALL":  # 3.11
        if instructions[at].arg != count:
            return None
        at += 1
    if at < len(instructions) and instructions[at].opname == "CALL" and instructions[at].arg == count and not instructions[at].is_jump_target:
        return (load.argval, tuple(operations)) if isinstance(load.argval, str) else None
    return None


# What a portable lambda's code may do (``portable_lambda``): read its arguments and constants, name the pure
# builtins, call them, compute, compare, branch forward and return. Never an attribute or an item of an argument (that
# would reach inside it, where the test's objects are stand-ins in the sandbox), never a loop, a name of the module's.
_PORTABLE_OPS = frozenset({
    "RESUME", "NOP", "LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_LOAD_FAST", "LOAD_CONST", "LOAD_GLOBAL", "PUSH_NULL",
    "PRECALL", "CALL", "KW_NAMES", "BINARY_OP", "COMPARE_OP", "IS_OP", "CONTAINS_OP", "UNARY_NOT", "UNARY_NEGATIVE",
    "UNARY_INVERT", "TO_BOOL", "BUILD_TUPLE", "COPY", "SWAP", "POP_TOP", "RETURN_VALUE", "RETURN_CONST", "JUMP_FORWARD",
    "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_FORWARD_IF_NONE", "POP_JUMP_FORWARD_IF_NOT_NONE",
    "POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE", "JUMP_IF_FALSE_OR_POP",
    "JUMP_IF_TRUE_OR_POP",
})  # fmt: skip


_PORTABLE: dict[types.CodeType, bytes] = {}


def portable_lambda(function: object) -> tuple[bytes, bytes] | None:
    """(this interpreter's magic number, the marshalled code) of a test's lambda the sandbox may run itself instead of
    calling it back: a plain lambda (no closure, defaults or generator) whose code only does ``_PORTABLE_OPS`` with
    scalar constants and names only pure builtins (``PURE_BUILTINS``, as the test module's own namespace leaves them:
    none shadowed); it then computes in the sandbox exactly what it computes here. None for any other function."""
    if type(function) is not types.FunctionType or function.__name__ != "<lambda>" or function.__closure__ is not None \
            or function.__defaults__ is not None or function.__kwdefaults__:
        return None
    code = function.__code__
    portable = _PORTABLE.get(code)
    if portable is None:
        # Sent without where it was written: the test tree's path on this side is not the project's to read
        portable = marshal.dumps(code.replace(co_filename="<test>", co_firstlineno=1)) if _portable_code(code) else b""
        if len(_PORTABLE) < 100_000:
            _PORTABLE[code] = portable
    if not portable or any(name in function.__globals__ for name in code.co_names):  # a builtin the module shadows
        return None
    return importlib.util.MAGIC_NUMBER, portable


def _portable_code(code: types.CodeType) -> bool:
    if code.co_freevars or code.co_cellvars or code.co_flags & (0x20 | 0x80 | 0x100 | 0x200):  # generators, coroutines
        return False
    if any(type(c) not in (type(None), bool, int, float, str, bytes) for c in code.co_consts):  # no nested code
        return False
    try:
        instructions = _instructions(code)
    except Exception:  # noqa: BLE001
        return False
    for instruction in instructions:
        if instruction.opname not in _PORTABLE_OPS:
            return False
        if instruction.opname == "LOAD_GLOBAL" and instruction.argval not in PURE_BUILTINS:
            return False
    return set(code.co_names) <= set(PURE_BUILTINS)


_COMPARE_SITES: dict[tuple[types.CodeType, int], bool] = {}


_COMPARE_OP = dis.opmap["COMPARE_OP"]


def compare_site(frame: types.FrameType) -> bool:
    """Whether the frame's current instruction is a comparison operator (not a call of ``__eq__`` and kin)."""
    key = (frame.f_code, frame.f_lasti)
    site = _COMPARE_SITES.get(key)
    if site is None:
        code = frame.f_code.co_code  # the unspecialised bytecode: COMPARE_OP whatever the interpreter made of it
        site = 0 <= frame.f_lasti < len(code) and code[frame.f_lasti] == _COMPARE_OP
        if len(_COMPARE_SITES) < 100_000:
            _COMPARE_SITES[key] = site
    return site
