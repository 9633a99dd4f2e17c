"""The race check's real-threads run, in a fresh process of its own: no tracer, a tiny switch interval, real preemption;
and the start state both race checks put a fresh object in before their threads run (``Starts``).

    report = hammer(module, plan)   # plan: {"cls", "threads", "ops", "switch", "seconds", "start_state", "warmup", "calls"}
                                    # and, where the run decides validity, {"cpu": True, "backstop"}: seconds of CPU time
    starts = Starts(cls)            # (explorer.py too) where an object keeps its count, peak and calls, found once
    target, used = starts.prepare([count, peak], warmup, calls)   # a fresh object in that state, or the API's state

It needs no secrecy (nothing in the process observes the submission), which is why it is the second check that must
agree with the controlled interleavings (explorer.py). Standard library only; explorer.py loads it by path.
"""

import sys
import threading
import time
import types


def _value(value):
    return value if type(value) in (int, bool, type(None)) else "<%s>" % type(value).__name__


def _text(exc):
    try:
        return str(exc)[:200]
    except BaseException:
        return "<unprintable>"


def hammer(module, plan):
    """``plan["threads"]`` real threads each call increment ``plan["ops"]`` times on one object, then each calls
    decrement as often, under a tiny switch interval; what a correct object gives is known exactly. The object first
    takes ``plan["warmup"]`` calls, the count and peak ``plan["start_state"]`` and ``plan["calls"]`` more calls on its
    counters (``Starts.prepare``): the report's ``start_used`` says which start the threads began from, and the trusted
    side counts from it."""
    cls = getattr(module, plan["cls"])
    target, used = Starts(cls).prepare(plan.get("start_state", (0, 0)), plan.get("warmup", 0), plan.get("calls", 0))
    sys.setswitchinterval(plan["switch"])
    report = {"start_used": used}
    for phase in ("increment", "decrement"):
        errors = []
        gate = threading.Barrier(plan["threads"])

        def worker(name=phase, errors=errors, gate=gate):
            call = getattr(target, name)
            gate.wait()
            for _ in range(plan["ops"]):
                try:
                    call()
                except BaseException as exc:
                    errors.append("%s: %s" % (type(exc).__name__, _text(exc)))
                    return

        threads = [threading.Thread(target=worker, daemon=True) for _ in range(plan["threads"])]
        for thread in threads:
            thread.start()
        if plan.get("cpu"):
            starved = _join_cpu(threads, plan["seconds"], plan["backstop"])
        else:
            starved = False
            deadline = threading._time() + plan["seconds"]  # one budget for the phase, not one per thread
            for thread in threads:
                thread.join(max(0.0, deadline - threading._time()))
        if any(thread.is_alive() for thread in threads):
            report[phase] = {"unfinished": True, "starved": starved}
            return report
        report[phase] = {"count": _value(target.get_count()), "peak": _value(target.get_peak()), "errors": errors[:5]}
    return report


def _join_cpu(threads, seconds, backstop):
    """Wait for ``threads`` while the process uses at most ``seconds`` of CPU time (a run that decides validity: load
    must not decide), and at most ``backstop`` seconds of wall clock; True when the backstop stopped the wait first."""
    spent = time.process_time() + seconds
    deadline = threading._time() + backstop
    while any(thread.is_alive() for thread in threads):
        if time.process_time() > spent:
            return False
        if threading._time() > deadline:
            return True
        for thread in threads:
            thread.join(0.01)
    return False


# -- the start state: a count, a peak and calls counted, on a fresh object after warm-up calls through its API ---------
#
# Racy code can switch its race on only at large counts or after many calls, which a check that starts every object
# from zero and makes a few calls never reaches. So each scenario of the plan (drawn from the server's secret) names a
# start state ([count, peak]), a number of warm-up calls made through the object's own API (increment, then decrement,
# alternately), and a number of calls its state is then set to have counted. No API sets a count of a billion, nor
# makes a billion calls in time, so those are set in the object's state: on a probe object, the plain ints that a
# distinctive sequence of calls moved to exactly its count, its peak, and its number of increments, decrements and
# calls are found (its attributes, its slots, and what plain dicts, lists, tuples and objects it holds, read through C
# descriptors: no code of the submission runs); they are set on a second probe, which must read the count and peak back
# through its API and count on correctly from there (an increment, a decrement). Only then are they set on a
# scenario's object (the count and peak set, the calls added to what its counters hold), and read back through its
# API again. Where any of that fails (a design that keeps its count some other way: the length of a list, an offset,
# text), the object runs from the state its API reached after the warm-up, and says so.
#
# Why the child's word is safe: the trusted side accepts only the planned start or the one the warm-up reaches from
# zero, and judges every observation against the start reported; reporting a start the object is not in makes a
# correct object fail, never a racy one pass. What this cannot reach (a design whose state it cannot locate; triggers
# outside the drawn ranges, on time or on a thread's identity) the lock-discipline review covers by reading the source.

_PROBE_CALLS = ("increment",) * 7 + ("decrement",) * 3 + ("increment",) + ("decrement",) * 2
# what the probe's calls leave: count 3, peak 7, 8 increments, 5 decrements, 13 calls (all different)
_MOVED = {"count": 3, "peak": 7, "increments": 8, "decrements": 5, "calls": 13}
_DEPTH = 3  # steps from the object to a leaf: an attribute, then items or attributes of what it holds, twice
_MAX_LEAVES = 2000  # what one look at an object reads, at most
_MISSING = object()


def api_state(warmup):
    """The count and peak a correct object has after ``warmup`` warm-up calls from a fresh one (the trusted side's
    concurrency.warmed_state computes the same)."""
    return [warmup % 2, 1 if warmup > 0 else 0]


def api_scenario(scenario):
    """``scenario`` from the state its warm-up calls reach through the API, nothing set (the explorer's fallback)."""
    return dict(scenario, start_state=api_state(scenario.get("warmup", 0)), calls=0)


def warm_up(target, warmup):
    """``warmup`` calls through the object's own API: increment, decrement, increment, ... (each pair leaves the count
    where it was). What they raise is the object's own error, as in any other call the check makes."""
    if warmup <= 0:
        return
    increment, decrement = target.increment, target.decrement
    for _ in range(warmup // 2):
        increment()
        decrement()
    if warmup % 2:
        increment()


_MRO, _CLASS_DICT = type.__dict__["__mro__"], type.__dict__["__dict__"]  # type's own: no metaclass answers for them


def _classes(obj):
    """(class, its namespace) for each class of ``obj``'s type, in order (a metaclass's properties never run)."""
    return [(klass, _CLASS_DICT.__get__(klass)) for klass in _MRO.__get__(type(obj))]


def instance_dict(obj):
    """``obj``'s attribute dict through the C descriptor only (never a ``__dict__`` the submission defined)."""
    for _, namespace in _classes(obj):
        attr = namespace.get("__dict__")
        if attr is not None:
            return attr.__get__(obj) if type(attr) is types.GetSetDescriptorType else {}
    return {}


def _slots(obj):
    """(descriptor, value) for each ``__slots__`` member of ``obj`` (read through the C member descriptor)."""
    found = []
    for _, namespace in _classes(obj):
        for member in list(namespace.values()):
            if type(member) is types.MemberDescriptorType:
                try:
                    found.append((member, member.__get__(obj, type(obj))))
                except AttributeError:
                    found.append((member, _MISSING))
    return found


_OPAQUE = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.CodeType, types.FrameType)


def _steps(obj):
    """(step, value) for what ``obj`` holds: attributes of an object, items of a plain dict, list or tuple. Reads run
    no code of the submission: C descriptors and the exact built-in containers only."""
    kind = type(obj)
    if kind is dict:
        return [(("k", key), value) for key, value in list(obj.items()) if type(key) in (str, int)]
    if kind in (list, tuple):
        return [(("i", index), value) for index, value in enumerate(list(obj))]
    if kind in (int, float, complex, str, bytes, bool, type(None), set, frozenset) or issubclass(kind, _OPAQUE):
        return []
    found = [(("d", name), value) for name, value in list(instance_dict(obj).items()) if type(name) is str]
    return found + [(("s", member), value) for member, value in _slots(obj)]


def _leaves(obj):
    """path -> value for every plain int within ``_DEPTH`` steps of ``obj``."""
    found, level = {}, [((), obj)]
    for _ in range(_DEPTH):
        deeper = []
        for path, holder in level:
            for step, value in _steps(holder):
                if len(found) + len(deeper) >= _MAX_LEAVES:
                    return found
                if type(value) is int:
                    found[path + (step,)] = value
                elif value is not _MISSING:
                    deeper.append((path + (step,), value))
        level = deeper
    return found


def _plain(obj, name):
    """Whether ``name`` is an attribute of ``obj`` itself that object's own get and set reach without running code of
    the submission: no class of its type names it (no property, slot or other descriptor)."""
    return not any(name in namespace for _, namespace in _classes(obj))


def _get(obj, step):
    kind, key = step
    if kind == "d":
        if not _plain(obj, key):
            return instance_dict(obj).get(key, _MISSING)
        try:
            return object.__getattribute__(obj, key)
        except AttributeError:
            return _MISSING
    if kind == "s":
        try:
            return key.__get__(obj, type(obj))
        except AttributeError:
            return _MISSING
    if kind == "k":
        return obj.get(key, _MISSING) if type(obj) is dict else _MISSING
    return obj[key] if type(obj) in (list, tuple) and key < len(obj) else _MISSING


def _put(obj, step, value):
    """``obj`` with ``step`` set to ``value``: changed in place, or (a tuple) a copy to store where it was."""
    kind, key = step
    if kind == "d":
        # object's own setattr where it can: the attribute dict read through its descriptor becomes a real dict, and
        # CPython 3.11 then reads and writes every attribute of that object more slowly (measured: 60% on increment)
        if _plain(obj, key):
            object.__setattr__(obj, key, value)
        else:
            instance_dict(obj)[key] = value
    elif kind == "s":
        key.__set__(obj, value)
    elif type(obj) is tuple:
        return obj[:key] + (value,) + obj[key + 1 :]
    elif type(obj) in (dict, list):
        obj[key] = value
    else:
        raise LookupError("the object changed shape")
    return obj


def _assign(obj, path, value):
    if len(path) > 1:
        held = _get(obj, path[0])
        if held is _MISSING:
            raise LookupError("the object changed shape")
        value = _assign(held, path[1:], value)
    return _put(obj, path[0], value)


def _reads(target, count, peak):
    """Whether the object's API reads back ``count`` and ``peak``."""
    seen = target.get_count(), target.get_peak()
    return type(seen[0]) is int and type(seen[1]) is int and seen == (count, peak)


class Starts:
    """Where objects of ``cls`` keep their count, peak and counters of calls (found once, on a probe), and fresh
    objects in a start state."""

    def __init__(self, cls):
        self.cls = cls
        self.checked = {}  # (count, peak, calls) -> whether a probe set to it behaved as a correct counter does
        self.found = False
        self.paths = None

    def _where(self):
        """{what: [path, ...]} (found on the first start that needs it: a plan whose starts the API reaches makes no
        probe), or None."""
        if not self.found:
            self.found = True
            try:
                self.paths = self._locate()
            except BaseException:  # the probe's calls raised: no start is set in its state (the scenarios still run)
                self.paths = None
        return self.paths

    def _locate(self):
        """The plain ints a fresh probe holds as 0 (or not yet) that the probe's calls moved to exactly its count, its
        peak, and its numbers of increments, decrements and calls; None without a count and a peak."""
        probe = self.cls()
        before = _leaves(probe)
        for name in _PROBE_CALLS:
            getattr(probe, name)()
        after = _leaves(probe)
        if not _reads(probe, _MOVED["count"], _MOVED["peak"]):
            return None
        # an attribute or a key the fresh probe did not have yet counts as 0 (a class default, a dict filled on demand);
        # an item of a list or tuple must have been there (a list that grows holds no counter)
        paths = {what: [path for path, value in after.items() if value == to and before.get(path, 0 if path[-1][0] != "i" else None) == 0]
                 for what, to in _MOVED.items()}
        return paths if paths["count"] and paths["peak"] else None

    def _set(self, target, count, peak, calls):
        """Set the count and peak; add ``calls`` (half of them increments, half decrements) to the counters of calls."""
        half = calls // 2
        for what, value in (("count", count), ("peak", peak), ("increments", half), ("decrements", half), ("calls", 2 * half)):
            for path in self.paths[what]:
                if what not in ("count", "peak"):
                    held = target
                    for step in path:
                        held = _get(held, step)
                    if type(held) is not int:
                        raise LookupError("the object changed shape")
                    value += held
                _assign(target, path, value)

    def _settable(self, count, peak, calls):
        """Whether a fresh probe set to the state reads it back and counts on from there correctly."""
        key = (count, peak, calls)
        if key not in self.checked:
            ok = False
            if self._where() is not None:
                try:
                    probe = self.cls()
                    self._set(probe, count, peak, calls)
                    ok = (_reads(probe, count, peak) and probe.increment() == count + 1 and _reads(probe, count + 1, max(peak, count + 1))
                          and probe.decrement() == count and _reads(probe, count, max(peak, count + 1)))
                except BaseException:
                    ok = False
            self.checked[key] = ok
        return self.checked[key]

    def prepare(self, start, warmup, calls=0):
        """A fresh object after ``warmup`` calls through its API, then set to ``start`` ([count, peak]) with ``calls``
        more calls on its counters; and the start it is in: ``start``, or when that cannot be set and read back through
        the API, the state the warm-up left (then no calls are added either)."""
        count, peak = int(start[0]), int(start[1])
        target = self.cls()
        warm_up(target, warmup)
        reached = api_state(warmup)
        if [count, peak] == reached and not calls:
            return target, reached
        if self._settable(count, peak, calls):
            try:
                self._set(target, count, peak, calls)
                if _reads(target, count, peak):
                    return target, [count, peak]
            except BaseException:
                pass
            target = self.cls()  # it did not take the state after its warm-up: a fresh one, from the API's state
            warm_up(target, warmup)
        return target, reached
