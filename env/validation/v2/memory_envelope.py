"""The server's memory, measured while the semantic checks play: the peak resident memory of its process tree,
sampled from /proc every 0.25 s (a local server only; ``semantic.resource_envelope`` compares it to the declaration).

    with Envelope(server_pid) as envelope:
        ...                     # play
    envelope.peak_mb
"""

from __future__ import annotations

import os
import threading
from pathlib import Path


class Envelope:
    """Samples the resident memory of the server's process tree while the semantic checks play (local servers only)."""

    def __init__(self, pid: int | None):
        self.pid, self.peak_mb, self._stop = pid, 0.0, threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True) if pid else None

    def _tree_rss_mb(self, root: int) -> float:
        children: dict[int, list[int]] = {}
        rss: dict[int, float] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                children.setdefault(int(stat[1]), []).append(int(entry))
                rss[int(entry)] = int(stat[21]) * os.sysconf("SC_PAGE_SIZE") / 2**20
            except (OSError, IndexError, ValueError):
                continue
        total, todo = 0.0, [root]
        while todo:
            pid = todo.pop()
            total += rss.get(pid, 0.0)
            todo += children.get(pid, [])
        return total

    def _sample(self) -> None:
        assert self.pid is not None  # a thread samples only a known process
        while not self._stop.wait(0.25):
            self.peak_mb = max(self.peak_mb, self._tree_rss_mb(self.pid))

    def __enter__(self) -> Envelope:
        if self.thread:
            self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self.thread:
            self.thread.join()
