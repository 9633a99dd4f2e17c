"""What a repository run found: each test's outcome, and SWE-bench's rules for what the outcomes mean.

    verdict.outcomes["tests/test_pages.py::test_last"]                    # "PASSED" | "FAILED" | "ERROR" | ...
    resolution(verdict.outcomes, task.fail_to_pass, task.pass_to_pass)   # "FULL" | "PARTIAL" | "NO"
    verdict.trust("tests/test_pages.py::test_last")                      # "split" | "sandboxed"
    verdict.reason("tests/test_pages.py::test_last")                     # why it did not pass, in one line
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, Field

Status = Literal["PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL", "XPASS"]
Trust = Literal["split", "sandboxed"]


class RepoVerdict(BaseModel):
    outcomes: dict[str, Status] = Field(default_factory=dict)
    excerpts: dict[str, str] = Field(default_factory=dict)
    ops: dict[str, int] = Field(default_factory=dict, description="Requests each test sent to the project's code")
    collected: list[str] = Field(default_factory=list)
    collect_errors: dict[str, str] = Field(default_factory=dict)
    output: str = ""
    output_truncated: bool = False
    timed_out: bool = False
    aborted: str = ""
    error: str = Field("", description="Why no test could run (set-up failure, missing requirement)")
    duration_ms: float = 0.0
    sandboxed: list[str] = Field(default_factory=list, description="Tests whose outcome came from a sandboxed run (forgeable in principle)")
    void: str = Field("", description="Why a sandboxed run's outcomes were discarded (its tamper canaries came out wrong)")
    busy: str = Field(
        "", description="Limits counted in CPU time only (Limits.clock): why the run was stopped by its wall-clock backstop under "
                        "its CPU limit. The machine was too busy: the outcomes say nothing about the tests (authoring runs it again)",
    )  # fmt: skip
    cpu_seconds: float | None = Field(None, description="Limits counted in CPU time only: what the run's processes used")
    finished: bool = Field(False, description="The test process wrote its last record (it did not die mid-run)")
    covered: dict[str, dict[int, list[str]]] = Field(
        default_factory=dict, description="Runs that measure coverage: the project lines each test executed, {path: {line: [test ids]}}"
    )
    held_out: dict[str, Status] | None = Field(
        None,
        description="An agent-facing graded run: the held-out tests' outcomes (a missing one failed), from a run of their own; "
        "they decide the grade and never reach the agent. None: the held-out tests did not run",
    )

    def graded_outcomes(self) -> dict[str, Status]:
        """Every outcome that decides the grade: the visible tests' and, when they ran, the held-out ones'."""
        return {**self.outcomes, **(self.held_out or {})}

    def status(self, test_id: str) -> Status:
        return self.outcomes.get(test_id, "ERROR")

    def trust(self, test_id: str) -> Trust:
        """``split``: the outcome is the trusted process's own record; ``sandboxed``: it came from a run the project shared."""
        return "sandboxed" if test_id in self.sandboxed else "split"

    def reason(self, test_id: str) -> str:
        """Why a test did not pass, in one line: the first ``E`` line of its excerpt, or why the run has no outcome
        for it (its file's collection error, the run's own error)."""
        if test_id in self.outcomes:
            if self.void and test_id in self.sandboxed:
                return self.void
            return first_error_line(self.excerpts.get(test_id, ""))
        file = test_id.split("::")[0]
        for key in (file, "<session>"):
            if key in self.collect_errors:
                return first_error_line(self.collect_errors[key] or "collection error")
        if self.error or self.aborted:
            return first_error_line(self.error or self.aborted)
        if self.collected and test_id not in self.collected:
            return "not collected (no such test id there: a parametrisation built from the project's objects differs)"
        return "no outcome reported"


def first_error_line(excerpt: str) -> str:
    """The first ``E`` line of a failure excerpt (pytest's exception line), else its last non-empty line."""
    lines = [line.rstrip() for line in excerpt.splitlines()]
    for line in lines:
        if line.startswith("E "):
            return line[1:].strip()
    rest = [line.strip() for line in lines if line.strip()]
    return rest[-1] if rest else "(no excerpt)"


# -- SWE-bench's grading rules, as pure functions ----------------------------------------------


def f2p_ok(status: str) -> bool:
    return status in ("PASSED", "XFAIL")


def p2p_ok(status: str) -> bool:
    return status in ("PASSED", "XFAIL", "SKIPPED")


def held_out_failed(held_out: Mapping[str, str], ids: list[str], fail_to_pass: list[str]) -> int:
    """How many of the held-out tests ``ids`` did not succeed (SWE-bench's rule for their list; missing: failed)."""
    f2p = set(fail_to_pass)
    return sum(not (f2p_ok if t in f2p else p2p_ok)(held_out.get(t, "ERROR")) for t in ids)


def resolution(outcomes: Mapping[str, str], fail_to_pass: list[str], pass_to_pass: list[str]) -> Literal["FULL", "PARTIAL", "NO"]:
    """FULL: every F2P and P2P test succeeds; PARTIAL: some F2P and every P2P; otherwise NO."""
    f2p = [f2p_ok(outcomes.get(t, "ERROR")) for t in fail_to_pass]
    p2p = all(p2p_ok(outcomes.get(t, "ERROR")) for t in pass_to_pass)
    if f2p and all(f2p) and p2p:
        return "FULL"
    if any(f2p) and p2p:
        return "PARTIAL"
    return "NO"


def _covered(record: object) -> dict[str, dict[int, list[str]]]:
    """A coverage record, checked: it comes from inside the sandbox, so a malformed one is dropped, never trusted."""
    if not isinstance(record, dict) or not isinstance(record.get("tests"), list) or not isinstance(record.get("lines"), dict):
        return {}
    names = record["tests"]
    try:
        return {
            str(path): {int(line): [str(names[i]) for i in ids if type(i) is int and 0 <= i < len(names)] for line, ids in per_line.items()}
            for path, per_line in record["lines"].items()
        }
    except (AttributeError, TypeError, ValueError):
        return {}


def parse_records(text: str, coverage: bool = False) -> RepoVerdict:
    """A run's JSON-lines records (what the test process's Recorder emits) as a verdict; ``coverage``: keep the
    coverage record of a run that asked for one (every other run ignores such a record)."""
    verdict = RepoVerdict()
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if "test" in record:
            verdict.outcomes[record["test"]] = record["status"]
            verdict.ops[record["test"]] = int(record.get("ops", 0))
            if record.get("excerpt"):
                verdict.excerpts[record["test"]] = record["excerpt"]
        elif "collected" in record:
            verdict.collected = record["collected"]
        elif "collect_error" in record:
            verdict.collect_errors[record["collect_error"] or "<session>"] = record.get("excerpt", "")
        elif "coverage" in record:
            if coverage:
                verdict.covered = _covered(record["coverage"])
        elif "fatal" in record:
            verdict.error = record["fatal"]
        elif record.get("done"):
            verdict.finished = True
            verdict.aborted = str(record.get("aborted") or "")
            verdict.timed_out = bool(record.get("timed_out"))
    return verdict
