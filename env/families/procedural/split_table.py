"""The procedural family's section of an evaluation report: DebugOps-RX's table of grades by split and difficulty.

    split_table(rows)     # rows: result rows of procedural episodes (env.eval.run); "" when none has a generated id
"""

from __future__ import annotations

import statistics
from typing import Any

from env.families.procedural.model import PRESETS
from env.families.procedural.task import ID

SPLIT_BUGS = {"train": "logic_error, key_error", "test": "logic_error, key_error", "ood": "state_corruption, stochastic_bug"}


def split_table(rows: list[dict[str, Any]]) -> str:
    """Per split, one row per agent: mean grade ± std over seeds for each difficulty (solved %)."""
    placed = [(r, m["level"], m["split"]) for r in rows if (m := ID.match(r["task_id"]))]
    levels = list(PRESETS)
    parts: list[str] = []
    for split in ("train", "test", "ood"):
        in_split = [(r, level) for r, level, s in placed if s == split]
        if not in_split:
            continue
        parts += [f"**{split.upper()} split** ({SPLIT_BUGS[split]})", "",
                  "| agent | " + " | ".join(level.title() for level in levels) + " |", "|---|" + "---|" * len(levels)]  # fmt: skip
        for agent in sorted({r["agent"] for r, _ in in_split}):
            cells = []
            for level in levels:
                runs = [r for r, at in in_split if r["agent"] == agent and at == level]
                if not runs:
                    cells.append("-")
                    continue
                scores = [r["score"] for r in runs]
                std = statistics.stdev(scores) if len(scores) > 1 else 0.0  # one seed: no spread to report
                cells.append(f"{statistics.fmean(scores):.2f} ± {std:.2f} ({100 * sum(r['solved'] for r in runs) / len(runs):.0f}%)")
            parts.append(f"| {agent} | " + " | ".join(cells) + " |")
        parts.append("")
    return "\n".join(parts).rstrip()
