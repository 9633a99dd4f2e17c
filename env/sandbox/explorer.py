"""Controlled interleavings of a submission's own code: the race detector, run inside the sandbox child.

    install()                                   # before the submission loads: modelled locks, a hidden tracer
    result = explore(module, filename, plan)    # plan: scenarios and schedules from the trusted side
    # -> {"schedules": [...], "stopped": "..."}: what each schedule observed; the trusted side judges it

The OS scheduler decides nothing here. Each scenario runs a few worker threads on one fresh object,
one thread at a time: a thread runs until it reaches a *scheduling point* in the submission's own
code (before each bytecode that reads or writes shared state: attributes, globals, subscripts,
closure cells; the `opcode` events of ``sys.settrace``, so ``self.count += 1`` is split between its
load and its store) or a lock operation, and the schedule says which thread runs next. Two
strategies share that machinery:

- a sweep: two threads, one preemption, at every scheduling point of the first thread in turn, in
  both orders. A lost update between two threads is a depth-2 bug, so the sweep finds it every time;
- PCT (Burckhardt et al., 2010): random thread priorities, the highest-priority enabled thread
  runs, and at d-1 random points the running thread drops below all others; seeded by the trusted
  side (from the server's secret), for bugs that need three threads or more preemptions.

Locks are modelled (``threading.Lock``, ``RLock`` and ``Condition``, so ``Semaphore``, ``Event`` and
``Barrier`` too): a thread that finds a lock held is marked blocked and another runs, so a paused
lock holder never stalls the schedule; all threads blocked is a deadlock. Outside a schedule (the
sequential tests, in the main thread) the models behave as plain locks.

The submission cannot tell it is explored: ``sys.gettrace`` and ``threading.gettrace`` answer None,
``settrace``/``setprofile`` calls are ignored and reported as tampering, ``threading._time`` is a
virtual clock, and the workers' names change from schedule to schedule. Standard library only: this
file is loaded by path in the child before isolation, like the debugger's tracer.
"""

import _thread
import dis
import random
import sys
import threading

# What the submission would reach, kept for the harness.
_settrace = sys.settrace
_gettrace = sys.gettrace
_REAL = {"Lock": threading.Lock, "RLock": threading.RLock, "Condition": threading.Condition}

SHARED = frozenset(
    {
        "LOAD_ATTR", "STORE_ATTR", "DELETE_ATTR", "LOAD_METHOD", "LOAD_GLOBAL", "STORE_GLOBAL", "DELETE_GLOBAL",
        "LOAD_DEREF", "STORE_DEREF", "LOAD_CLASSDEREF", "BINARY_SUBSCR", "STORE_SUBSCR", "DELETE_SUBSCR",
        "LOAD_NAME", "STORE_NAME",
    }
)
NAME_STYLES = ("Thread-%d", "Thread-%d (worker)", "ThreadPoolExecutor-0_%d", "worker-%d", "AnyIO worker thread %d", "Dummy-%d")
MAX_STEPS = 20_000  # scheduling points in one schedule: a spin that never ends is a failure, not a hang

_active = None  # the Schedule running now, or None (the models then behave as plain locks)
_tampered = []  # what the submission tried: settrace, setprofile ...


class _Abort(BaseException):
    """Unwinds a worker out of the submission when its schedule is given up (deadlock, step budget)."""


# -- what the submission sees ---------------------------------------------------------------------


def _ignored(name):
    def call(*args, **kwargs):
        _tampered.append(name)

    return call


class _VirtualClock:
    """threading._time: advances a microsecond a call, whatever the load, so timing reveals nothing."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        self.now += 1e-6
        return self.now


def install():
    """Replace the locks with their models and hide the tracer; called before the submission is loaded."""
    threading.Lock = ModelLock
    threading.RLock = ModelRLock
    threading.Condition = ModelCondition
    sys.gettrace = lambda: None
    sys.settrace = _ignored("sys.settrace")
    sys.setprofile = _ignored("sys.setprofile")
    for name in ("settrace", "setprofile", "settrace_all_threads", "setprofile_all_threads"):
        if hasattr(threading, name):
            setattr(threading, name, _ignored("threading." + name))
    for name in ("gettrace", "getprofile"):
        if hasattr(threading, name):
            setattr(threading, name, lambda: None)
    sys.getprofile = lambda: None
    threading._time = _VirtualClock()


def _worker():
    schedule = _active
    return schedule.by_ident.get(_thread.get_ident()) if schedule is not None else None


class ModelLock:
    def __init__(self):
        self._real = _thread.allocate_lock()
        self._waiters = []

    def acquire(self, blocking=True, timeout=-1):
        me = _worker()
        if me is None:
            return self._real.acquire(blocking, timeout)
        schedule = me.schedule
        schedule.point(None, "acquiring a lock")
        while not self._real.acquire(False):
            if not blocking:
                return False
            self._waiters.append(me)
            schedule.block(me, self)
        return True

    def release(self):
        self._real.release()
        me = _worker()
        for waiter in self._waiters:
            waiter.waiting = None
        self._waiters = []
        if me is not None:
            me.schedule.point(None, "having released a lock")

    def locked(self):
        return self._real.locked()

    def _at_fork_reinit(self):
        self._real = _thread.allocate_lock()
        self._waiters = []

    __enter__ = acquire

    def __exit__(self, *exc):
        self.release()


class ModelRLock:
    def __init__(self):
        self._lock = ModelLock()
        self._owner = None
        self._count = 0

    def acquire(self, blocking=True, timeout=-1):
        me = _thread.get_ident()
        if self._owner == me:
            self._count += 1
            return True
        if not self._lock.acquire(blocking, timeout):
            return False
        self._owner, self._count = me, 1
        return True

    def release(self):
        if self._owner != _thread.get_ident():
            raise RuntimeError("cannot release un-acquired lock")
        self._count -= 1
        if not self._count:
            self._owner = None
            self._lock.release()

    __enter__ = acquire

    def __exit__(self, *exc):
        self.release()

    def _is_owned(self):
        return self._owner == _thread.get_ident()

    def _release_save(self):
        state = (self._count, self._owner)
        self._count, self._owner = 0, None
        self._lock.release()
        return state

    def _acquire_restore(self, state):
        self._lock.acquire()
        self._count, self._owner = state

    def _at_fork_reinit(self):
        self._lock._at_fork_reinit()
        self._owner, self._count = None, 0


class ModelCondition:
    def __init__(self, lock=None):
        self._lock = lock if lock is not None else ModelRLock()
        self.acquire, self.release = self._lock.acquire, self._lock.release
        self._waiters = []  # plain waiters: real locks; explored waiters: workers

    def __enter__(self):
        return self._lock.__enter__()

    def __exit__(self, *exc):
        return self._lock.__exit__(*exc)

    def _save(self):
        return self._lock._release_save() if hasattr(self._lock, "_release_save") else self._lock.release()

    def _restore(self, state):
        if hasattr(self._lock, "_acquire_restore"):
            self._lock._acquire_restore(state)
        else:
            self._lock.acquire()

    def _is_owned(self):
        if hasattr(self._lock, "_is_owned"):
            return self._lock._is_owned()
        if self._lock.acquire(False):
            self._lock.release()
            return False
        return True

    def wait(self, timeout=None):
        if not self._is_owned():
            raise RuntimeError("cannot wait on un-acquired lock")
        me = _worker()
        if me is None:
            waiter = _thread.allocate_lock()
            waiter.acquire()
            self._waiters.append(waiter)
            state = self._save()
            try:
                got = waiter.acquire(True, -1 if timeout is None else timeout)
                if not got and waiter in self._waiters:
                    self._waiters.remove(waiter)
                return got
            finally:
                self._restore(state)
        self._waiters.append(me)
        me.timed = timeout is not None
        me.waiting = self  # before the release: its scheduling point may already let a notifier run
        state = self._save()
        try:
            if me.waiting is not None:  # not notified while the lock was being released
                me.schedule.block(me, self)
            woken = me not in self._waiters
            if not woken:
                self._waiters.remove(me)  # a timed wait the schedule ended: it timed out
            return woken
        finally:
            me.timed = False
            self._restore(state)

    def wait_for(self, predicate, timeout=None):
        result = predicate()
        while not result:
            if not self.wait(timeout) and timeout is not None:
                return predicate()
            result = predicate()
        return result

    def notify(self, n=1):
        if not self._is_owned():
            raise RuntimeError("cannot notify on un-acquired lock")
        for waiter in self._waiters[:n]:
            self._waiters.remove(waiter)
            if isinstance(waiter, _Worker):
                waiter.waiting = None
            else:
                waiter.release()

    def notify_all(self):
        self.notify(len(self._waiters))

    notifyAll = notify_all


# -- the schedule --------------------------------------------------------------------------------


class _Worker:
    def __init__(self, index, schedule):
        self.index, self.schedule = index, schedule
        self.token = _thread.allocate_lock()
        self.token.acquire()
        self.ops = []
        self.results = []
        self.error = ""
        self.done = False
        self.waiting = None
        self.timed = False
        self.priority = 0
        self.thread = None
        self.released = False  # given up: its token was handed back once, never twice


class Schedule:
    """Runs one scenario's workers one at a time, switching where the strategy says."""

    def __init__(self, filename, points, threads):
        self.filename, self.points = filename, points
        self.workers = [_Worker(i, self) for i in range(threads)]
        self.by_ident = {}
        self.finished = _thread.allocate_lock()
        self.finished.acquire()
        self.guard = _thread.allocate_lock()
        self._tracer = self._trace  # one bound method: what gettrace() must still return after a schedule
        for worker in self.workers:
            worker.thread = threading.Thread(target=self._serve, args=(worker,), daemon=True)
            worker.thread.start()
            self.by_ident[worker.thread.ident] = worker

    # strategy state for one run
    def reset(self, target, ops, first, preempt_at=0, changes=(), priorities=None):
        self.target, self.current, self.steps, self.log, self.stopped = target, None, 0, [], ""
        self.preempt_at, self.changes, self.lowest, self.first_done = preempt_at, set(changes), 0, 0
        for worker, worker_ops in zip(self.workers, ops, strict=True):
            worker.ops, worker.results, worker.error, worker.done, worker.waiting = list(worker_ops), [], "", not worker_ops, None
            worker.released = False
            worker.priority = priorities[worker.index] if priorities else 0
        self.first = first

    def run(self):
        global _active
        start = self.workers[self.first]
        self.current = start
        _active = self
        try:
            start.token.release()
            self.finished.acquire()
        finally:
            _active = None

    def _enabled(self):
        return [w for w in self.workers if not w.done and w.waiting is None]

    def _pick(self, me):
        enabled = self._enabled()
        if not enabled:
            return None
        if self.priorities_on():
            if me is not None and self.steps in self.changes:
                self.lowest -= 1
                me.priority = self.lowest  # PCT: the running thread drops below every other
            return max(enabled, key=lambda w: (w.priority, -w.index))
        if me is not None and me in enabled:
            if self.steps == self.preempt_at:
                others = [w for w in enabled if w is not me]
                return others[0] if others else me
            return me
        return enabled[0]

    def priorities_on(self):
        return bool(self.changes) or any(w.priority for w in self.workers)

    def point(self, frame, note=""):
        """A scheduling point reached by the running worker (``frame`` None: a lock operation, ``note`` says which)."""
        me = self.current
        if self.stopped:
            raise _Abort
        self.steps += 1
        if self.steps > MAX_STEPS:
            self.stopped = "its threads did not finish within %d scheduling points" % MAX_STEPS
            raise _Abort
        nxt = self._pick(me)
        if nxt is not None and nxt is not me:
            self._switch(me, nxt, frame, note)

    def block(self, me, obj):
        me.waiting = obj
        nxt = self._pick(me)
        if nxt is None:
            timed = [w for w in self.workers if not w.done and w.timed]
            if timed:  # only a timed wait can end: virtual time passes
                timed[0].waiting = None
                nxt = timed[0]
            else:
                self.stopped = "deadlock: every thread waits for a lock or a condition"
                self._release_all()
                raise _Abort
        if nxt is not me:
            self._switch(me, nxt, None, "waiting for a lock or a condition")
        elif me.waiting is not None:
            me.waiting = None

    def _switch(self, me, nxt, frame, note=""):
        line, function = _where(frame, self.filename)
        self.log.append((me.index, line, function, note, nxt.index))
        self.current = nxt
        nxt.token.release()
        me.token.acquire()
        if self.stopped:
            raise _Abort

    def _release_all(self):
        """A given-up schedule: every other unfinished worker resumes, and unwinds at its next point."""
        for worker in self.workers:
            if not worker.done and worker is not self.current and not worker.released:
                worker.released = True
                worker.token.release()

    def _finish(self, me):
        with self.guard:
            me.done = True
            if self.stopped:
                self._release_all()
                if all(w.done for w in self.workers):
                    self.finished.release()
                return
            if me.index == self.first and not self.first_done:
                self.first_done = self.steps
            nxt = self._pick(None)
            if nxt is None:
                if all(w.done for w in self.workers):
                    self.finished.release()
                    return
                self.stopped = "deadlock: every thread left waits for a lock or a condition"
                self._release_all()
                return
            self.log.append((me.index, 0, "", "finished", nxt.index))
            self.current = nxt
            nxt.token.release()

    # the worker threads
    def _serve(self, worker):
        _settrace(self._tracer)
        while True:
            worker.token.acquire()
            if worker.ops is None:
                return
            try:
                for name in worker.ops:
                    worker.results.append([name, _value(getattr(self.target, name)())])
            except _Abort:
                worker.error = worker.error or "stopped"
            except BaseException as exc:  # the submission's exception: reported, never hidden
                worker.error = "%s: %s" % (type(exc).__name__, _text(exc))
            if _gettrace() is not self._tracer:
                _tampered.append("the tracer was removed")
                _settrace(self._tracer)
            self._finish(worker)

    def close(self):
        for worker in self.workers:
            worker.ops = None
            worker.token.release()

    def _trace(self, frame, event, arg):
        if event == "call" and frame.f_code.co_filename == self.filename and _active is self:
            frame.f_trace_opcodes = True
            frame.f_trace_lines = False
            return self._local
        return None

    def _local(self, frame, event, arg):
        if event == "opcode" and _active is self and frame.f_lasti in self.points(frame.f_code):
            self.point(frame, "")
        return self._local


def _where(frame, filename):
    """The submission's line and function a switch happened in (a lock operation: its caller's)."""
    if frame is None:
        frame = sys._getframe(2)
        while frame is not None and frame.f_code.co_filename != filename:
            frame = frame.f_back
    return (frame.f_lineno, frame.f_code.co_name) if frame is not None else (0, "")


def _value(value):
    return value if type(value) in (int, bool, type(None)) else "<%s>" % type(value).__name__


def _text(exc):
    try:
        return str(exc)[:200]
    except BaseException:
        return "<unprintable>"


class _Points:
    """Offsets of the scheduling points of each of the submission's code objects (cached)."""

    def __init__(self):
        self.cache = {}

    def __call__(self, code):
        found = self.cache.get(code)
        if found is None:
            found = self.cache[code] = frozenset(i.offset for i in dis.get_instructions(code) if i.opname in SHARED)
        return found


# -- one check: every scenario of the plan ------------------------------------------------------


def explore(module, filename, plan):
    """Run the plan's scenarios on fresh instances of ``plan["cls"]``; report what each schedule observed.

    A scenario is {"pre": n increments before the threads start, "threads": [[op, ...], ...]} and either
    "sweep": true (two threads, one preemption at every point, both orders) or "priorities" and
    "changes" (PCT: fractions of the scenario's length where the running thread is demoted).
    Stops at the first schedule whose observation is not what a correct object gives.
    """
    cls = getattr(module, plan["cls"])
    rng = random.Random(plan["names_seed"])
    points = _Points()
    observed = []
    threads = max(len(s["threads"]) for s in plan["scenarios"])
    schedule = Schedule(filename, points, threads)
    try:
        for number, scenario in enumerate(plan["scenarios"]):
            for setting in _settings(schedule, cls, scenario):
                for worker in schedule.workers:
                    worker.thread.name = rng.choice(NAME_STYLES) % rng.randint(1, 99)
                result = _run_once(schedule, cls, scenario, **setting)
                result["scenario"] = number
                observed.append(result)
                if result["stopped"] or _tampered or not _plausible(result, scenario):
                    return {"schedules": observed, "tampered": list(dict.fromkeys(_tampered))}
                del result["log"]  # only a failing schedule's interleaving is explained
    finally:
        schedule.close()
    return {"schedules": observed, "tampered": list(dict.fromkeys(_tampered))}


def _settings(schedule, cls, scenario):
    """The schedules of one scenario: its sweep, or its PCT run (after a run that measures its length)."""
    if scenario.get("sweep"):
        for first in (0, 1):
            probe = _run_once(schedule, cls, scenario, first=first)
            yield {"first": first}
            for preempt_at in range(1, probe["first_steps"] + 1):
                yield {"first": first, "preempt_at": preempt_at}
        return
    priorities = scenario["priorities"]
    length = _run_once(schedule, cls, scenario, first=priorities.index(max(priorities)), priorities=priorities)["steps"]
    changes = [1 + int(f * max(1, length)) for f in scenario["changes"]]
    yield {"first": priorities.index(max(priorities)), "priorities": priorities, "changes": changes}


def _run_once(schedule, cls, scenario, first=0, preempt_at=0, priorities=None, changes=()):
    target = cls()
    for _ in range(scenario["pre"]):
        target.increment()
    ops = scenario["threads"] + [[]] * (len(schedule.workers) - len(scenario["threads"]))
    schedule.reset(target, ops, first, preempt_at, changes, priorities)
    schedule.run()
    result = {
        "first": first, "preempt_at": preempt_at, "steps": schedule.steps, "first_steps": schedule.first_done or schedule.steps,
        "stopped": schedule.stopped, "log": schedule.log[:64],
        "results": [w.results for w in schedule.workers], "errors": [w.error for w in schedule.workers if w.error],
    }
    try:
        result["count"] = _value(target.get_count())
        result["peak"] = _value(target.get_peak())
    except BaseException as exc:
        result["errors"].append("%s: %s" % (type(exc).__name__, _text(exc)))
    return result


def _plausible(result, scenario):
    """The child's own quick look, only to stop early; the trusted side judges every observation itself."""
    if result["errors"]:
        return False
    ops = [op for thread in scenario["threads"] for op in thread]
    if result.get("count") != scenario["pre"] + ops.count("increment") - ops.count("decrement"):
        return False
    returns = [value for thread in result["results"] for op, value in thread if op == "increment"]
    if not all(type(v) is int for v in returns):
        return False
    return result.get("peak") == max([scenario["pre"], *returns])
