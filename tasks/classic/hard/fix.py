import threading


class ConnectionCounter:
    """Counts the active connections of a web server; shared by all worker threads."""

    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def increment(self):
        with self._lock:
            self.count += 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count

    def decrement(self):
        with self._lock:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
