"""The race sweep's reduction: which preemption points give a schedule the sweep has already run, so it need not run
them. Pure functions of the threads' trails (per scheduling point: the locks held, the access about to happen: ("r",
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
