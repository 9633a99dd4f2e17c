"""What each mutation operator yields in a synthesis already run: candidates, tried, valid, and why the rest were not.

    python bench/bench_synthesis.py --libs parse,inflection --n 10 --out DIR      # first, the synthesis
    python bench/bench_mutation_yield.py --libs parse,inflection --out DIR

The candidates are generated again (``env.authoring.synthesize.candidates``, from the cached baseline and the
sdist) and joined to the ledger's decisions by key: run it with the code the synthesis ran with. A short synthesis
tries few candidates of each operator (they come round robin by function, not by operator): the candidates column
is the whole supply, the others are a sample.
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the project root is what it imports from
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_synthesis import DEFAULT, LIBRARIES  # noqa: E402
from env.authoring.baseline import Baseline  # noqa: E402
from env.authoring.ledger import read_ledger  # noqa: E402
from env.authoring.library import load_library  # noqa: E402
from env.authoring.synthesize import candidates  # noqa: E402


def table(pin: str, out: Path, seed: int = 0) -> list[str]:
    lib = load_library(pin)
    base = Baseline.model_validate_json((out / ".synthesis" / "baseline.json").read_text(encoding="utf-8"))
    order = candidates(lib, base, seed)
    operator_of = {m.key: m.operator for m in order}
    supply = collections.Counter(m.operator for m in order)
    outcomes: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for decision in read_ledger(out / ".synthesis" / "ledger.jsonl"):
        outcomes[operator_of.get(decision.key, "(not a candidate of this code)")][decision.status] += 1
    tried = sum(sum(c.values()) for c in outcomes.values())
    valid = sum(c["valid"] for c in outcomes.values())
    rows = [
        f"{pin}: {len(order)} candidates, {tried} tried, {valid} valid",
        "",
        "| operator | candidates | tried | valid | the others |",
        "|---|---|---|---|---|",
    ]
    for operator in sorted({*supply, *outcomes}, key=lambda o: (-supply[o], o)):
        counts = outcomes[operator]
        others = ", ".join(f"{status} {n}" for status, n in sorted(counts.items()) if status != "valid") or "-"
        rows.append(f"| {operator} | {supply[operator]} | {sum(counts.values())} | {counts['valid']} | {others} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="the --out of bench_synthesis.py (one folder per library)")
    parser.add_argument("--libs", default=DEFAULT)
    parser.add_argument("--seed", type=int, default=0, help="the synthesis's --seed")
    args = parser.parse_args()
    for name in args.libs.split(","):
        print("\n".join(table(LIBRARIES[name][0], Path(args.out) / name, args.seed)) + "\n")


if __name__ == "__main__":
    main()
