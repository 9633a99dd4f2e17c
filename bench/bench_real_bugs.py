"""Real historic bugs imported and validated as a new user would (issue 34 items 2 and 4).

    .venv/bin/python bench/bench_real_bugs.py [--only ID ...] [--runs 3] [--work DIR]

For each bug of ``bench/real_bugs.py``: its SWE-bench instance is written (official format) from the two releases'
sdists, downloaded from PyPI at run time; ``python -m env.authoring import-swebench --pypi NAME==VERSION`` imports it (and
places its tests, dropping PASS_TO_PASS tests the gold does not pass); ``env.authoring.validate`` proves it; then the
gold patch, exported as a SWE-bench prediction, and the buggy tree (a prediction that only adds a comment) are graded
by ``python -m env.authoring evaluate``: the first must be resolved (FULL), the second not. One line per bug: imported,
trusted, valid, round trip, the seconds import and validation took, and, for a bug that falls short, one reason
naming what the split (or the import) must learn. The exit code is 0 only when every bug is valid, trusted and
round-trips.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.real_bugs import BUGS, RealBug, build_instance, pass_to_pass
from env.authoring.predictions import Prediction, write_predictions
from env.authoring.validate import validate_task
from env.families.catalog import TaskCatalog
from env.families.registry import load_task
from env.patches import make_patch
from env.project import RepoTask
from env.runtime import Runtime
from env.sandbox.isolation import probe_isolation
from env.sandbox.limits import Limits
from env.sandbox.runner import Sandbox

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Row:
    bug: str
    kind: str
    imported: bool = False
    trusted: bool = False
    valid: bool = False
    round_trip: str = "-"  # "gold FULL, buggy NO" when it holds
    import_seconds: float = 0.0
    validate_seconds: float = 0.0
    dropped: int = 0
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.imported and self.trusted and self.valid and self.round_trip == "gold FULL, buggy NO"


def _tasks(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "env.authoring", *argv], cwd=ROOT, capture_output=True, text=True, check=False)


def _no_op(task: RepoTask, bug: RealBug) -> str:
    """A patch that leaves the buggy tree's behaviour as it is (a comment appended to the first file the fix changes):
    the buggy tree graded as a non-empty prediction."""
    path = bug.code[0]
    return make_patch({path: task.files[path]}, {path: task.files[path] + "\n# no change in behaviour\n"})


def round_trip(task: RepoTask, bug: RealBug, work: Path) -> str:
    """Grade the gold patch and the buggy tree as SWE-bench predictions with ``python -m env.authoring evaluate``."""
    preds = work / f"{bug.instance_id}.predictions.jsonl"
    write_predictions([Prediction(instance_id=task.instance_id, model_name_or_path=name, model_patch=patch)
                       for name, patch in (("gold", task.gold_patch), ("buggy", _no_op(task, bug)))], preds)  # fmt: skip
    done = _tasks(["evaluate", str(preds), str(task.folder)])
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if len(results) != 2:
        return f"evaluate answered {len(results)} of 2: {(done.stderr or done.stdout).strip()[-200:]}"
    return f"gold {results[0]['resolution']}, buggy {results[1]['resolution']}"


def run_bug(bug: RealBug, work: Path, runtime: Runtime, runs: int) -> Row:
    row = Row(bug=bug.instance_id, kind=bug.kind or "-")
    started = time.monotonic()
    try:
        instance = build_instance(bug, pass_to_pass(bug))
    except (ValueError, RuntimeError, OSError) as exc:
        row.reason = f"instance not built: {exc}"
        return row
    path = work / f"{bug.instance_id}.jsonl"
    path.write_text(json.dumps(instance) + "\n", encoding="utf-8")
    done = _tasks(["import-swebench", str(path), "--pypi", f"{bug.name}=={bug.buggy}", "--out", str(work / "tasks")])
    row.import_seconds = time.monotonic() - started
    folder = work / "tasks" / bug.instance_id
    said = [line.strip() for line in done.stdout.splitlines()]
    if not folder.is_dir():
        row.reason = next((line for line in said if line.startswith(("skipped", "invalid"))), done.stderr.strip()[-300:])
        return row
    row.imported = True
    task = load_task(folder)
    assert isinstance(task, RepoTask)
    row.dropped = len(task.dropped)
    started = time.monotonic()
    report = validate_task(Runtime(TaskCatalog([task]), runtime.sandbox, workers=4), task, runs=runs)
    row.validate_seconds = time.monotonic() - started
    row.valid, row.trusted = report.ok, task.trusted
    row.round_trip = round_trip(task, bug, work)
    problems = [f"{c.name}: {c.detail}" if c.detail else c.name for c in report.checks if not c.ok]
    sandboxed = [line.removeprefix("sandboxed: ") for line in said if line.startswith("sandboxed: ") and any(line.startswith(f"sandboxed: {t} ") for t in task.fail_to_pass)]
    if report.busy:
        row.reason = f"not decided: {report.busy}"[:300]
    elif problems:
        row.reason = problems[0][:300]
    elif not row.trusted:
        row.reason = f"FAIL_TO_PASS runs sandboxed: {sandboxed[0] if sandboxed else ', '.join(task.sandboxed)}"[:300]
    elif not row.ok:
        row.reason = f"round trip: {row.round_trip}"
    return row


def table(rows: list[Row]) -> str:
    head = ("bug", "kind", "imported", "trusted", "valid", "round trip", "import s", "validate s", "P2P dropped", "reason")
    cells = [head] + [(r.bug, r.kind, "yes" if r.imported else "NO", "yes" if r.trusted else "no", "yes" if r.valid else "NO", r.round_trip,
                       f"{r.import_seconds:.1f}", f"{r.validate_seconds:.1f}", str(r.dropped), r.reason or "-") for r in rows]  # fmt: skip
    widths = [max(len(c[i]) for c in cells) for i in range(len(head) - 1)]
    return "\n".join("  ".join(c[i].ljust(widths[i]) for i in range(len(head) - 1)) + "  " + c[-1] for c in cells)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", action="append", default=[], metavar="ID", help="these bugs only (instance ids)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each state the validator compares (default 3)")
    parser.add_argument("--work", help="where instances and task folders go (default: a fresh temporary directory)")
    args = parser.parse_args(argv)
    unknown = [b for b in args.only if b not in BUGS]
    if unknown:
        print(f"error: no such bug: {', '.join(unknown)} (known: {', '.join(BUGS)})", file=sys.stderr)
        return 2
    isolation = probe_isolation()
    if not isolation.can_execute:
        print(f"error: this host cannot run the verdict: {isolation.reason}", file=sys.stderr)
        return 2
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="adbg-real-bugs-"))
    work.mkdir(parents=True, exist_ok=True)
    runtime = Runtime(TaskCatalog([]), Sandbox(Limits.from_env().for_validity(), isolation), workers=4)  # as `validate` counts: CPU time
    rows = []
    for bug in [BUGS[b] for b in args.only] or list(BUGS.values()):
        row = run_bug(bug, work, runtime, args.runs)
        rows.append(row)
        print(f"{row.bug}: imported={row.imported} trusted={row.trusted} valid={row.valid} round trip={row.round_trip} "
              f"({row.import_seconds:.1f} s + {row.validate_seconds:.1f} s) {row.reason}", file=sys.stderr, flush=True)  # fmt: skip
    print(table(rows))
    good = sum(r.ok for r in rows)
    libraries = len({BUGS[r.bug].name for r in rows})
    print(f"\n{good} of {len(rows)} bugs ({libraries} libraries) valid, trusted and round-trip; work in {work}")
    return 0 if good == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
