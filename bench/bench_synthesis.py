"""Task synthesis from real libraries: valid tasks per library, the yield and the seconds per valid task.

    python bench/bench_synthesis.py [--n 30] [--out DIR] [--libs parse,inflection]

For each library (its sdist downloaded from PyPI at run time) ``python -m env.authoring synthesize`` plants bugs until
``--n`` tasks are proven valid, then ``python -m env.authoring validate`` proves every written task valid again, as a
user would. Both run as the commands a user types. The output folder is kept (and a second run resumes it: delete
it to measure from scratch). Prints one row per library: tried, valid, yield, seconds per valid task, the
re-validation's result, and how the kept tasks spread over mutation operators and difficulty.
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIBRARIES = {  # the pin, and what its tests import besides pytest
    "parse": ("parse==1.20.2", ()),
    "inflection": ("inflection==0.5.1", ()),
    "jmespath": ("jmespath==1.0.1", ()),
    "idna": ("idna==3.10", ()),
    "cachetools": ("cachetools==5.5.0", ()),
    "semver": ("semver==3.0.2", ("packaging==24.1",)),
    "toolz": ("toolz==1.0.0", ()),
    "tabulate": ("tabulate==0.9.0", ()),
}
DEFAULT = "parse,inflection,idna,semver,toolz"  # the five that synthesize at the default limits (jmespath, cachetools: SANDBOX_WALL_SECONDS=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=30)
    parser.add_argument("--out", default=str(Path(tempfile.gettempdir()) / "adbg-bench-synthesis"))
    parser.add_argument("--libs", default=DEFAULT)
    parser.add_argument("--runs", type=int, default=3, help="runs of each state, in synthesis and in the re-validation")
    args = parser.parse_args()
    rows = []
    for name in args.libs.split(","):
        pin, requires = LIBRARIES[name]
        out = Path(args.out) / name
        command = [sys.executable, "-m", "env.authoring", "synthesize", pin, "--n", str(args.n), "--out", str(out), "--runs", str(args.runs)]
        command += [f"--requires={r}" for r in requires]
        started = time.monotonic()
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        wall = time.monotonic() - started
        summary = json.loads((out / ".synthesis" / "summary.json").read_text()) if (out / ".synthesis" / "summary.json").is_file() else {}
        if done.returncode not in (0, 1) or not summary:
            print(f"{name}: synthesis failed: {(done.stderr or done.stdout)[-1500:]}", flush=True)
            continue
        started = time.monotonic()
        check = subprocess.run([sys.executable, "-m", "env.authoring", "validate", str(out), "--runs", str(args.runs)], cwd=ROOT, capture_output=True, text=True)
        validate_seconds = time.monotonic() - started
        last = (check.stdout.strip().splitlines() or ["(no output)"])[-1]
        tasks = [json.loads(p.read_text()) for p in sorted(out.glob("*/task.json"))]
        operators = collections.Counter(t["synthesis"]["operator"] for t in tasks)
        levels = collections.Counter(t["difficulty"] for t in tasks)
        rows.append((pin, summary, last, validate_seconds, operators, levels))
        print(f"{pin}: {summary['valid']} valid of {summary['tried']} tried ({summary['by_status']}), "
              f"{summary['seconds']:.0f} s in all ({wall:.0f} s this run), validate: {last} ({validate_seconds:.0f} s)", flush=True)  # fmt: skip
    print()
    print("| library | tried | valid | yield | s per valid task | `validate` | operators of the kept tasks | difficulty |")
    print("|---|---|---|---|---|---|---|---|")
    for pin, s, last, vs, operators, levels in rows:
        spread = ", ".join(f"{k} {v}" for k, v in operators.most_common())
        level = ", ".join(f"{k} {levels[k]}" for k in ("easy", "medium", "hard") if levels[k])
        print(f"| {pin} | {s['tried']} | {s['valid']} | {s['valid'] / max(1, s['tried']):.0%} | {s['seconds_per_valid']} | {last} ({vs:.0f} s) | {spread} | {level} |")
    total_valid = sum(r[1]["valid"] for r in rows)
    total_seconds = sum(r[1]["seconds"] for r in rows)
    print(f"\n{total_valid} valid tasks from {len(rows)} libraries in {total_seconds:.0f} s: {total_seconds / max(1, total_valid):.1f} s per valid task")


if __name__ == "__main__":
    main()
