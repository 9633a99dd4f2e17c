"""One run of a scenario, by kind of plan: the counter's (``counter_once``: a start state, names called, count and
peak read) and a model plan's (``once``, ``explore``: the race family, env/families/race: calls with arguments on a
fresh ``cls()``, the final state read through its accessors, every schedule returned for the trusted side to judge).
explorer.py loads this file by path and hands it its harness (``h``: the Schedule, the strategies, the encoders);
these functions run in the harness's own thread, never a worker's (what a worker calls stays in schedule.py, whose
frames are never traced); ``hammer``, a model plan's real-threads run, runs in a process no tracer ever ran in.
Standard library only.
"""

import sys
import threading
import time


def once(h, schedule, cls, scenario):
    def run(first=0, preempt_at=0, priorities=None, changes=(), record=False):
        return _run_once(h, schedule, cls, scenario, first, preempt_at, priorities, changes, record)
    return run


def _calls(h, target, ops):
    """Calls made in the harness's own thread (setup, final reads), recorded as a model plan's."""
    records = []
    for op in ops:
        name, args = h.op(op)
        try:
            records.append([name, h.plain(getattr(target, name)(*args)), ""])
        except BaseException as exc:
            records.append([name, None, h.error(exc)])
    return records


def _scheduled(h, schedule, target, scenario, result, first, preempt_at, changes, priorities, record):
    """One schedule of the scenario's threads on ``target`` (either kind of plan), its outcome put in ``result``."""
    schedule.reset(target, scenario["threads"], first, preempt_at, changes, priorities, record)
    if record:
        result["start"] = h.snapshot(target)
    schedule.run()
    result.update(
        steps=schedule.steps, first_steps=schedule.first_done or schedule.steps, stopped=schedule.stopped,
        log=schedule.log[:64], results=[w.results for w in schedule.workers],
    )
    result["trails"] = [list(w.trail) for w in schedule.workers]
    if record:
        result["record"] = schedule.record


def _run_once(h, schedule, cls, scenario, first=0, preempt_at=0, priorities=None, changes=(), record=False):
    result = {"first": first, "preempt_at": preempt_at, "steps": 0, "first_steps": 0, "stopped": "", "log": [],
              "results": [], "final": [], "priorities": priorities, "changes": list(changes)}
    try:
        target = cls()
    except BaseException as exc:
        result["stopped"] = "%s() raised %s: %s" % (cls.__name__, type(exc).__name__, h.text(exc))
        result["trails"] = [[] for _ in schedule.workers]
        return result
    _calls(h, target, scenario["setup"])  # what the setup calls gave is not judged (a wide start makes a thousand)
    _scheduled(h, schedule, target, scenario, result, first, preempt_at, changes, priorities, record)
    if not schedule.stopped:
        result["final"] = _calls(h, target, scenario["observe"])
    return result


def explore(h, cls, filename, plan):
    """A model plan's scenarios: every schedule's observation comes back (the trusted side judges them all); each keeps
    the first switches of its interleaving, for the report of one that fails."""
    observed = []
    pace = []
    schedule = None
    try:
        for number, scenario in enumerate(plan["scenarios"]):
            if schedule is None or schedule.stopped or len(schedule.workers) != len(scenario["threads"]):
                if schedule is not None:
                    schedule.close()
                schedule = h.Schedule(filename, len(scenario["threads"]))
                schedule.model = True
            for result in h.schedules(once(h, schedule, cls, scenario), scenario, pace, _any):
                result["scenario"] = number
                result["log"] = result["log"][:16]
                del result["trails"]
                observed.append(result)
                if result["stopped"] or h.tampered:
                    return {"schedules": observed, "tampered": list(dict.fromkeys(h.tampered))}
    finally:
        if schedule is not None:
            schedule.close()
    return {"schedules": observed, "tampered": list(dict.fromkeys(h.tampered))}


def _any(_result, _scenario):
    return True


def counter_once(h, schedule, starts, scenario):
    def once(first=0, preempt_at=0, priorities=None, changes=(), record=False):
        return _run_counter(h, schedule, starts, scenario, first, preempt_at, priorities, changes, record)
    return once


def _run_counter(h, schedule, starts, scenario, first=0, preempt_at=0, priorities=None, changes=(), record=False):
    result = {"first": first, "preempt_at": preempt_at, "steps": 0, "first_steps": 0, "stopped": "", "log": [],
              "results": [], "setup": [], "priorities": priorities, "changes": list(changes)}
    # a fresh object after the scenario's warm-up calls, in its start state (or the one its API reached: reported)
    target, result["start_used"] = starts.prepare(scenario.get("start_state", (0, 0)), scenario.get("warmup", 0), scenario.get("calls", 0))
    for name in scenario["setup"]:
        try:
            result["setup"].append([name, h.value(getattr(target, name)()), ""])
        except ValueError:
            result["setup"].append([name, None, "ValueError"])
    _scheduled(h, schedule, target, scenario, result, first, preempt_at, changes, priorities, record)
    if not schedule.stopped:
        try:
            result["count"] = h.value(target.get_count())
            result["peak"] = h.value(target.get_peak())
        except BaseException as exc:
            result["stopped"] = "get_count() or get_peak() raised %s: %s" % (type(exc).__name__, h.text(exc))
    return result


def hammer(h, cls, plan):
    """A model plan's real-threads run: each of ``plan["scenarios"]`` ``plan["repeats"]`` times on a fresh object, its
    threads let go together under a tiny switch interval, real preemption; the distinct observations come back (each
    with how many runs gave it) for the trusted side to judge as it judges the explorer's. The budget is
    ``plan["seconds"]`` for the whole run: of CPU time where the run decides validity (``plan["cpu"]``, with a wall-clock
    ``plan["backstop"]``), else of wall clock. Threads still running when it is spent stop the run: "unfinished" names
    the scenario, "starved" says whether the machine, not the code, used up the wall clock."""
    sys.setswitchinterval(plan["switch"])
    cpu_end = time.process_time() + plan["seconds"]
    wall_end = threading._time() + plan.get("backstop", plan["seconds"])
    seen = {}
    report = {"observations": []}
    for number, scenario in enumerate(plan["scenarios"]):
        for _ in range(plan["repeats"]):
            try:
                target = cls()
            except BaseException as exc:
                report["stopped"] = "%s() raised %s: %s" % (cls.__name__, type(exc).__name__, h.text(exc))
                return report
            _calls(h, target, scenario["setup"])
            results = [[] for _ in scenario["threads"]]
            gate = threading.Barrier(len(results))
            threads = [threading.Thread(target=_worker, args=(h, target, ops, out, gate), daemon=True)
                       for ops, out in zip(scenario["threads"], results, strict=True)]
            for thread in threads:
                thread.start()
            starved = _join(threads, plan.get("cpu"), cpu_end, wall_end)
            if any(thread.is_alive() for thread in threads):
                report.update(unfinished=number, starved=starved)
                return report
            final = _calls(h, target, scenario["observe"])
            key = repr((number, results, final))
            if key not in seen:
                seen[key] = {"scenario": number, "results": results, "final": final, "stopped": "", "runs": 0}
                report["observations"].append(seen[key])
            seen[key]["runs"] += 1
    return report


def _worker(h, target, ops, out, gate):
    gate.wait()
    out.extend(_calls(h, target, ops))


def _join(threads, cpu, cpu_end, wall_end):
    """Wait for ``threads`` until the budget is spent; True when the wall clock ran out while CPU time (``cpu``) was left."""
    while any(thread.is_alive() for thread in threads):
        if cpu and time.process_time() > cpu_end:
            return False
        if threading._time() > wall_end:
            return bool(cpu)
        for thread in threads:
            thread.join(0.002)
    return False
