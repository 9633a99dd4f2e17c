"""One schedule of the race explorer: worker threads that run a scenario's calls one at a time, switched where the
schedule (``Schedule``) says at the scheduling points the tracer stops them at (standard library only).

    schedule = Schedule(filename, threads)    # the workers, started once, kept for every run of as many threads
    schedule.reset(target, ops, first, preempt_at=3)   # one run: a sweep's preemption, or PCT's priorities and changes
    schedule.run()                            # until every worker finished, one stopped, or none made progress
    schedule.close()

Everything of the harness a worker thread runs is in this file, whose frames are never traced (``_FILE``): the
worker's body and what it calls (the encoders of what a call returned, the schedule's decisions); so is the tracer.
The scheduling points are points.py's, loaded here by path; explorer.py runs the plans, and hands plan_runs.py this
file's ``harness``.
"""

import _thread
import builtins
import ctypes
import threading
import types

MAX_STEPS = 20_000  # scheduling points in one schedule: a spin that never yields is a failure, not a hang
BUDGET = "its threads did not finish within %d scheduling points" % MAX_STEPS
QUIET_SECONDS = 3.0  # no scheduling point for this long: a thread blocked or computes where the check cannot look
MAX_RECORD = 4000  # entries of a replay's story (trace_report): points, switches, calls

_FILE = (lambda: 0).__code__.co_filename  # this file's frames (the harness in the workers) are never traced

_active = None  # the Schedule running now, or None
tampered = []  # what the submission did to the tracer


def _sibling(filename, name):
    import importlib.util
    import os

    spec = importlib.util.spec_from_file_location(name, os.path.join(os.path.dirname(_FILE), filename))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Where a thread may be switched, loaded with this file (never in sys.modules). The names of it that this file reads
# at every point are bound here once: plain global reads, as when one file held both.
POINTS = _sibling("points.py", "_adbg_points")
_EVENT_CALL, _EVENT_OPCODE, _TRACEFUNC, _set_trace = POINTS.EVENT_CALL, POINTS.EVENT_OPCODE, POINTS.TRACEFUNC, POINTS.set_trace
_LOCK, _RLOCK, _IMMUTABLE, _ANY = POINTS.LOCK, POINTS.RLOCK, POINTS.IMMUTABLE, POINTS.ANY


# -- the tracer: C-level, so that nothing Python-visible holds it ---------------------------------


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
                handler = _CLASSIFIED[frame.f_code] = POINTS.classify(frame.f_code)
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
                tampered.append("the tracer was removed")
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


def harness(schedules):
    """What plan_runs.py runs a scenario with, ``schedules`` being the strategies (reduction.py's): its functions run
    in the harness's thread, never a worker's (what a worker calls stays in this file, whose frames are never traced)."""
    return types.SimpleNamespace(Schedule=Schedule, schedules=schedules, snapshot=_snapshot, plain=_plain,
                                 error=_error, value=_value, op=_op, text=_text, tampered=tampered)
