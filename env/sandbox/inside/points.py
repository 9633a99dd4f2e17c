"""Where a worker thread of the race explorer may be switched, read off the running frame (standard library only).

    handlers = classify(code)                        # offset -> (handler, *arguments) for every scheduling point
    handlers[offset][0](schedule, me, frame, *handlers[offset][1:])   # at that instruction: tell the schedule
    stack_read_ok()                                  # False: this interpreter's frames are not laid out as read here

The tracer (schedule.py) calls a handler at each opcode event of a point; the handler reads the frame's value stack
(``_peek``: a call's callee and arguments, the object a ``with`` enters, an operator's operands) and tells the schedule
what is about to happen (``point``, ``acquire``, ``fail``). Handlers run inside the tracer's callback, where CPython
traces nothing: no frame of this file is ever traced. Also here, the C-level hook both use (``TRACEFUNC``,
``set_trace``: no Python object behind the tracer). schedule.py loads this file by path, before isolation and any
submitted code.
"""

import _thread
import ctypes
import dis
import types

LOCK = type(_thread.allocate_lock())
RLOCK = _thread.RLock
IMMUTABLE = (int, float, complex, str, bytes, bool, type(None), range)
_NOT_STATE = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType, LOCK, RLOCK)
_PYTHON_CODE = (types.FunctionType, types.MethodType)  # a call into Python: its own frame gets its own points
_NULL = object()  # an empty stack slot
ANY = ("x", None)  # an access that may touch anything (a C call, a subscript, a cell ...)


# -- the C-level trace hook: nothing Python-visible holds the tracer ----------------------------------

EVENT_CALL, EVENT_OPCODE = 0, 7
TRACEFUNC = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.py_object, ctypes.c_int, ctypes.c_void_p)
set_trace = ctypes.pythonapi.PyEval_SetTrace
set_trace.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
set_trace.restype = None


_ADDRESS, _INT, _OBJECT = ctypes.c_void_p.from_address, ctypes.c_int.from_address, ctypes.py_object.from_address


def _peek(frame, depth):
    """The value ``depth`` slots below the top of ``frame``'s value stack (CPython 3.11's layout: a
    PyFrameObject points at its _PyInterpreterFrame at offset 24; that holds ``stacktop`` at 64 and its
    ``localsplus`` array at 72). Valid during an ``opcode`` event, when the interpreter has synced the top.
    (The slot is read as the object it points to in place, without a cast: this runs at most points.)"""
    base = _ADDRESS(id(frame) + 24).value
    slot = base + 72 + 8 * (_INT(base + 64).value - depth)
    return _OBJECT(slot).value if _ADDRESS(slot).value else _NULL


# -- the scheduling points of one code object -----------------------------------------------------


def _point(schedule, me, frame, access=ANY):
    schedule.point(me, frame, "", access)


def _global_point(schedule, me, frame, name):
    value = frame.f_globals.get(name, _NULL)
    if value is not _NULL and not isinstance(value, _NOT_STATE):  # a module global that is state
        schedule.point(me, frame, "", ("r", "global " + name))


def _attr_point(schedule, me, frame, name):
    if not isinstance(_peek(frame, 1), _NOT_STATE):  # reading a module's or a lock's attribute is not state
        schedule.point(me, frame, "", ("r", name))


def _operands_point(schedule, me, frame, count):
    if not all(isinstance(_peek(frame, d), IMMUTABLE) for d in range(1, count + 1)):
        schedule.point(me, frame)


def _call_point(schedule, me, frame, count, kwnames):
    first = _peek(frame, count + 2)
    if first is _NULL:
        func, depth = _peek(frame, count + 1), count
    else:
        func, depth = first, count + 1
    if isinstance(func, _PYTHON_CODE):
        return  # its frame is traced: its own points
    args = [_peek(frame, d) for d in range(depth, 0, -1)]
    positional = args[: len(args) - len(kwnames)]
    keywords = dict(zip(kwnames, args[len(positional) :], strict=True))
    _c_call(schedule, me, frame, func, positional, keywords)


def _call_ex_point(schedule, me, frame, has_kwargs):
    func = _peek(frame, 3 if has_kwargs else 2)
    args = _peek(frame, 2 if has_kwargs else 1)
    keywords = _peek(frame, 1) if has_kwargs else {}
    if isinstance(func, _PYTHON_CODE):
        return
    _c_call(schedule, me, frame, func, list(args) if type(args) is tuple else [], keywords if type(keywords) is dict else {})


def _with_point(schedule, me, frame):
    manager = _peek(frame, 1)
    if type(manager) in (LOCK, RLOCK):
        schedule.acquire(me, frame, manager, True, -1, "entering `with` on a lock")
    elif not isinstance(getattr(type(manager), "__enter__", None), types.FunctionType):
        schedule.point(me, frame)  # a context manager in C: anything may happen in its __enter__
    # (one written in Python runs in a traced frame, with points of its own)


_ACQUIRING = frozenset({"acquire", "acquire_lock", "__enter__", "_acquire_restore"})


def _c_call(schedule, me, frame, func, args, keywords):
    """A call into C code: a lock operation decided before it runs, anything else a plain point."""
    kind = type(func)
    if kind is types.MethodDescriptorType and func.__objclass__ in (LOCK, RLOCK) and args:
        owner, name, args = args[0], func.__name__, args[1:]
    elif kind is types.BuiltinMethodType and type(getattr(func, "__self__", None)) in (LOCK, RLOCK):
        owner, name = func.__self__, func.__name__
    else:
        if any(not isinstance(a, IMMUTABLE) for a in args) or any(not isinstance(v, IMMUTABLE) for v in keywords.values()) or not (
            kind is types.BuiltinFunctionType and isinstance(getattr(func, "__self__", None), (types.ModuleType, type(None)))
        ):
            schedule.point(me, frame)
        return
    if name not in _ACQUIRING:
        released = name in ("release", "release_lock", "__exit__", "_release_save")
        schedule.point(me, frame, "at a lock call", ("release", schedule.lock_key(owner, frame)) if released else ANY)
        if released:
            schedule.holders.pop(id(owner), None)
        return
    blocking, timeout = True, -1
    if name in ("acquire", "acquire_lock"):
        values = list(args) + [None] * 2
        blocking = keywords.get("blocking", values[0] if len(args) > 0 else True)
        timeout = keywords.get("timeout", values[1] if len(args) > 1 else -1)
    if type(blocking) not in (bool, int) or type(timeout) not in (int, float):
        schedule.fail("line %d calls %s() with arguments the check cannot read" % (frame.f_lineno, name))
        return
    schedule.acquire(me, frame, owner, bool(blocking), -1 if blocking and timeout < 0 else timeout, "acquiring a lock")


_ALWAYS = frozenset(
    {"STORE_ATTR", "DELETE_ATTR", "STORE_GLOBAL", "DELETE_GLOBAL", "LOAD_DEREF", "STORE_DEREF", "LOAD_CLASSDEREF", "BINARY_SUBSCR",
     "STORE_SUBSCR", "DELETE_SUBSCR", "LOAD_NAME", "STORE_NAME", "WITH_EXCEPT_START", "FOR_ITER", "GET_ITER"}
)
_OPERANDS = {"BINARY_OP": 2, "COMPARE_OP": 2, "CONTAINS_OP": 2, "IS_OP": 0, "UNPACK_SEQUENCE": 1, "UNPACK_EX": 1,
             "LIST_EXTEND": 1, "SET_UPDATE": 1, "DICT_UPDATE": 1, "DICT_MERGE": 1}
_KW_NAMES = dis.opmap["KW_NAMES"]


def classify(code):
    """offset -> (handler, *arguments) for every scheduling point of ``code``."""
    found = {}
    raw = code.co_code
    for ins in dis.get_instructions(code):
        op = ins.opname
        if op in ("STORE_ATTR", "DELETE_ATTR"):
            found[ins.offset] = (_point, ("w", code.co_names[ins.arg]))
        elif op in ("STORE_GLOBAL", "DELETE_GLOBAL"):
            found[ins.offset] = (_point, ("w", "global " + code.co_names[ins.arg]))
        elif op in _ALWAYS:
            found[ins.offset] = (_point,)
        elif op == "LOAD_GLOBAL":
            found[ins.offset] = (_global_point, code.co_names[ins.arg >> 1])
        elif op in ("LOAD_ATTR", "LOAD_METHOD"):
            found[ins.offset] = (_attr_point, code.co_names[ins.arg])
        elif _OPERANDS.get(op):
            found[ins.offset] = (_operands_point, _OPERANDS[op])
        elif op == "CALL":
            # KW_NAMES, when present, sits just before this call's PRECALL (two code units of 2 bytes)
            names = code.co_consts[raw[ins.offset - 5]] if ins.offset >= 6 and raw[ins.offset - 6] == _KW_NAMES else ()
            found[ins.offset] = (_call_point, ins.arg, tuple(names))
        elif op == "CALL_FUNCTION_EX":
            found[ins.offset] = (_call_ex_point, bool(ins.arg & 1))
        elif op == "BEFORE_WITH":
            found[ins.offset] = (_with_point,)
    return found


# -- a self-test of the frame layout, before any submission is judged -------------------------------


def stack_read_ok():
    """The stack read at a ``with`` must find the very object entered, or this interpreter is not one we know
    (explorer.py asks once it knows the version is one it is validated on)."""
    marker = _thread.allocate_lock()
    seen = []

    def probe(_obj, frame, what, _arg):
        if what == EVENT_CALL and frame.f_code is _SELF_TEST.__code__:
            frame.f_trace_opcodes = True
        elif what == EVENT_OPCODE and frame.f_code is _SELF_TEST.__code__ and frame.f_code.co_code[frame.f_lasti] == dis.opmap["BEFORE_WITH"]:
            seen.append(_peek(frame, 1) is marker)
        return 0

    tracer = TRACEFUNC(probe)
    set_trace(ctypes.cast(tracer, ctypes.c_void_p), None)
    try:
        _SELF_TEST(marker)
    finally:
        set_trace(None, None)
    return seen == [True]


def _SELF_TEST(lock):
    with lock:
        return 1
