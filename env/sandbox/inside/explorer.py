"""Controlled interleavings of a submission's own code: the race detector's in-process half, run in the sandbox child.

    result = explore(module, filename, plan)    # scenarios and schedules from the trusted side
    # -> {"schedules": [...], "tampered": [...]}: what each schedule observed; the trusted side judges it
    result = hammer(module, plan)               # a fresh process: real threads, no tracer (hammer.py)
    result = explore(module, filename, {..., "replay": {...}})   # one schedule again, its story recorded (trace_report)
    result = explore(module, filename, {"cls": ..., "model": True, "scenarios": [...]})   # a class of the race family

A plan with ``"model"`` (the race family, env/families/race) runs calls with arguments on a fresh ``cls()``: each
scenario's "setup", "threads" and "observe" hold [name, [args...]] calls, the last made once the threads finished to
read the final state; every schedule's results and final reads come back as plain data (ints, bools, strings, None,
lists of them, by exact type) and exceptions as the built-in class's name, for the trusted side to judge against its
sequential model (env/families/race/linearize.py): the child judges nothing and stops early only when a run stops.

The OS scheduler decides nothing in ``explore``. Each scenario runs its worker threads on one fresh object (put
first in the scenario's start state: a count, a peak and calls counted, drawn by the trusted side; hammer.py's
``Starts``), one thread at a time: a thread runs until it reaches a *scheduling point* and the schedule says which
thread runs next. Points sit before every bytecode that may read or write shared state (attributes,
globals, subscripts, cells, operations on mutable operands) and before every call into C code (so a
read-modify-write done through ``getattr``/``setattr``, ``operator`` or a container method is split
between its calls), in the submission's frames and in every Python frame it calls into (the standard
library's too). Two strategies share that machinery:

- a sweep: two threads, one preemption, at every scheduling point of the first thread in turn, in
  both orders. A lost update between two threads is a depth-2 bug, so the sweep finds it every time;
- PCT (Burckhardt et al., 2010): random thread priorities, the highest-priority enabled thread
  runs, and at d-1 random points the running thread drops below all others; seeded by the trusted
  side (from the server's secret), for bugs that need three threads or more preemptions.

Locks are the real ones, never replaced: the decision is made at the real lock call *before* it runs
(its arguments read off the frame's value stack), so a thread that would block on a lock another paused
thread holds is parked and another runs, and the real call never blocks; a failed try-acquire lets its
thread fail once and then waits until the lock is free, so spin locks finish; all threads parked is a
deadlock. What the submission sees is a plain process: ``threading`` untouched (lock types, reprs,
identities), ``sys.gettrace()``/``sys.getprofile()`` None (the tracer is installed in C with no Python
object behind it), worker threads that are ordinary ``threading.Thread`` objects with default names and no
target or arguments, and no harness object reachable from a module global or a thread through public or
single-underscore attributes. What an in-process check cannot hide (a frame's ``f_trace_opcodes``,
timing) is why the trusted side also reviews the lock discipline statically and runs real threads, and
passes a submission only when every check agrees.

The tracer reads CPython's frame layout, so it runs only on the versions it is validated on
(``VALIDATED``) and refuses elsewhere. Standard library only: this file is loaded by path in the child
before isolation, like the debugger's tracer.
"""

import _thread
import builtins
import ctypes
import dis
import sys
import threading
import types

VALIDATED = ((3, 11),)  # CPython versions whose frame layout this file reads (see _peek)
MAX_STEPS = 20_000  # scheduling points in one schedule: a spin that never yields is a failure, not a hang
BUDGET = "its threads did not finish within %d scheduling points" % MAX_STEPS
QUIET_SECONDS = 3.0  # no scheduling point for this long: a thread blocked or computes where the check cannot look
MAX_RECORD = 4000  # entries of a replay's story (trace_report): points, switches, calls

_FILE = (lambda: 0).__code__.co_filename  # this file's frames (the harness) are never traced
_LOCK = type(_thread.allocate_lock())
_RLOCK = _thread.RLock
_IMMUTABLE = (int, float, complex, str, bytes, bool, type(None), range)
_NOT_STATE = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType, _LOCK, _RLOCK)
_PYTHON_CODE = (types.FunctionType, types.MethodType)  # a call into Python: its own frame gets its own points
_NULL = object()  # an empty stack slot
_ANY = ("x", None)  # an access that may touch anything (a C call, a subscript, a cell ...)

_active = None  # the Schedule running now, or None
_tampered = []  # what the submission did to the tracer


def _sibling(filename, name):
    import importlib.util
    import os

    spec = importlib.util.spec_from_file_location(name, os.path.join(os.path.dirname(_FILE), filename))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Files of this folder this one uses, loaded with it (before isolation and any submitted code), never in sys.modules:
# the real-threads run, the sweep's reduction (which preemptions give a schedule already run), and the child's own
# quick look at an observation (to stop early)
_HAMMER = _sibling("hammer.py", "_adbg_hammer")
_REDUCTION = _sibling("reduction.py", "_adbg_reduction")
_PLAUSIBLE = _sibling("plausible.py", "_adbg_plausible")
_RUNS = _sibling("plan_runs.py", "_adbg_plan_runs")  # a scenario's runs, in the harness's own thread only


# -- the tracer: C-level, so that nothing Python-visible holds it ---------------------------------

_EVENT_CALL, _EVENT_OPCODE = 0, 7
_TRACEFUNC = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.py_object, ctypes.c_int, ctypes.c_void_p)
_set_trace = ctypes.pythonapi.PyEval_SetTrace
_set_trace.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
_set_trace.restype = None


_ADDRESS, _INT, _OBJECT = ctypes.c_void_p.from_address, ctypes.c_int.from_address, ctypes.py_object.from_address


def _peek(frame, depth):
    """The value ``depth`` slots below the top of ``frame``'s value stack (CPython 3.11's layout: a
    PyFrameObject points at its _PyInterpreterFrame at offset 24; that holds ``stacktop`` at 64 and its
    ``localsplus`` array at 72). Valid during an ``opcode`` event, when the interpreter has synced the top.
    (The slot is read as the object it points to in place, without a cast: this runs at most points.)"""
    base = _ADDRESS(id(frame) + 24).value
    slot = base + 72 + 8 * (_INT(base + 64).value - depth)
    return _OBJECT(slot).value if _ADDRESS(slot).value else _NULL


def _event(_obj, frame, what, _arg):
    # Only worker threads carry this tracer, and only the schedule's current worker runs: the others are parked
    # inside this function (where CPython sends a thread no further events) or blocked outside the submission.
    try:
        schedule = _active
        if schedule is None:
            return 0
        me = schedule.current
        if me is None or not me.in_op:
            return 0
        if what == _EVENT_OPCODE:
            handler = _CLASSIFIED.get(frame.f_code)
            if handler is None:
                handler = _CLASSIFIED[frame.f_code] = _classify(frame.f_code)
            handler = handler.get(frame.f_lasti)
            if handler is not None:
                handler[0](schedule, me, frame, *handler[1:])
        elif what == _EVENT_CALL:
            code = frame.f_code
            if code is _PROBE_CODE:
                me.traced = True
            elif code.co_filename != _FILE:
                frame.f_trace_opcodes = True
    except BaseException as exc:  # never into the run's output; the schedule fails closed instead
        if _active is not None:
            _active.fail("the concurrency check failed internally (%s: %s)" % (type(exc).__name__, _text(exc)))
    return 0


_TRACER = _TRACEFUNC(_event)
_TRACER_ADDRESS = ctypes.cast(_TRACER, ctypes.c_void_p)
_PROBE_CODE = compile("def probe():\n    return 0\n", "<probe>", "exec").co_consts[0]
_PROBE = types.FunctionType(_PROBE_CODE, {})
# What a worker thread shows as its target: a plain function, as a plain thread's is, that holds and does nothing
# (no globals, no closure), so neither `_target is None` nor a walk from it tells or reaches anything.
_TARGET = types.FunctionType(compile("def worker():\n    pass\n", "<string>", "exec").co_consts[0], {})


# -- the scheduling points of one code object -----------------------------------------------------


def _point(schedule, me, frame, access=_ANY):
    schedule.point(me, frame, "", access)


def _global_point(schedule, me, frame, name):
    value = frame.f_globals.get(name, _NULL)
    if value is not _NULL and not isinstance(value, _NOT_STATE):  # a module global that is state
        schedule.point(me, frame, "", ("r", "global " + name))


def _attr_point(schedule, me, frame, name):
    if not isinstance(_peek(frame, 1), _NOT_STATE):  # reading a module's or a lock's attribute is not state
        schedule.point(me, frame, "", ("r", name))


def _operands_point(schedule, me, frame, count):
    if not all(isinstance(_peek(frame, d), _IMMUTABLE) for d in range(1, count + 1)):
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
    if type(manager) in (_LOCK, _RLOCK):
        schedule.acquire(me, frame, manager, True, -1, "entering `with` on a lock")
    elif not isinstance(getattr(type(manager), "__enter__", None), types.FunctionType):
        schedule.point(me, frame)  # a context manager in C: anything may happen in its __enter__
    # (one written in Python runs in a traced frame, with points of its own)


_ACQUIRING = frozenset({"acquire", "acquire_lock", "__enter__", "_acquire_restore"})


def _c_call(schedule, me, frame, func, args, keywords):
    """A call into C code: a lock operation decided before it runs, anything else a plain point."""
    kind = type(func)
    if kind is types.MethodDescriptorType and func.__objclass__ in (_LOCK, _RLOCK) and args:
        owner, name, args = args[0], func.__name__, args[1:]
    elif kind is types.BuiltinMethodType and type(getattr(func, "__self__", None)) in (_LOCK, _RLOCK):
        owner, name = func.__self__, func.__name__
    else:
        if any(not isinstance(a, _IMMUTABLE) for a in args) or any(not isinstance(v, _IMMUTABLE) for v in keywords.values()) or not (
            kind is types.BuiltinFunctionType and isinstance(getattr(func, "__self__", None), (types.ModuleType, type(None)))
        ):
            schedule.point(me, frame)
        return
    if name not in _ACQUIRING:
        released = name in ("release", "release_lock", "__exit__", "_release_save")
        schedule.point(me, frame, "at a lock call", ("release", schedule.lock_key(owner, frame)) if released else _ANY)
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


def _classify(code):
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


_CLASSIFIED = {}  # code object -> its points


# -- the worker threads -----------------------------------------------------------------------------

_spawning = []
_spawned = _thread.allocate_lock()


def worker():
    """A worker thread's body: takes its _Worker, leaves nothing of the harness on its Thread object."""
    me = _spawning.pop()
    me.ident = _thread.get_ident()
    thread = threading.current_thread()
    thread._target, thread._args, thread._kwargs = _TARGET, (), {}
    _spawned.release()
    _set_trace(_TRACER_ADDRESS, None)
    try:
        me.serve()
    finally:
        _set_trace(None, None)


class _Worker:
    def __init__(self, index, schedule):
        self.index, self.schedule = index, schedule
        self.token = _thread.allocate_lock()
        self.token.acquire()
        self.ops = []
        self.results = []
        self.done = True
        self.waiting = None  # the lock it waits for
        self.spin = None  # the lock its try-acquire just failed on: it waits for it at its next point
        self.timed = False
        self.priority = 0
        self.in_op = False
        self.traced = False
        self.ident = 0
        self.where = None  # the frame of its last point (for a message when it stops making progress)
        self.trail = []  # per point: (locks held, the access about to happen), for the sweep's reduction
        self.held = {}  # lock key -> times held
        self.releasing = None  # the lock key its last point was about to release
        self.thread = None

    def serve(self):
        while True:
            self.token.acquire()
            if self.ops is None:
                return
            target = self.schedule.target
            story = self.schedule.record
            model = self.schedule.model
            for op in self.ops:
                name, args = _op(op)
                if story is not None:
                    story.append(["call", self.index, name, _snapshot(target)])
                self.in_op = True
                try:
                    value = getattr(target, name)(*args)
                    record = [name, _plain(value) if model else _value(value), ""]
                except BaseException as exc:  # the submission's exception: data for the trusted side
                    if model:
                        record = [name, None, _error(exc)]
                    else:
                        record = [name, None, "ValueError" if type(exc) is ValueError else "other: %s: %s" % (type(exc).__name__, _text(exc))]
                self.in_op = False
                self.results.append(record)
                if story is not None:
                    story.append(["return", self.index, name, record, _snapshot(target)])
            self.traced = False
            self.in_op = True
            _PROBE()  # its call event proves the tracer is still this thread's
            self.in_op = False
            if not self.traced:
                _tampered.append("the tracer was removed")
            self.schedule.finish(self)


def _park():
    """A stopped schedule's thread waits here for good: the check is over, and nothing it does counts."""
    forever = _thread.allocate_lock()
    forever.acquire()
    forever.acquire()


# -- the schedule --------------------------------------------------------------------------------


class Schedule:
    """Runs one scenario's workers one at a time, switching where the strategy says."""

    def __init__(self, filename, threads):
        self.filename = filename
        self.workers = [_Worker(i, self) for i in range(threads)]
        self.by_ident = {}
        self.finished = _thread.allocate_lock()
        self.finished.acquire()
        self.stopped = ""
        self.record = None
        self.model = False  # a race-family plan: calls with arguments, plain records (explore's docstring)
        for me in self.workers:
            me.thread = threading.Thread(target=worker, daemon=True)
            _spawning.append(me)
            _spawned.acquire()
            me.thread.start()
            _spawned.acquire()  # until the thread has taken its worker
            _spawned.release()
            self.by_ident[me.ident] = me

    def reset(self, target, ops, first, preempt_at=0, changes=(), priorities=None, record=False):
        self.target, self.current, self.steps, self.log, self.stopped = target, None, 0, [], ""
        # a replay for trace_report: every point, switch and call in order (never in a verdict's run)
        self.record = [] if record else None
        # id(lock) -> (the lock, the worker whose acquire of it this schedule granted last): keyed by id so that no
        # hash or eq of a submission's lock subclass runs, the lock kept alive with it so that its id stays its own
        self.holders = {}
        self.preempt_at, self.changes, self.lowest, self.first_done = preempt_at, set(changes), 0, 0
        # PCT (priorities from 1 up, or change points) or a sweep (all 0, none): decided once, not at every point
        self.pct = bool(self.changes) or any(priorities or ())
        for me, my_ops in zip(self.workers, ops, strict=True):
            me.ops, me.results, me.done, me.waiting, me.spin, me.timed = list(my_ops), [], not my_ops, None, None, False
            me.trail, me.held, me.releasing = [], {}, None
            me.priority = priorities[me.index] if priorities else 0
        self.first = first

    def run(self):
        global _active
        self.current = self.workers[self.first]
        _active = self
        try:
            self.current.token.release()
            seen, quiet = -1, 0.0
            while not self.finished.acquire(True, 0.25):
                if self.steps != seen:
                    seen, quiet = self.steps, 0.0
                    continue
                quiet += 0.25
                if quiet >= QUIET_SECONDS:
                    frame = self.current.where if self.current is not None else None
                    line, function = _where(frame, self.filename)
                    self.stopped = ("a thread made no progress the check can see for %d s: it blocked or computed inside a call the check "
                                    "cannot look into (last seen at line %d in %s)" % (QUIET_SECONDS, line, function or "?"))
                    return
        finally:
            _active = None

    def close(self):
        if self.stopped:
            return  # its threads are parked for good
        for me in self.workers:
            me.ops = None
            me.token.release()
        for me in self.workers:
            me.thread.join(1.0)

    # -- decisions, made by the running worker in its tracer -------------------------------------

    def _free_for(self, me):
        lock = me.waiting
        if lock is None:
            return True
        if type(lock) is _RLOCK:
            owner = _rlock_owner(lock)
            return owner == 0 or owner == me.ident
        return not lock.locked()

    def _enabled(self):
        return [w for w in self.workers if not w.done and self._free_for(w)]

    def _pick(self, me):
        if not self.pct and me is not None and not me.done and me.waiting is None and self.steps != self.preempt_at:
            return me  # a sweep's running thread, enabled and not at its preemption: it goes on (as below, without the list)
        enabled = self._enabled()
        if not enabled:
            return None
        if self.pct:
            if me is not None and self.steps in self.changes:
                self.lowest -= 1
                me.priority = self.lowest  # the running thread drops below every other
            return max(enabled, key=lambda w: (w.priority, -w.index))
        if me is not None and me in enabled:
            if self.steps == self.preempt_at:
                others = [w for w in enabled if w is not me]
                return others[0] if others else me
            return me
        return enabled[0]

    def lock_key(self, lock, frame):
        """A name for ``lock`` that holds across runs (each run has a fresh object): the attribute of the object
        under test or the module global that holds it; None when it is elsewhere."""
        level = [((), self.target)]
        for _ in range(3):  # the object's attributes, theirs (a Condition's lock), and theirs (a Semaphore's)
            deeper = []
            for path, owner in level:
                for name, value in _instance_dict(owner).items():
                    if value is lock:
                        return ("self", *path, name)
                    if type(value) not in (_LOCK, _RLOCK) and not isinstance(value, _IMMUTABLE):
                        deeper.append(((*path, name), value))
            level = deeper
        for name, value in frame.f_globals.items():
            if value is lock:
                return ("global", name)
        return None

    def point(self, me, frame, note="", access=_ANY):
        """A scheduling point reached by the running worker, before ``access``."""
        if self.stopped or me is not self.current:
            self.fail("a thread ran outside its schedule")
            return
        me.where = frame
        if me.releasing is not None:
            key, me.releasing = me.releasing, None
            if me.held.get(key, 0) > 1:
                me.held[key] -= 1
            else:
                me.held.pop(key, None)
        if access[0] == "release":
            me.releasing = access[1]
        me.trail.append((frozenset(me.held), access))
        if self.record is not None and access[0] != "x" and len(self.record) < MAX_RECORD:
            line, function = _where(frame, self.filename)
            self.record.append(["point", me.index, line, function, access[0], _key_text(access[1]), sorted(map(_key_text, me.held))])
        if me.spin is not None:  # its try-acquire failed: it waits until that lock is free
            me.waiting, me.spin = me.spin, None
            self._wait(me, frame)
        self.steps += 1
        if self.steps > MAX_STEPS:
            self._stop(BUDGET)
        nxt = self._pick(me)
        if nxt is not None and nxt is not me:
            self._switch(me, nxt, frame, note)

    def acquire(self, me, frame, lock, blocking, timeout, note):
        """Before a real acquire: a point, then park while another thread holds ``lock``, so the call never blocks."""
        key = self.lock_key(lock, frame)
        self.point(me, frame, note, ("lock", key))
        me.waiting = lock
        free = self._free_for(me)
        me.waiting = None
        if not free and (not blocking or timeout == 0):
            if self.holders.get(id(lock), (None, None))[1] is not me:  # (a thread asking whether it holds the lock itself waits for nothing)
                me.spin = lock  # the call fails now, as it would; the thread waits at its next point
            return
        if not free:
            me.waiting, me.timed = lock, timeout > 0
            self._wait(me, frame)
        self.holders[id(lock)] = (lock, me)
        if key is not None:
            me.held[key] = me.held.get(key, 0) + 1

    def _wait(self, me, frame):
        while not self._free_for(me):
            nxt = self._pick(me)
            if nxt is None:
                timed = [w for w in self.workers if not w.done and w.timed and w.waiting is not None]
                if me in timed:
                    break  # its real call times out (it waits its timeout for real)
                if not timed:
                    self._stop("deadlock: every thread waits for a lock another thread holds")
                nxt = timed[0]
                nxt.waiting = None
            self._switch(me, nxt, frame, "waiting for a lock")
        me.waiting, me.timed = None, False

    def _switch(self, me, nxt, frame, note=""):
        line, function = _where(frame, self.filename)
        self.log.append((me.index, line, function, note, nxt.index))
        if self.record is not None and len(self.record) < MAX_RECORD:
            self.record.append(["switch", me.index, line, function, note, nxt.index])
        self.current = nxt
        nxt.token.release()
        me.token.acquire()

    def _stop(self, reason):
        self.stopped = reason
        self.finished.release()
        _park()

    def fail(self, reason):
        """Called from the tracer: the schedule cannot be judged; the calling thread stops here."""
        if not self.stopped:
            self._stop(reason)
        _park()

    def finish(self, me):
        me.done = True
        if me.index == self.first and not self.first_done:
            self.first_done = self.steps
        nxt = self._pick(None)
        if nxt is None:
            if all(w.done for w in self.workers):
                self.finished.release()
                return
            self.stopped = "deadlock: every thread left waits for a lock another thread holds"
            self.finished.release()
            return
        self.log.append((me.index, 0, "", "finished", nxt.index))
        if self.record is not None and len(self.record) < MAX_RECORD:
            self.record.append(["switch", me.index, 0, "", "finished", nxt.index])
        self.current = nxt
        nxt.token.release()


def _instance_dict(obj):
    """``obj``'s attribute dict through the C descriptor only (never a ``__dict__`` the submission defined)."""
    for klass in type(obj).__mro__:
        attr = klass.__dict__.get("__dict__")
        if attr is not None:
            return attr.__get__(obj) if type(attr) is types.GetSetDescriptorType else {}
    return {}


def _value(value):  # (the harness's helpers live in this file: its frames are never traced, a sibling's would be)
    return value if type(value) in (int, bool, type(None)) else "<%s>" % type(value).__name__


def _op(op):
    """A planned call: a name (the counter's plans), or [name, [args...]] (a model plan's)."""
    return (op, ()) if type(op) is str else (op[0], tuple(op[1]))


def _plain(value, depth=0):
    """A value as plain data by exact type, compared by identity (a subclass, or a class whose metaclass defines
    ``__eq__``, could pose as anything): its type's name otherwise."""
    kind = type(value)
    if kind is int or kind is bool or value is None:
        return value
    if kind is str:
        return value[:200]
    if (kind is list or kind is tuple) and depth < 4 and len(value) <= 64:
        return [_plain(v, depth + 1) for v in value]
    return "<%s>" % _text_name(kind)


def _text_name(kind):
    name = type.__dict__["__name__"].__get__(kind)  # the C slot: never a property the class defined
    return name if type(name) is str else "?"


# the built-in exception classes, read before any submitted code runs (which could rebind a name in builtins)
_BUILTIN_ERRORS = tuple(v for v in vars(builtins).values() if type(v) is type and issubclass(v, BaseException))


def _error(exc):
    """A call's exception for a model plan: the built-in class's name (which no class the code defines can take)."""
    kind = type(exc)
    for builtin in _BUILTIN_ERRORS:
        if kind is builtin:
            return _text_name(kind)
    return "other: %s: %s" % (_text_name(kind), _text(exc))


def _text(exc):
    try:
        return str(exc)[:200]
    except BaseException:
        return "<unprintable>"


def _rlock_owner(lock):
    """An RLock's owner thread (0: free), from its C repr: 'owner=N' is the only place it is shown."""
    text = repr(lock)
    start = text.find("owner=") + 6
    end = text.find(" ", start)
    return int(text[start:end])


def _where(frame, filename):
    """The submission's line and function a switch happened in (from a library frame: its nearest caller)."""
    while frame is not None and frame.f_code.co_filename != filename:
        frame = frame.f_back
    return (frame.f_lineno, frame.f_code.co_name) if frame is not None else (0, "")


def _key_text(key):
    """A lock key or an accessed name as text: ("self", "_lock") -> "self._lock"."""
    if key is None:
        return ""
    return ".".join(map(str, key)) if type(key) is tuple else str(key)


def _snapshot(target):
    """The object's attributes of plain value (through the C descriptor: no code of the submission runs)."""
    return {str(k): v for k, v in _instance_dict(target).items() if type(v) in (int, bool, type(None))}


# -- a self-test of the frame layout, before any submission is judged -------------------------------


def _layout_ok():
    """The stack read at a ``with`` must find the very object entered, or this interpreter is not one we know."""
    if sys.implementation.name != "cpython" or sys.version_info[:2] not in VALIDATED:
        return False
    marker = _thread.allocate_lock()
    seen = []

    def probe(_obj, frame, what, _arg):
        if what == _EVENT_CALL and frame.f_code is _SELF_TEST.__code__:
            frame.f_trace_opcodes = True
        elif what == _EVENT_OPCODE and frame.f_code is _SELF_TEST.__code__ and frame.f_code.co_code[frame.f_lasti] == dis.opmap["BEFORE_WITH"]:
            seen.append(_peek(frame, 1) is marker)
        return 0

    tracer = _TRACEFUNC(probe)
    _set_trace(ctypes.cast(tracer, ctypes.c_void_p), None)
    try:
        _SELF_TEST(marker)
    finally:
        _set_trace(None, None)
    return seen == [True]


def _SELF_TEST(lock):
    with lock:
        return 1


def refusal():
    """Why this interpreter cannot run the check ("" when it can)."""
    version = "%s %d.%d.%d" % (sys.implementation.name, *sys.version_info[:3])
    if _LAYOUT_OK:
        return ""
    return "the concurrency check is validated on CPython %s only; this is %s" % (
        ", ".join("%d.%d" % v for v in VALIDATED), version)


_LAYOUT_OK = _layout_ok()


# -- one check: every scenario of the plan ------------------------------------------------------


def explore(module, filename, plan):
    """Run the plan's scenarios on fresh instances of ``plan["cls"]``; report what each schedule observed.

    A scenario is {"setup": [op, ...] run before the threads start, "threads": [[op, ...], ...]} and either "sweep": true (two
    threads, one preemption at every point, both orders) or "priorities" and "changes" (PCT: fractions of the scenario's
    length where the running thread is demoted); and "start_state" ([count, peak]), "warmup" (calls made first) and "calls":
    each run's object takes the warm-up calls, then that state and as many more calls on its counters (hammer.py's
    ``Starts``), then the setup; each observation's "start_used" says which start it had. Stops at the first schedule whose
    observation a correct object could not give. Scenarios with as many threads share one set of workers, as a server's would.
    """
    why = refusal()
    if why:
        return {"refused": why, "schedules": [], "tampered": []}
    cls = getattr(module, plan["cls"])
    if plan.get("replay"):
        return _replay(cls, filename, plan)
    if plan.get("model"):
        return _RUNS.explore(_harness(), cls, filename, plan)
    starts = _HAMMER.Starts(cls)  # each run's fresh object, in its scenario's start state (hammer.py)
    observed = []
    pace = []  # scheduling points per operation, from the sweeps' runs without preemption
    schedule = None
    try:
        # Work that grows with the count (a `reset` decrementing one by one) cannot end within the budget from 10^8: no race,
        # so such a scenario and the later ones run from the API's state, judged from the start they report; what the set
        # start would have shown is the review's to prove. A budget run out from the API's state still fails.
        grows = False
        for number, planned in enumerate(plan["scenarios"]):
            api = _HAMMER.api_scenario(planned)
            for scenario in (api,) if grows else (planned, api):
                if schedule is None or schedule.stopped or len(schedule.workers) != len(scenario["threads"]):
                    if schedule is not None:
                        schedule.close()
                    schedule = Schedule(filename, len(scenario["threads"]))
                once = _RUNS.counter_once(_harness(), schedule, starts, scenario)
                for result in _REDUCTION.schedules(once, scenario, pace, _PLAUSIBLE.plausible):
                    if scenario is planned and result["stopped"] == BUDGET and result["start_used"] != api["start_state"]:
                        grows = True
                        break  # (its threads are parked: a fresh schedule runs it again)
                    result.update(scenario=number, from_api=scenario is api)
                    observed.append(result)
                    if result["stopped"] or _tampered or not _PLAUSIBLE.plausible(result, scenario):
                        result.pop("trails", None)
                        return {"schedules": observed, "tampered": list(dict.fromkeys(_tampered))}
                    del result["log"], result["trails"]  # only a failing schedule's interleaving is explained
                if scenario is api or not grows:
                    break
    finally:
        if schedule is not None:
            schedule.close()
    return {"schedules": observed, "tampered": list(dict.fromkeys(_tampered))}


def _replay(cls, filename, plan):
    """One schedule an earlier run made, again with its story recorded (trace_report): the same interleaving."""
    replay = plan["replay"]
    scenario = plan["scenarios"][replay["scenario"]]
    if replay.get("from_api"):
        scenario = _HAMMER.api_scenario(scenario)
    schedule = Schedule(filename, len(scenario["threads"]))
    schedule.model = bool(plan.get("model"))
    h = _harness()
    once = _RUNS.once(h, schedule, cls, scenario) if schedule.model else _RUNS.counter_once(h, schedule, _HAMMER.Starts(cls), scenario)
    try:
        result = once(first=replay["first"], preempt_at=replay["preempt_at"], priorities=replay.get("priorities"),
                      changes=replay.get("changes", ()), record=True)
    finally:
        schedule.close()
    result["scenario"] = replay["scenario"]
    del result["trails"]
    return {"schedules": [result], "tampered": list(dict.fromkeys(_tampered))}


def _harness():
    """What plan_runs.py runs a scenario with (its functions run in the harness's thread, never a worker's: what a
    worker calls stays in this file, whose frames are never traced)."""
    return types.SimpleNamespace(Schedule=Schedule, schedules=_REDUCTION.schedules, snapshot=_snapshot, plain=_plain,
                                 error=_error, value=_value, op=_op, text=_text, tampered=_tampered)


def hammer(module, plan):
    """The real-threads run (``hammer.py``: no tracer, real preemption), on an interpreter this check is validated on only."""
    why = refusal()
    if why:
        return {"refused": why}
    return _RUNS.hammer(_harness(), getattr(module, plan["cls"]), plan) if plan.get("model") else _HAMMER.hammer(module, plan)
