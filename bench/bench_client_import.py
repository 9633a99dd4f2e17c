"""How long a fresh interpreter takes to import the client, the server, the baseline and the harness.

    python bench/bench_client_import.py [--runs 5]

Each figure is the median wall time of a new interpreter (so the page cache is warm after the first run, as in a
trainer starting its workers), interpreter start-up included. Rows:
  * ``python -c pass``, the floor;
  * ``import env.client``, the client (target: 1.5 s or less), against the OpenEnv-based client it replaced
    (``openenv.core.env_client`` and ``env.models``);
  * ``import env.server.main``, ``import inference``, ``python -m env.eval --help`` and the trusted test host
    (target: 1.0 s or less each); the server's row against its imports as they were before Gradio was held back
    (OpenEnv's package first, which loads its web interface, and the demo);
  * ``import env.models``, the server's models, which import OpenEnv's server package (for reference).
Also checks that ``import env.client`` loads no ``openenv`` or ``gradio`` module, and the server no ``gradio``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 1.5
ENTRY_TARGET_S = 1.0
ROWS = {
    "python -c pass": ["-c", "pass"],
    "import env.client (now)": ["-c", "import env.client"],
    "old client's imports": ["-c", "import openenv.core.env_client, env.models"],
    "import env.server.main": ["-c", "import env.server.main"],
    "  as before (Gradio loaded)": ["-c", "import openenv.core, env.demo.ui, env.server.main"],
    "import inference": ["-c", "import inference"],
    "python -m env.eval --help": ["-m", "env.eval", "--help"],
    "trusted test host": ["-c", "import env.verdict.host.pytest_host"],
    "import env.models (server)": ["-c", "import env.models"],
}
ENTRY_POINTS = ("import env.server.main", "import inference", "python -m env.eval --help", "trusted test host")
HEAVY_CHECK = "import sys, env.client; print(sorted({m.split('.')[0] for m in sys.modules} & {'openenv', 'gradio'}))"
SERVER_CHECK = "import sys, env.server.main; print(sorted({m.split('.')[0] for m in sys.modules} & {'gradio'}))"


def seconds(argv: list[str], runs: int) -> float:
    """The median wall time of ``python *argv`` over ``runs`` fresh interpreters, after one warm-up."""
    times = []
    for i in range(runs + 1):
        started = time.perf_counter()
        subprocess.run([sys.executable, *argv], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        if i:  # the first run warms the page cache and writes the .pyc files
            times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    medians = {label: seconds(argv, args.runs) for label, argv in ROWS.items()}
    print(f"{'imports':28s} {'median s':>9s}   ({args.runs} fresh interpreters each)")
    for label, value in medians.items():
        print(f"{label:28s} {value:9.2f}")
    now, old = medians["import env.client (now)"], medians["old client's imports"]
    print(f"old / now: {old / now:.1f}x; target for import env.client: <= {TARGET_S} s: {'met' if now <= TARGET_S else 'MISSED'}")
    heavy = subprocess.run([sys.executable, "-c", HEAVY_CHECK], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()
    print(f"heavy packages loaded by import env.client: {heavy}")
    for label in ENTRY_POINTS:
        print(f"{label}: {medians[label]:.2f} s, target <= {ENTRY_TARGET_S} s: {'met' if medians[label] <= ENTRY_TARGET_S else 'MISSED'}")
    before = medians["  as before (Gradio loaded)"]
    print(f"server imports, before / now: {before / medians['import env.server.main']:.1f}x")
    gradio = subprocess.run([sys.executable, "-c", SERVER_CHECK], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()
    print(f"gradio loaded by import env.server.main: {gradio}")


if __name__ == "__main__":
    main()
