"""The hard task's race verdict against an independent one: frontrun's DPOR explorer, variant by variant.

    python bench/bench_race_crosscheck.py [--seeds 1] [--budget 3.0] [--only NAME ...]

frontrun (a dev dependency) explores every interleaving of the task's boundary scenarios on each racy and
correct variant of ``tests/race_variants.py`` (``tests/race_crosscheck.py``, under frontrun's own CLI wrapper,
in a subprocess); the project's verdict is ``env.families.classic.judge.judge`` with a secret-derived plan,
``--seeds`` times per variant. Prints a row per variant: its kind, frontrun's verdict and the interleavings it
explored (summed over the scenarios; a scenario stops at its first violation), the project's verdict and the
interleavings its explorer ran (``verdict.stress.schedules``, summed over the seeds), and whether the two agree; then frontrun's counterexample or reason for every disagreement
and every inconclusive row, and the time each side took.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from env.families.catalog import TaskCatalog  # noqa: E402
from env.families.classic.judge import judge  # noqa: E402
from env.families.classic.task import TaskSpec  # noqa: E402
from env.sandbox.isolation import probe_isolation  # noqa: E402
from env.sandbox.limits import Limits  # noqa: E402
from env.sandbox.runner import Sandbox  # noqa: E402
from env.secret import ServerSecret  # noqa: E402
from tests.race_crosscheck import run_under_frontrun, variants  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1, help="project verdicts per variant (each with its own plan)")
    parser.add_argument("--budget", type=float, default=3.0, help="frontrun's seconds per scenario at most")
    parser.add_argument("--only", nargs="*", help="variant names to run (default: every racy and correct one)")
    args = parser.parse_args()
    started = time.perf_counter()
    theirs = {result["name"]: result for result in run_under_frontrun(args.only, args.budget)}
    frontrun_seconds = time.perf_counter() - started

    task = TaskCatalog.builtin().get("hard")
    assert isinstance(task, TaskSpec)
    sandbox = Sandbox(Limits(), probe_isolation())
    secret = ServerSecret("the race cross-check bench's own secret, fixed for reproducible figures")
    rows = [(name, kind, source) for name, kind, source in variants() if name in theirs]
    width = max([len("variant"), *(len(name) for name, _, _ in rows)])
    print(f"{'variant':{width}s} {'kind':8s} {'frontrun':>13s} {'its runs':>8s} {'project':>9s} {'its runs':>8s} {'agree':>6s}")
    notes: list[str] = []
    disagreements = 0
    project_seconds = 0.0
    for name, kind, source in rows:
        started = time.perf_counter()
        verdicts = [judge(task, source, sandbox, secret.rng("classic", task.id, seed, "verdict")) for seed in range(args.seeds)]
        project_seconds += time.perf_counter() - started
        caught = sum(not (v.stress and v.stress.passed) for v in verdicts)
        schedules = sum(v.stress.schedules if v.stress else 0 for v in verdicts)
        # every seed must agree for "racy" (and none may fail for "correct"): a mixed result is its own verdict
        ours = "racy" if caught == len(verdicts) else "correct" if caught == 0 else f"racy {caught}/{len(verdicts)}"
        result = theirs[name]
        agree = "n/a" if result["verdict"] == "inconclusive" else "yes" if result["verdict"] == ours else "NO"
        disagreements += agree == "NO"
        # both may agree and still both be wrong about the variant's kind: flag that too
        mislabelled = agree == "yes" and ours != kind
        print(f"{name:{width}s} {kind:8s} {result['verdict']:>13s} {result['interleavings']:8d} {ours:>9s} {schedules:8d} {agree:>6s}"
              + (f"   <-- both say it is not {kind}" if mislabelled else ""))
        if agree != "yes" or mislabelled:
            unsettled = [s for s in result["scenarios"] if s["outcome"] != "held"]
            lines = [f"--- {name}: frontrun {result['verdict']}, project {ours}" + (f" ({result['error']})" if result["error"] else "")]
            lines += [f"  frontrun, '{s['scenario']}' ({s['outcome']}, schedule {s['schedule']}):\n    " + s["detail"].replace("\n", "\n    ") for s in unsettled[:1]]
            if len(unsettled) > 1:
                lines.append("  frontrun, likewise: " + "; ".join(f"'{s['scenario']}' ({s['outcome']})" for s in unsettled[1:]))
            if not unsettled:
                lines.append(f"  frontrun: every scenario explored to the end and held ({result['interleavings']} interleavings)")
            failed = [v.stress.message for v in verdicts if v.stress and not v.stress.passed]
            if failed:
                lines.append("  the project:\n    " + failed[0].replace("\n", "\n    "))
            notes.append("\n".join(lines))
    for note in notes:
        print(note)
    print(f"frontrun: {frontrun_seconds:.1f} s for {len(theirs)} variants (its subprocess, start-up included); "
          f"the project: {project_seconds:.1f} s for {len(theirs) * args.seeds} verdicts")
    print("frontrun agrees wherever it is conclusive" if not disagreements else f"{disagreements} variant(s) where frontrun and the project disagree")


if __name__ == "__main__":
    main()
