"""How long a fresh interpreter takes to import the client, against the OpenEnv-based client it replaced.

    python bench/bench_client_import.py [--runs 5]

Each figure is the median wall time of ``python -c "<imports>"`` in a new interpreter (so the page
cache is warm after the first run, as in a trainer starting its workers), interpreter start-up
included. Rows:
  * ``python -c pass``, the floor;
  * ``import env.client``, the client now (target: 1.5 s or less);
  * the old client's imports, ``openenv.core.env_client`` and ``env.models`` (OpenEnv's package
    imports its Gradio web interface on import);
  * ``import env.models``, the server's models, which still import OpenEnv (for reference).
Also checks that ``import env.client`` loads no ``openenv`` or ``gradio`` module.
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
ROWS = {
    "python -c pass": "pass",
    "import env.client (now)": "import env.client",
    "old client's imports": "import openenv.core.env_client, env.models",
    "import env.models (server)": "import env.models",
}
HEAVY_CHECK = "import sys, env.client; print(sorted({m.split('.')[0] for m in sys.modules} & {'openenv', 'gradio'}))"


def seconds(code: str, runs: int) -> float:
    """The median wall time of ``python -c code`` over ``runs`` fresh interpreters, after one warm-up."""
    times = []
    for i in range(runs + 1):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
        if i:  # the first run warms the page cache and writes the .pyc files
            times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    medians = {label: seconds(code, args.runs) for label, code in ROWS.items()}
    print(f"{'imports':28s} {'median s':>9s}   ({args.runs} fresh interpreters each)")
    for label, value in medians.items():
        print(f"{label:28s} {value:9.2f}")
    now, old = medians["import env.client (now)"], medians["old client's imports"]
    print(f"old / now: {old / now:.1f}x; target for import env.client: <= {TARGET_S} s: {'met' if now <= TARGET_S else 'MISSED'}")
    heavy = subprocess.run([sys.executable, "-c", HEAVY_CHECK], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()
    print(f"heavy packages loaded by import env.client: {heavy}")


if __name__ == "__main__":
    main()
