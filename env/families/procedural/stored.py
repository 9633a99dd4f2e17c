"""Public procedural tasks kept on disk between processes: an id is generated (and validated, by running its tests:
about a second apiece) once per machine and version of the code, not once in every process that serves it.

    store = TaskStore.from_env()             # ENV_PROCEDURAL_CACHE (default ~/.cache/agentdebugger/procedural); None: "off"
    data = store.load(task_id, folder)       # the task's fields, its folder's files written into ``folder``; None: not kept
    store.save(task_id, data, folder)        # after generating it

Only public tasks (ENV_PROCEDURAL_SALT unset) are kept: anyone can make them from this code, so an entry holds nothing
a reader could not compute; a salted task derives its inputs from the salt and never reaches the disk. An entry is
named by the id and a digest of what generation reads (every file of the ``env`` package, Python's and pytest's
versions), so changed code never serves a task it would not make. An entry is checked against the digest it carries
when read; a damaged one is made again, never served. Storing is best effort: a store that cannot be written costs a
generation, nothing else. It holds at most ``STORE_SIZE`` tasks, the ones used last (a client resetting fresh ids
must not fill the disk: 1.2 million ids exist). Processes sharing a store make an id once between them: one makes it
while the others wait on a lock of the id's (one of ``LOCKS`` files), then read what it kept. Like the test environments (ENV_TEST_ENVS), the directory is the server user's, which no
sandboxed run may write.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import logging
import os
import sys
import tempfile
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path, PurePosixPath
from typing import Any

import env
from env import settings

log = logging.getLogger("agentdebugger")

VARIABLE = "ENV_PROCEDURAL_CACHE"
FORMAT = "1"  # the entry's layout: a change makes every entry of the old layout a miss
STORE_SIZE = 256  # tasks kept: about 25 KiB each (6 MiB), every listed id and a trainer's working set
LOCKS = 64  # lock files the ids share (by a hash of the id): a bounded number, however many ids are made


@functools.cache
def code_digest() -> str:
    """What a public task's content follows besides its id: the code of the ``env`` package, Python and pytest."""
    digest = hashlib.sha256(f"{FORMAT}\0{sys.version}\0{metadata.version('pytest')}\0".encode())
    root = Path(env.__file__).parent
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _content_digest(data: dict[str, Any], files: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps([data, files], sort_keys=True).encode()).hexdigest()


class TaskStore:
    def __init__(self, root: Path, size: int = STORE_SIZE) -> None:
        self.root = root
        self.size = size

    @classmethod
    def from_env(cls) -> TaskStore | None:
        if settings.raw(VARIABLE) == "off":
            return None
        return cls(settings.user_cache(VARIABLE, "procedural"), STORE_SIZE)

    def entry(self, task_id: str) -> Path:
        return self.root / f"{task_id}.{code_digest()[:32]}.json"

    @contextlib.contextmanager
    def making(self, task_id: str) -> Iterator[None]:
        """Held while ``task_id`` is looked up and, if not kept, made and saved: another process making it waits, then
        finds it kept. Best effort, like storing: where the lock cannot be taken, each process makes its own."""
        try:
            self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
            handle = os.open(self.root / f".lock-{lock_stripe(task_id):02d}", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError:
            yield
            return
        try:
            with contextlib.suppress(OSError):
                fcntl.flock(handle, fcntl.LOCK_EX)
            yield
        finally:
            os.close(handle)  # the lock goes with the descriptor

    def load(self, task_id: str, folder: Path) -> dict[str, Any] | None:
        """The kept task's fields, with its folder's files written into ``folder``; None when none is kept intact."""
        try:
            record = json.loads(self.entry(task_id).read_text(encoding="utf-8"))
            data, files = record["data"], record["files"]
            intact = record["digest"] == _content_digest(data, files) and data.get("id") == task_id
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if not intact or not all(_inside(rel) for rel in files):
            log.warning("procedural task store: %s is damaged; the task is made again", self.entry(task_id))
            return None
        for rel, text in files.items():
            path = folder / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        with contextlib.suppress(OSError):
            os.utime(self.entry(task_id))  # used now: the last to go when the store is full
        return dict(data)

    def save(self, task_id: str, data: dict[str, Any], folder: Path) -> None:
        """Keep the task (its fields and its folder's files), replacing what an older code kept of it."""
        files = {p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8") for p in sorted(folder.rglob("*")) if p.is_file()}
        target = self.entry(task_id)
        try:
            self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
            text = json.dumps({"digest": _content_digest(data, files), "data": data, "files": files}, sort_keys=True)
            with tempfile.NamedTemporaryFile("w", dir=self.root, prefix=f".{task_id}-", suffix=".tmp", delete=False, encoding="utf-8") as out:
                try:
                    out.write(text)
                    out.close()
                    os.replace(out.name, target)  # whole or absent: a process reading it at once never sees half
                finally:
                    Path(out.name).unlink(missing_ok=True)  # gone once replaced; left only by a failed write
            for old in self.root.glob(f"{task_id}.*.json"):
                if old != target:
                    old.unlink(missing_ok=True)
            self._evict()
        except (OSError, TypeError, ValueError) as exc:
            log.warning("procedural task store: %s not kept (%s); it is made again in the next process", task_id, exc)


    def _evict(self) -> None:
        """Down to ``size`` entries: those used longest ago go."""
        kept = []
        for path in self.root.glob("*.json"):
            with contextlib.suppress(OSError):
                kept.append((path.stat().st_mtime_ns, path.name, path))
        for _, _, path in sorted(kept)[: max(0, len(kept) - self.size)]:
            path.unlink(missing_ok=True)


def lock_stripe(task_id: str) -> int:
    """Which of the ``LOCKS`` lock files ``task_id`` takes."""
    return int(hashlib.sha256(task_id.encode()).hexdigest()[:8], 16) % LOCKS


def _inside(rel: str) -> bool:
    path = PurePosixPath(rel)
    return not path.is_absolute() and ".." not in path.parts and bool(path.parts)
