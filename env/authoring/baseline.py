"""What a library's clean tree does, measured once per synthesis: which tests are trusted, which lines each covers.

    base = baseline(lib, sandbox, state)      # cached in state/baseline.json
    base.trusted                              # passing sandboxed and under the split, each reaching the project
    base.covered["pkg/mod.py"][42]            # the trusted tests executing that line
    base.budget()                             # how long a mutant's run may take before it counts as hanging

The suite runs sandboxed under ``coverage`` (one dynamic context per test, measured in the sandbox: a hint, never
trusted as a result) and under the split. Only tests that pass both ways and reach the project's code are kept, so
every task built on them is trusted as part 1 of the real-repository work defines it.
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
from env.verdict.outcome import RepoVerdict
from env.verdict.repo_judge import run_tests
from env.verdict.sandboxed import run_sandboxed
from env.verdict.testenv import ensure

COVERAGE = "coverage==7.10.7"  # measures the baseline's lines per test; only the synthesis run's environment holds it
MIN_RUN_SECONDS = 20.0
HANG_FACTOR = 5.0


class Baseline(BaseModel):
    """What the library's clean tree does: the trusted tests and the lines each test covers."""

    trusted: list[str] = Field(description="Tests passing sandboxed and under the split, each reaching the project's code")
    covered: dict[str, dict[int, list[str]]] = Field(description="{path: {line: [test ids]}} for the project's source files")
    seconds: float = 0.0
    run_seconds: float = Field(0.0, description="The slowest of the clean runs (sandboxed with coverage, split): what bounds a mutant's")

    def budget(self) -> float:
        """A mutant's run may take this long before it counts as hanging (a planted endless loop is common)."""
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


NETWORK = re.compile(r"Network is unreachable|Name or service not known|Temporary failure in name resolution|nodename nor servname|"
                     r"getaddrinfo failed|URLError|ConnectionError|ConnectionRefused|socket\.gaierror|Operation not permitted.*socket|"
                     r"socket.*Operation not permitted|SocketBlocked|No route to host", re.I)  # fmt: skip


def no_test_passes(run: RepoVerdict) -> str:
    """Why a clean suite gives nothing to synthesize from: no test passed sandboxed, with the first reasons (and the
    network named, when that is what the failures say: the sandbox has none)."""
    reasons = {t: run.reason(t) for t in sorted(run.outcomes)}
    shown = "; ".join(f"{t.split('::', 1)[-1]}: {r}" for t, r in list(reasons.items())[:3])
    offline = [t for t, r in reasons.items() if NETWORK.search(r) or NETWORK.search(run.excerpts.get(t, ""))]
    network = f"its suite needs the network ({len(offline)} of {len(reasons)} test(s) failed reaching it), and sandboxed tests have none; " if offline else ""
    return f"{network}no test passes sandboxed ({len(reasons)} ran: {shown})"


def baseline(lib: Library, sandbox: Sandbox, state: Path) -> Baseline:
    cached = state / "baseline.json"
    if cached.is_file():
        return Baseline.model_validate_json(cached.read_text(encoding="utf-8"))
    started = time.monotonic()
    task = library_task(lib, state / "library", lib.tests)
    clock = time.monotonic()
    measured = run_sandboxed(sandbox, ensure([*lib.requirements, COVERAGE]), task, task.files, task.visible_tests, lib.tests, coverage=True)
    if measured.error or not measured.outcomes:
        raise SynthesisError(f"{lib.slug}: the tests did not run sandboxed: {measured.error or measured.aborted or 'no test reported'}")
    passing = sorted(t for t, s in measured.outcomes.items() if s == "PASSED")
    if not passing:
        raise SynthesisError(f"{lib.slug}: {no_test_passes(measured)}")
    sandboxed_seconds, clock = time.monotonic() - clock, time.monotonic()
    split = run_tests(sandbox, task.model_copy(update={"fail_to_pass": passing}), task.files)
    slowest = max(sandboxed_seconds, time.monotonic() - clock)
    if split.error:
        raise SynthesisError(f"{lib.slug}: the tests did not run under the split: {split.error}")
    trusted = [t for t in passing if split.outcomes.get(t) == "PASSED" and split.ops.get(t, 0) > 0]
    if not trusted:
        raise SynthesisError(f"{lib.slug}: no test passes both sandboxed and under the split while reaching the project's code")
    source = {p for p in source_only(lib.files) if p.endswith(".py")}
    kept = set(trusted)
    covered = {p: {line: [t for t in ids if t in kept] for line, ids in lines.items()} for p, lines in measured.covered.items() if p in source}
    result = Baseline(trusted=trusted, covered=covered, seconds=round(time.monotonic() - started, 2), run_seconds=round(slowest, 2))
    cached.write_text(result.model_dump_json(), encoding="utf-8")
    return result
