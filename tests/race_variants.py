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
