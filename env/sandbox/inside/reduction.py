"""The race explorer's strategies (``schedules``: a scenario's sweep, or its PCT run) and the sweep's reduction: which
preemption points give a schedule the sweep has already run, so it need not run them. Pure functions of the threads' trails (per scheduling point: the locks held, the access about to happen: ("r",
name), ("w", name), ("lock", key), ("release", key), or ("x", None) for anything). Standard library only; explorer.py
loads it by path.
"""


def equivalent(mine, theirs, k):
    """Whether preempting the first thread at its point ``k`` gives the run without preemption (so it need not
    run): the first thread then holds a lock that the other thread's very first lock operation asks for, and
    everything the other thread does before it is a read of something the first thread never writes again.
    The other thread then parks at once, the first one finishes, and the two run in order. ``mine`` and
    ``theirs`` are each thread's points in the runs where it went first, alone: the same steps it takes here."""
    if k > len(mine):
        return False
    held = mine[k - 1][0]
    written = {access[1] for _, access in mine[k - 1 :] if access[0] == "w"}
    if any(access[0] == "x" for _, access in mine[k - 1 :]):
        written = None  # the first thread may write anything from here on
    for _, access in theirs:
        kind, what = access
        if kind == "lock":
            return what is not None and what in held
        if kind != "r" or written is None or what in written:
            return False
    return False


def commutes(access, trail):
    """Whether the first thread's ``access`` commutes with everything the other thread did in a schedule: then
    preempting just after that access gives the same schedule as preempting just before it (the other thread
    runs from the same state either way, and sees and changes nothing the access touches)."""
    kind, what = access
    if kind == "x" or (kind in ("lock", "release") and what is None):
        return False
    for _, (other, name) in trail:
        if other == "x":
            return False
        if kind == "r" and other == "w" and name == what:
            return False
        if kind == "w" and other in ("r", "w") and name == what:
            return False
        if kind in ("lock", "release") and other in ("lock", "release") and (name is None or name == what):
            return False
    return True


def schedules(once, scenario, pace, plausible):
    """The runs of one scenario (``once`` runs it with a given first thread, preemption ...): its sweep, or its PCT run
    (its length estimated from the sweeps' pace). ``plausible`` is the child's quick look, to stop early."""
    if scenario.get("sweep"):
        probes = []
        for first in (0, 1):
            probe = once(first=first)
            probes.append(probe)
            if probe["stopped"] or not plausible(probe, scenario):
                yield probe
                return
            pace.append(probe["first_steps"] / max(1, len(scenario["threads"][first])))
        trails = [probe["trails"] for probe in probes]  # (read before the probes go out: explore() drops them)
        for first in (0, 1):
            probe = probes[first]
            mine, serial = trails[first][first], trails[first][1 - first]  # each thread's trail, this one first
            theirs = trails[1 - first][1 - first]  # the other thread alone, from its start
            probe["equivalent"] = [1]  # pausing before any shared access is the other order's run without preemption
            last = theirs  # the other thread's trail in the schedule the previous preemption gave
            yield probe
            # a thread that waited (a condition) let the other run within its own steps: the reduction, which reads
            # step k as this thread's k-th point, does not apply, and every preemption is run
            waited = len(mine) < probe["first_steps"]
            for k in range(2, probe["first_steps"] + 1):
                if not waited and equivalent(mine, theirs, k):
                    probe["equivalent"].append(k)
                    last = serial  # that schedule is the serial one: the other thread ran after this one
                    continue
                if not waited and last is not None and commutes(mine[k - 2][1], last):
                    probe["equivalent"].append(k)  # the same schedule as k - 1 (see commutes)
                    continue
                run = once(first=first, preempt_at=k)
                last = run["trails"][1 - first] if not run["stopped"] else None
                yield run
        return
    priorities = scenario["priorities"]
    length = max(1, int(sum(pace) / max(1, len(pace)) * sum(len(ops) for ops in scenario["threads"])))
    changes = [1 + int(f * length) for f in scenario["changes"]]
    yield once(first=priorities.index(max(priorities)), priorities=priorities, changes=changes)
