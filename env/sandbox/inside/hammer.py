"""The race check's real-threads run, in a fresh process of its own: no tracer, a tiny switch interval, real preemption.

    report = hammer(module, plan)   # plan: {"cls", "threads", "ops", "switch", "seconds"}; what the threads left

It needs no secrecy (nothing in the process observes the submission), which is why it is the second check that must
agree with the controlled interleavings (explorer.py). Standard library only; explorer.py loads it by path.
"""

import sys
import threading


def _value(value):
    return value if type(value) in (int, bool, type(None)) else "<%s>" % type(value).__name__


def _text(exc):
    try:
        return str(exc)[:200]
    except BaseException:
        return "<unprintable>"


def hammer(module, plan):
    """``plan["threads"]`` real threads each call increment ``plan["ops"]`` times on one object, then each calls
    decrement as often, under a tiny switch interval; what a correct object gives is known exactly."""
    cls = getattr(module, plan["cls"])
    target = cls()
    sys.setswitchinterval(plan["switch"])
    report = {}
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
        deadline = threading._time() + plan["seconds"]  # one budget for the phase, not one per thread
        for thread in threads:
            thread.join(max(0.0, deadline - threading._time()))
        if any(thread.is_alive() for thread in threads):
            report[phase] = {"unfinished": True}
            return report
        report[phase] = {"count": _value(target.get_count()), "peak": _value(target.get_peak()), "errors": errors[:5]}
    return report
