"""What a library's clean tree does, measured once per synthesis: which tests are trusted, which lines each covers.

    base = baseline(lib, sandbox, state)      # cached in state/baseline.json
    base.trusted                              # passing sandboxed and under the split, each reaching the project
    base.covered["pkg/mod.py"][42]            # the trusted tests executing that line
    base.budget()                             # how long a mutant's run may take before it counts as hanging

The suite runs sandboxed under ``coverage`` (one dynamic context per test, measured in the sandbox: a hint, never
trusted as a result) and under the split. Only tests that pass both ways and reach the project's code are kept, so
every task built on them is trusted as part 1 of the real-repository work defines it. A library none of whose tests
is kept is refused with the first tests that were not, each with where it failed and why (``untrusted``).

The runs' limits count CPU time (the synthesis's sandbox is ``Sandbox.for_validity``), and so does ``run_seconds``, the
CPU time of the slower clean run, from which a mutant's budget is set: the same library gets the same baseline and
the same budget on a busy machine as on an idle one. A run the machine starved runs again; one starved each time is
refused as the machine's fault (``SynthesisError`` saying so), never as the library's.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

from pydantic import BaseModel, Field

from env.authoring.library import Library, SynthesisError
from env.patches import Files
from env.project import RepoTask, load_repo_task, source_only
from env.sandbox.runner import Sandbox
from env.verdict.busy import MachineBusy, until_decided
from env.verdict.outcome import RepoVerdict
from env.verdict.repo_judge import run_tests
from env.verdict.sandboxed import run_sandboxed
from env.verdict.testenv import ensure

COVERAGE = "coverage==7.10.7"  # measures the baseline's lines per test; only the synthesis run's environment holds it
MIN_RUN_SECONDS = 20.0
HANG_FACTOR = 5.0
SHOWN = 10  # the tests an untrusted library's refusal lists


class Baseline(BaseModel):
    """What the library's clean tree does: the trusted tests and the lines each test covers."""

    trusted: list[str] = Field(description="Tests passing sandboxed and under the split, each reaching the project's code")
    covered: dict[str, dict[int, list[str]]] = Field(description="{path: {line: [test ids]}} for the project's source files")
    seconds: float = 0.0
    run_seconds: float = Field(
        0.0, description="The CPU seconds of the slower clean run (sandboxed with coverage, split; where CPU time could not be "
                         "read, its wall seconds): what bounds a mutant's",
    )  # fmt: skip

    def budget(self) -> float:
        """The CPU seconds a mutant's run may use before it counts as hanging (a planted endless loop is common)."""
        return max(MIN_RUN_SECONDS, HANG_FACTOR * self.run_seconds)


def library_task(lib: Library, folder: Path, tests: list[str]) -> RepoTask:
    """A task over the clean library whose lists name ``tests``: what the baseline runs."""
    repo = folder / "repo"
    if repo.exists():
        shutil.rmtree(repo)
    write_tree(repo, lib.files)
    (folder / "gold.patch").write_text("", encoding="utf-8")
    data = {"id": f"baseline-{lib.slug}", "problem_statement": "baseline", "FAIL_TO_PASS": tests,
            "environment": lib.environment, "requirements": lib.requirements}  # fmt: skip
    (folder / "task.json").write_text(json.dumps(data), encoding="utf-8")
    return load_repo_task(folder)


def write_tree(root: Path, files: Files) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def baseline(lib: Library, sandbox: Sandbox, state: Path) -> Baseline:
    cached = state / "baseline.json"
    if cached.is_file():
        return Baseline.model_validate_json(cached.read_text(encoding="utf-8"))
    started = time.monotonic()
    task = library_task(lib, state / "library", lib.tests)
    env = ensure([*lib.requirements, COVERAGE])
    try:
        measured = until_decided(lambda: run_sandboxed(sandbox, env, task, task.files, task.visible_tests, lib.tests, coverage=True))
        if measured.error or not measured.outcomes:
            raise SynthesisError(f"{lib.slug}: the tests did not run sandboxed: {measured.error or measured.aborted or 'no test reported'}")
        passing = sorted(t for t, s in measured.outcomes.items() if s == "PASSED")
        split = until_decided(lambda: run_tests(sandbox, task.model_copy(update={"fail_to_pass": passing}), task.files)) if passing else RepoVerdict()
    except MachineBusy as exc:
        raise SynthesisError(f"{lib.slug}: the baseline was not measured, the machine too busy to run it (synthesize again): {exc}") from None
    slowest = max(_seconds(measured), _seconds(split))
    if split.error:
        raise SynthesisError(f"{lib.slug}: the tests did not run under the split: {split.error}")
    trusted = [t for t in passing if split.outcomes.get(t) == "PASSED" and split.ops.get(t, 0) > 0]
    if not trusted:
        raise SynthesisError(untrusted(lib.slug, measured, split))
    source = {p for p in source_only(lib.files) if p.endswith(".py")}
    kept = set(trusted)
    covered = {p: {line: [t for t in ids if t in kept] for line, ids in lines.items()} for p, lines in measured.covered.items() if p in source}
    result = Baseline(trusted=trusted, covered=covered, seconds=round(time.monotonic() - started, 2), run_seconds=round(slowest, 2))
    cached.write_text(result.model_dump_json(), encoding="utf-8")
    return result


def _seconds(verdict: RepoVerdict) -> float:
    """The CPU seconds a run used (its wall seconds where CPU time could not be read)."""
    return verdict.cpu_seconds if verdict.cpu_seconds is not None else verdict.duration_ms / 1000


# What a test reaching for the network prints when it cannot (no run, sandboxed or split, has a network).
NETWORK = re.compile(r"Network is unreachable|Name or service not known|Temporary failure in name resolution|nodename nor servname|"
                     r"getaddrinfo failed|URLError|ConnectionError|ConnectionRefused|socket\.gaierror|Operation not permitted.*socket|"
                     r"socket.*Operation not permitted|No route to host", re.I)  # fmt: skip


def untrusted(slug: str, sandboxed: RepoVerdict, split: RepoVerdict) -> str:
    """Why no test of a library can be trusted: how many failed where, and the first ``SHOWN`` of them with where each
    failed (sandboxed, under the split, or it passed both without reaching the project's code) and why."""
    where: dict[str, str] = {}
    for test in sorted(sandboxed.outcomes):
        if sandboxed.outcomes[test] != "PASSED":
            where[test] = f"sandboxed: {sandboxed.outcomes[test]}: {sandboxed.reason(test)}"
        elif split.outcomes.get(test) != "PASSED":
            where[test] = f"split: {split.outcomes.get(test, 'no outcome')}: {split.reason(test)}"
        else:
            where[test] = "did not reach the project's code (it passed both ways without one call into it)"
    counts = {kind: sum(w.startswith(kind) for w in where.values()) for kind in ("sandboxed", "split", "did not reach")}
    lines = [f"  {test}: {why}" for test, why in list(where.items())[:SHOWN]]
    more = f"\n  ... and {len(where) - SHOWN} more" if len(where) > SHOWN else ""
    offline = [t for t in where if NETWORK.search(where[t]) or NETWORK.search(sandboxed.excerpts.get(t, ""))]
    network = f"its suite needs the network ({len(offline)} of {len(where)} test(s) failed reaching it), which no test run has; " if offline else ""
    return (
        f"{slug}: {network}no test passes both sandboxed and under the split while reaching the project's code; of its {len(where)} "
        f"test(s) {counts['sandboxed']} failed sandboxed, {counts['split']} under the split and {counts['did not reach']} did not "
        f"reach the project's code; the first {min(SHOWN, len(where))}:\n" + "\n".join(lines) + more
    )
