"""An episode's decided runs of its visible tests, each kept with a digest of the files it ran and its selection: a
``run_tests`` of the very same files and tests answers with the kept run, and a ``submit`` of the same files takes the
kept run of all the visible tests as the visible half of its graded run, instead of running those tests again.

    runs = EpisodeRuns()
    runs.answer(files, select, run)    # a ``run_tests`` (select: its test ids, None for all): the kept run, else run()'s
    runs.of(files)                     # at ``submit``: a copy of the kept all-tests run of these files, else None

A split run's outcomes are a function of the project's files and the task's tests (a task is proven to give the same
results run after run), so the reused run is what running it again gives: an agent repeating a run learns nothing new
and gets nothing new (not a second draw of anything). Only a run that decided every outcome is kept: not one that
errored, was stopped, timed out, was void or found the machine too busy, which the next identical request runs again.
The kept runs are the episode's own (no other episode, and so no other client, reads them), at most ``KEPT`` of them,
the least recently used let go first. The held-out half of a graded run always runs, as before.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable

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


KEPT = 8  # an episode's distinct runs kept: a debugging loop alternates between few states of the files


class EpisodeRuns:
    """One episode's decided runs of its visible tests, by the files they ran and their selection (the episode's own:
    no other episode reads them)."""

    def __init__(self) -> None:
        self._kept: OrderedDict[tuple[str, tuple[str, ...] | None], RepoVerdict] = OrderedDict()

    @staticmethod
    def _key(files: Files, select: list[str] | None) -> tuple[str, tuple[str, ...] | None]:
        return files_digest(files), None if select is None else tuple(select)

    def answer(self, files: Files, select: list[str] | None, run: Callable[[], RepoVerdict]) -> RepoVerdict:
        """The kept run of exactly ``files`` and ``select`` (a copy), else ``run()``'s verdict, kept if it decided every
        outcome (one that decided nothing is not, so the next such request runs again)."""
        key = self._key(files, select)
        found = self._found(key)
        if found is not None:
            return found
        verdict = run()
        if decided(verdict):
            self._kept[key] = verdict.model_copy(deep=True)
            while len(self._kept) > KEPT:
                self._kept.popitem(last=False)
        return verdict

    def of(self, files: Files, select: list[str] | None = None) -> RepoVerdict | None:
        """A copy of the kept run of exactly ``files`` and ``select`` (a copy: a graded run writes into it); None when
        there is none."""
        return self._found(self._key(files, select))

    def _found(self, key: tuple[str, tuple[str, ...] | None]) -> RepoVerdict | None:
        verdict = self._kept.get(key)
        if verdict is None:
            return None
        self._kept.move_to_end(key)
        return verdict.model_copy(deep=True)
