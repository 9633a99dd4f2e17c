"""``python -m env.authoring catalog verify``: the built tasks proven valid again, each with what the proof cost.

    results = verify(Path("~/.cache/agentdebugger/catalog"), sample=50, seed=0, runs=3, workers=2)

The tasks are those ``DIR/catalog.json`` lists (all of them, or ``sample`` of them drawn with ``seed``: the same
sample each time). Each is validated by ``env.authoring.validate.validate_task`` (the buggy state fails every
FAIL_TO_PASS test and passes every PASS_TO_PASS test, the gold passes all, ``runs`` runs of each state agree, no test
passes vacuously, the held-out tests hold), with its CPU seconds (this process's tree, ``env.authoring.cost``) and
wall seconds; ``DIR/.build/verify.jsonl`` keeps every result.
"""

from __future__ import annotations

import random
import statistics
from pathlib import Path

from pydantic import BaseModel, Field

from env.authoring.catalog.build import STATE
from env.authoring.catalog.index import read_index
from env.authoring.catalog.pool import run
from env.authoring.cost import Meter
from env.authoring.ledger import append
from env.authoring.validate import validate_task
from env.families.catalog import TaskCatalog
from env.project import load_repo_task
from env.runtime import Runtime
from env.sandbox.isolation import probe_isolation
from env.sandbox.limits import Limits
from env.sandbox.runner import Sandbox


class Proof(BaseModel):
    """One task to prove valid again: its folder, and runs of each state."""

    folder: str
    runs: int


class Verified(BaseModel):
    id: str
    valid: bool
    problems: str = ""
    busy: str = Field("", description="nothing decided: the machine starved its runs (env.verdict.busy), not the task's fault")
    cpu_seconds: float
    wall_seconds: float


_runtime: Runtime | None = None


def verify_one(check: Proof) -> Verified:
    global _runtime
    folder = Path(check.folder)
    with Meter() as cost:
        try:
            if _runtime is None:
                isolation = probe_isolation()
                if not isolation.can_execute:
                    raise RuntimeError(f"this host cannot run the verdict: {isolation.reason}")
                # Validity is decided here: the limits count CPU time (Limits.for_validity), as validate's do.
                _runtime = Runtime(TaskCatalog([]), Sandbox(Limits.from_env().for_validity(), isolation), workers=2)
            report = validate_task(_runtime, load_repo_task(folder), runs=check.runs)
            problems = "; ".join(f"{c.name}: {c.detail}" if c.detail else c.name for c in report.checks if not c.ok)
            valid, busy = report.ok, report.busy
        except Exception as exc:  # a folder that does not load, a host that cannot run it: that task's result
            valid, busy, problems = False, "", f"{type(exc).__name__}: {' '.join(str(exc).split())[:1500]}"
    return Verified(id=folder.name, valid=valid, problems=problems, busy=busy, cpu_seconds=cost.cpu_seconds, wall_seconds=cost.wall_seconds)


def chosen(out: Path, sample: int | None, seed: int) -> list[str]:
    ids = sorted(t.id for t in read_index(out).tasks)
    if sample is not None and sample < len(ids):
        ids = sorted(random.Random(seed).sample(ids, sample))
    return ids


def verify(out: Path, sample: int | None, seed: int, runs: int, workers: int, ray: str | None = None) -> list[Verified]:
    checks = [Proof(folder=str(out / task_id), runs=runs) for task_id in chosen(out, sample, seed)]
    results = []
    for result in run(verify_one, checks, workers, ray):
        append(out / STATE / "verify.jsonl", result.model_dump_json())
        results.append(result)
    return sorted(results, key=lambda r: r.id)


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile (p90 of 10 values is the 9th smallest)."""
    ordered = sorted(values)
    return ordered[max(0, -(-int(share * 100) * len(ordered) // 100) - 1)] if ordered else 0.0


def cost_line(values: list[float]) -> str:
    if not values:
        return "no task"
    return f"median {statistics.median(values):.1f} s, p90 {percentile(values, 0.9):.1f} s, total {sum(values):.1f} s over {len(values)} task(s)"
