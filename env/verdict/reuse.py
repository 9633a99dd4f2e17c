"""An episode's last run of all its visible tests, kept with a digest of the files it ran: a ``submit`` of the very
same files takes it as the visible half of its graded run instead of running those tests again.

    last = LastRun()
    last.keep(files, verdict)          # after ``run_tests`` without a selection (the visible tests, ungraded)
    last.of(files)                     # at ``submit``: a copy of that verdict if the files are the same, else None

A split run's outcomes are a function of the project's files and the task's tests (a task is proven to give the same
results run after run), so the reused half is what running it again gives. Only a run that decided every outcome is
kept: not one that errored, was stopped, timed out, was void or found the machine too busy. The held-out half always
runs, as before.
"""

from __future__ import annotations

import hashlib

from env.patches import Files
from env.verdict.outcome import RepoVerdict


def files_digest(files: Files) -> str:
    digest = hashlib.sha256()
    for path in sorted(files):
        data = files[path].encode("utf-8", "surrogatepass")
        digest.update(path.encode("utf-8", "surrogatepass") + b"\0" + str(len(data)).encode() + b"\0" + data)
    return digest.hexdigest()


def decided(verdict: RepoVerdict) -> bool:
    """Whether the run decided its outcomes (nothing went wrong around them)."""
    return not (verdict.error or verdict.aborted or verdict.busy or verdict.timed_out or verdict.void) and verdict.held_out is None


class LastRun:
    """One episode's last run of all its visible tests (the episode's own: no other episode reads it)."""

    def __init__(self) -> None:
        self._digest = ""
        self._verdict: RepoVerdict | None = None

    def keep(self, files: Files, verdict: RepoVerdict) -> None:
        """After a run of all the visible tests on ``files``; any other run or a failed one forgets the last."""
        self._digest, self._verdict = (files_digest(files), verdict.model_copy(deep=True)) if decided(verdict) else ("", None)

    def forget(self) -> None:
        self._digest, self._verdict = "", None

    def of(self, files: Files) -> RepoVerdict | None:
        """A copy of the kept run if it ran exactly ``files``; None otherwise."""
        if self._verdict is None or files_digest(files) != self._digest:
            return None
        return self._verdict.model_copy(deep=True)
