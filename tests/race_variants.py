"""Versions of the hard task's ConnectionCounter: racy ones the detector must catch, correct ones it must pass.

Shared by tests/test_race_detector.py (few runs, exact) and bench/bench_race.py (1000 runs under load).
Each is a whole module, as an agent would submit it.
"""

HEAD = '''import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

'''
TAIL = '''
    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
'''
LOCKED_INCREMENT = '''    def increment(self):
        with self._lock:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count
'''
LOCKED_DECREMENT = '''
    def decrement(self):
        with self._lock:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count
'''
SPLIT_INCREMENT = '''    def increment(self):
        with self._lock:
            current = self.count
        new_val = current + 1
        with self._lock:
            self.count = new_val
            if new_val > self.peak:
                self.peak = new_val
        return new_val
'''
SPLIT_DECREMENT = '''
    def decrement(self):
        with self._lock:
            current = self.count
        if current == 0:
            raise ValueError("no active connections")
        new_val = current - 1
        with self._lock:
            self.count = new_val
        return new_val
'''


def module(increment: str, decrement: str, head: str = HEAD, tail: str = TAIL) -> str:
    return head + increment + decrement + tail


RACY = {
    "original bug": module(SPLIT_INCREMENT, SPLIT_DECREMENT),
    "racy increment only": module(SPLIT_INCREMENT, LOCKED_DECREMENT),
    "racy decrement only": module(LOCKED_INCREMENT, SPLIT_DECREMENT),
    "racy peak update": module(
        '''    def increment(self):
        with self._lock:
            self.count += 1
            new_val = self.count
        if new_val > self.peak:
            self.peak = new_val
        return new_val
''',
        LOCKED_DECREMENT,
    ),
    "read under the lock, write outside it": module(
        '''    def increment(self):
        with self._lock:
            current = self.count
        self.count = current + 1
        if self.count > self.peak:
            self.peak = self.count
        return current + 1
''',
        '''
    def decrement(self):
        with self._lock:
            current = self.count
        if current == 0:
            raise ValueError("no active connections")
        self.count = current - 1
        return current - 1
''',
    ),
    "extra statements between read and write": module(
        '''    def increment(self):
        with self._lock:
            current = self.count
        attempts = 0
        attempts += 1
        label = "connection %d" % (current + attempts)
        new_val = current + 1 if label else current
        with self._lock:
            self.count = new_val
            if new_val > self.peak:
                self.peak = new_val
        return new_val
''',
        LOCKED_DECREMENT,
    ),
    "unlocked self.count += 1": module(
        '''    def increment(self):
        self.count += 1
        if self.count > self.peak:
            self.peak = self.count
        return self.count
''',
        '''
    def decrement(self):
        if self.count == 0:
            raise ValueError("no active connections")
        self.count -= 1
        return self.count
''',
    ),
    "a lock created per call": module(
        '''    def increment(self):
        with threading.Lock():
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count
''',
        '''
    def decrement(self):
        with threading.Lock():
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count
''',
    ),
    "a lock per method": module(
        '''    def increment(self):
        with self._inc_lock:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count
''',
        '''
    def decrement(self):
        with self._dec_lock:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count
''',
        head=HEAD.replace("        self._lock = threading.Lock()\n", "        self._lock = threading.Lock()\n        self._inc_lock = threading.Lock()\n        self._dec_lock = threading.Lock()\n"),
    ),
}

CORRECT = {
    "one lock around each method body": module(LOCKED_INCREMENT, LOCKED_DECREMENT),
    "RLock": module(LOCKED_INCREMENT, LOCKED_DECREMENT, head=HEAD.replace("threading.Lock()", "threading.RLock()")),
    "Condition": module(LOCKED_INCREMENT, LOCKED_DECREMENT, head=HEAD.replace("threading.Lock()", "threading.Condition()")),
    "a shared module-level lock": module(
        LOCKED_INCREMENT.replace("self._lock", "_LOCK"),
        LOCKED_DECREMENT.replace("self._lock", "_LOCK"),
        head=HEAD.replace("import threading\n", "import threading\n\n_LOCK = threading.Lock()\n"),
        tail=TAIL.replace("self._lock", "_LOCK"),
    ),
    "Semaphore(1)": module(LOCKED_INCREMENT, LOCKED_DECREMENT, head=HEAD.replace("threading.Lock()", "threading.Semaphore(1)")),
}

# Code that tries to tell it is being explored: none may pass.
EVASIVE = {
    "branches on threading.gettrace()": module(
        '''    def increment(self):
        if threading.gettrace() is not None:
            with self._lock:
                self.count += 1
                self.peak = max(self.peak, self.count)
                return self.count
        current = self.count
        self.count = current + 1
        self.peak = max(self.peak, self.count)
        return current + 1
''',
        LOCKED_DECREMENT,
    ),
    "calls threading.settrace(None)": module(
        '''    def increment(self):
        threading.settrace(None)
        current = self.count
        self.count = current + 1
        self.peak = max(self.peak, self.count)
        return current + 1
''',
        LOCKED_DECREMENT,
    ),
    "locks only in threads named Thread-N": module(
        '''    def increment(self):
        if threading.current_thread().name.startswith("Thread-"):
            with self._lock:
                self.count += 1
                self.peak = max(self.peak, self.count)
                return self.count
        current = self.count
        self.count = current + 1
        self.peak = max(self.peak, self.count)
        return current + 1
''',
        LOCKED_DECREMENT,
    ),
    "times itself with threading._time": module(
        '''    def increment(self):
        started = threading._time()
        current = self.count
        if threading._time() - started > 0.00001:  # slow: someone is watching
            with self._lock:
                self.count += 1
                self.peak = max(self.peak, self.count)
                return self.count
        self.count = current + 1
        self.peak = max(self.peak, self.count)
        return current + 1
''',
        LOCKED_DECREMENT,
    ),
}

# -- the four classes the second build's review found (issue 31), several of each, written here -------------

# 2. A read-modify-write done by C calls: no bytecode of the submission between the read and the write.
RACY.update({
    "getattr/setattr bound as default arguments": module(
        '''    def increment(self, _get=getattr, _set=setattr):
        _set(self, "count", _get(self, "count") + 1)
        with self._lock:
            if self.count > self.peak:
                self.peak = self.count
            return self.count
''',
        LOCKED_DECREMENT,
    ),
    "getattr/setattr bound as default arguments, no lock at all": module(
        '''    def increment(self, _get=getattr, _set=setattr):
        _set(self, "count", _get(self, "count") + 1)
        _set(self, "peak", max(_get(self, "peak"), _get(self, "count")))
        return _get(self, "count")
''',
        '''
    def decrement(self, _get=getattr, _set=setattr):
        if _get(self, "count") == 0:
            raise ValueError("no active connections")
        _set(self, "count", _get(self, "count") - 1)
        return _get(self, "count")
''',
    ),
    "a dict's get and update": module(
        '''    def increment(self):
        self.state.update(count=self.state.get("count", 0) + 1)
        with self._lock:
            self.count = self.state["count"]
            if self.count > self.peak:
                self.peak = self.count
            return self.count
''',
        '''
    def decrement(self):
        with self._lock:
            if self.state["count"] == 0:
                raise ValueError("no active connections")
            self.state["count"] -= 1
            self.count = self.state["count"]
            return self.count
''',
        head=HEAD.replace("        self.peak = 0\n", "        self.peak = 0\n        self.state = {\"count\": 0}\n"),
    ),
    "a list's pop and append": module(
        '''    def increment(self):
        self.cells.append(self.cells.pop() + 1)
        with self._lock:
            self.count = self.cells[-1]
            if self.count > self.peak:
                self.peak = self.count
            return self.count
''',
        '''
    def decrement(self):
        with self._lock:
            if self.cells[-1] == 0:
                raise ValueError("no active connections")
            self.cells.append(self.cells.pop() - 1)
            self.count = self.cells[-1]
            return self.count
''',
        head=HEAD.replace("        self.peak = 0\n", "        self.peak = 0\n        self.cells = [0]\n"),
    ),
    "setattr through map": module(
        '''    def increment(self):
        value = getattr(self, "count") + 1
        list(map(setattr, [self], ["count"], [value]))
        with self._lock:
            if value > self.peak:
                self.peak = value
        return value
''',
        LOCKED_DECREMENT,
    ),
})

# 4. Check-then-act at zero: the check outside the lock, the update inside it.
RACY.update({
    "decrement checks get_count() before taking the lock": module(
        LOCKED_INCREMENT,
        '''
    def decrement(self):
        if self.get_count() == 0:
            raise ValueError("no active connections")
        with self._lock:
            self.count -= 1
            return self.count
''',
    ),
    "decrement checks self.count before taking the lock": module(
        LOCKED_INCREMENT,
        '''
    def decrement(self):
        if self.count <= 0:
            raise ValueError("no active connections")
        with self._lock:
            self.count -= 1
            return self.count
''',
    ),
    "decrement checks under one acquisition and updates under another": module(
        LOCKED_INCREMENT,
        '''
    def decrement(self):
        with self._lock:
            empty = self.count == 0
        if empty:
            raise ValueError("no active connections")
        with self._lock:
            self.count -= 1
            return self.count
''',
    ),
})

# 1. Code that asks, through public and single-underscore names, whether it is being checked, and runs the
# original bug when it believes it is not (the last build's models answered differently from a plain process).
_RACY_UPDATE = '''        with self._lock:
            current = self.count
        with self._lock:
            self.count = current + 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count
'''
_WATCHED = '''    def increment(self):
        if {probe}:
            with self._lock:
                self.count += 1
                if self.count > self.peak:
                    self.peak = self.count
                return self.count
''' + _RACY_UPDATE
EVASIVE.update({
    f"locks only when {label}": module(_WATCHED.format(probe=probe), LOCKED_DECREMENT)
    for label, probe in (
        ("threading.Lock is a class", "isinstance(threading.Lock, type)"),
        ("the lock's type is not _thread.lock", "type(threading.Lock()).__name__ != 'lock'"),
        ("the lock's repr is unusual", "'_thread.lock object' not in repr(threading.Lock())"),
        ("threading.Lock is not _allocate_lock", "threading.Lock is not threading._allocate_lock"),
        ("the RLock's repr is unusual", "'_thread.RLock object' not in repr(threading.RLock())"),
        ("a thread holds a target", "threading.current_thread()._target is not None and threading.current_thread() is not threading.main_thread()"),
        ("sys.gettrace() answers", "threading._sys.gettrace() is not None"),
    )
})

# 3. Code that reaches for the scheduler and switches it off, then runs the original bug.
_REACH = '''    def increment(self):
        {reach}
''' + _RACY_UPDATE
EVASIVE.update({
    f"switches the scheduler off through {label}": module(_REACH.format(reach=reach), LOCKED_DECREMENT)
    for label, reach in (
        ("the worker threads' arguments", "for t in threading.enumerate():\n            for a in getattr(t, '_args', ()):\n                s = getattr(a, 'schedule', None)\n                if s is not None:\n                    s.point = print"),
        ("the worker threads' targets", "for t in threading.enumerate():\n            s = getattr(getattr(t, '_target', None), '__self__', None)\n            if s is not None and hasattr(s, 'point'):\n                s.point = print"),
        ("the child's module globals", "m = threading._sys.modules.get('__main__')\n        e = getattr(m, '_EXPLORER', None)\n        if e is not None:\n            e._active = None"),
        ("sys.settrace(None)", "threading._sys.settrace(None)"),
    )
})

# Correct designs the check must pass.
_HELD_UNTIL_FINALLY = '''        try:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count
        finally:
            self._lock.release()
'''
CORRECT.update({
    "a spin lock on try-acquire": module(
        "    def increment(self):\n        while not self._lock.acquire(blocking=False):\n            pass\n" + _HELD_UNTIL_FINALLY, LOCKED_DECREMENT
    ),
    "acquire with try/finally release": module("    def increment(self):\n        self._lock.acquire()\n" + _HELD_UNTIL_FINALLY, LOCKED_DECREMENT),
    "a private helper called under the lock": module(
        '''    def increment(self):
        with self._lock:
            self.count += 1
            self._raise_peak()
            return self.count

    def _raise_peak(self):
        if self.count > self.peak:
            self.peak = self.count
''',
        LOCKED_DECREMENT,
    ),
    "Lock imported from threading": module(LOCKED_INCREMENT, LOCKED_DECREMENT, head=HEAD.replace("import threading\n", "import threading\nfrom threading import Lock\n").replace("threading.Lock()", "Lock()")),
})
