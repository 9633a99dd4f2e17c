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

Three files, a job each: this one runs a plan (``explore``, ``hammer``) and refuses on an interpreter it is not
validated on; schedule.py is one schedule (the worker threads, the scheduler and the tracer: all of the harness a
worker thread runs, in the one file whose frames are never traced); points.py is where a thread may be switched (the
scheduling points of a code object, read off the frame's value stack). Each loads the next by path.
"""

import sys

VALIDATED = ((3, 11),)  # CPython versions whose frame layout this check reads (see points.py's _peek)

_FILE = (lambda: 0).__code__.co_filename  # this file's path: the files it loads are beside it


def _sibling(filename, name):
    import importlib.util
    import os

    spec = importlib.util.spec_from_file_location(name, os.path.join(os.path.dirname(_FILE), filename))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Files of this folder this one uses, loaded with it (before isolation and any submitted code), never in sys.modules:
# one schedule's workers and scheduler (which load the scheduling points, points.py), the real-threads run, the sweep's
# reduction (which preemptions give a schedule already run), and the child's own quick look at an observation (to
# stop early)
_SCHEDULE = _sibling("schedule.py", "_adbg_schedule")
_HAMMER = _sibling("hammer.py", "_adbg_hammer")
_REDUCTION = _sibling("reduction.py", "_adbg_reduction")
_PLAUSIBLE = _sibling("plausible.py", "_adbg_plausible")
_RUNS = _sibling("plan_runs.py", "_adbg_plan_runs")  # a scenario's runs, in the harness's own thread only


# -- the interpreter: the check runs only where the frames are laid out as it reads them ------------------


def _layout_ok():
    """A CPython this check is validated on, whose frames read as points.py expects (its self-test)."""
    if sys.implementation.name != "cpython" or sys.version_info[:2] not in VALIDATED:
        return False
    return _SCHEDULE.POINTS.stack_read_ok()


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
                    schedule = _SCHEDULE.Schedule(filename, len(scenario["threads"]))
                once = _RUNS.counter_once(_harness(), schedule, starts, scenario)
                for result in _REDUCTION.schedules(once, scenario, pace, _PLAUSIBLE.plausible):
                    if scenario is planned and result["stopped"] == _SCHEDULE.BUDGET and result["start_used"] != api["start_state"]:
                        grows = True
                        break  # (its threads are parked: a fresh schedule runs it again)
                    result.update(scenario=number, from_api=scenario is api)
                    observed.append(result)
                    if result["stopped"] or _SCHEDULE.tampered or not _PLAUSIBLE.plausible(result, scenario):
                        result.pop("trails", None)
                        return {"schedules": observed, "tampered": list(dict.fromkeys(_SCHEDULE.tampered))}
                    del result["log"], result["trails"]  # only a failing schedule's interleaving is explained
                if scenario is api or not grows:
                    break
    finally:
        if schedule is not None:
            schedule.close()
    return {"schedules": observed, "tampered": list(dict.fromkeys(_SCHEDULE.tampered))}


def _replay(cls, filename, plan):
    """One schedule an earlier run made, again with its story recorded (trace_report): the same interleaving."""
    replay = plan["replay"]
    scenario = plan["scenarios"][replay["scenario"]]
    if replay.get("from_api"):
        scenario = _HAMMER.api_scenario(scenario)
    schedule = _SCHEDULE.Schedule(filename, len(scenario["threads"]))
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
    return {"schedules": [result], "tampered": list(dict.fromkeys(_SCHEDULE.tampered))}


def _harness():
    """What plan_runs.py runs a scenario with: schedule.py's Schedule and encoders, and the strategies."""
    return _SCHEDULE.harness(_REDUCTION.schedules)


def hammer(module, plan):
    """The real-threads run (``hammer.py``: no tracer, real preemption), on an interpreter this check is validated on only."""
    why = refusal()
    if why:
        return {"refused": why}
    return _RUNS.hammer(_harness(), getattr(module, plan["cls"]), plan) if plan.get("model") else _HAMMER.hammer(module, plan)
