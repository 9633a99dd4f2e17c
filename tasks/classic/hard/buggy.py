import threading


class ConnectionCounter:
    """Counts the active connections of a web server; shared by all worker threads."""

    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0

    def increment(self):
        with self._lock:
            current = self.count
        new_val = current + 1
        with self._lock:
            self.count = new_val
            if new_val > self.peak:
                self.peak = new_val
        return new_val

    def decrement(self):
        with self._lock:
            current = self.count
        if current == 0:
            raise ValueError("no active connections")
        new_val = current - 1
        with self._lock:
            self.count = new_val
        return new_val

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
