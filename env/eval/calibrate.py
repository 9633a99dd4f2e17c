"""``python -m env.eval calibrate DIR ...``: the catalog's table per library, with an agent's solve rates, and how far
each task's difficulty estimate agrees with them (docs/catalog.md, "Calibration").

    python -m env.eval run --agent heuristic --split validation --per-library 5 --runs 1 --out runs/cal   # ENV_CATALOG=...
    python -m env.eval calibrate runs/cal [--manifest catalog] [--work ~/.cache/agentdebugger/catalog-work]

Per library: the manifest's mined and synthesized tasks, the share of synthesized candidates that proved valid (the
yield ``catalog synthesize`` records in the manifest; a ``WORK/libraries.jsonl`` given wins, being that run's own), the median validation CPU seconds the manifest records,
and the agent's solve rate over the episodes played (a task's rate is the share of its runs solved). Then the check of
the estimates: the solve rate per difficulty level, which should fall from easy to hard, and the AUC of the
difficulty score for an unsolved task (the chance that an unsolved task scores higher than a solved one; ties count
half): 0.5 means the estimate says nothing about what the agent solves, 1.0 that it orders them perfectly.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from env.authoring.catalog.manifest import CatalogTask, read_libraries, read_tasks

LEVELS = ("easy", "medium", "hard")


class Synthesized(BaseModel):
    """A library's last synthesis in ``WORK/libraries.jsonl`` (only what this table reads of it)."""

    library: str
    status: str
    valid: int = 0
    tried: int = 0


def synthesis_yield(work: Path | None) -> dict[str, tuple[int, int]]:
    """library -> (valid, tried) of its last synthesis that gave tasks; empty without a work folder."""
    found: dict[str, tuple[int, int]] = {}
    path = None if work is None else work / "libraries.jsonl"
    for line in path.read_text(encoding="utf-8").splitlines() if path is not None and path.is_file() else []:
        try:
            record = Synthesized.model_validate_json(line)
        except ValueError:
            continue  # a line a stop cut short
        if record.status == "synthesized" and record.tried:
            found[record.library] = (record.valid, record.tried)
    return found


def solve_rates(results: list[dict[str, Any]], agent: str | None) -> dict[str, float]:
    """task id -> share of its runs solved, over the episodes of ``agent`` (None: the only arm in the results)."""
    arms = sorted({r["agent"] for r in results})
    if agent is None and len(arms) > 1:
        raise ValueError(f"the results hold several arms ({', '.join(arms)}): name one with --agent")
    chosen = agent or (arms[0] if arms else "")
    runs: dict[str, list[bool]] = defaultdict(list)
    for r in results:
        if r["agent"] == chosen:
            runs[r["task_id"]].append(bool(r["solved"]))
    return {task_id: sum(solved) / len(solved) for task_id, solved in runs.items()}


def auc(tasks: list[CatalogTask], rates: dict[str, float]) -> float | None:
    """P(score of an unsolved task > score of a solved one), ties half, each task weighted by its runs' outcome."""
    pairs = total = 0.0
    for hard in tasks:
        for easy in tasks:
            weight = (1 - rates[hard.id]) * rates[easy.id]
            if weight and hard is not easy:  # a task half solved is no evidence against itself
                total += weight
                pairs += weight * (1.0 if hard.difficulty_score > easy.difficulty_score else 0.5 if hard.difficulty_score == easy.difficulty_score else 0.0)
    return pairs / total if total else None


def table(manifest: Path, results: list[dict[str, Any]], work: Path | None = None, agent: str | None = None) -> str:
    entries = read_libraries(manifest / "libraries.json")
    tasks = read_tasks(manifest / "tasks.jsonl")
    rates = solve_rates(results, agent)
    played = [t for t in tasks if t.id in rates]
    yields = {e.name: (e.synthesis.valid, e.synthesis.tried) for e in entries if e.synthesis is not None} | synthesis_yield(work)
    rows = ["| library | split | mined | synthesized | valid share | validation CPU s (median) | solved / played | solve rate | mean difficulty score |",
            "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for entry in entries:
        own = [t for t in tasks if t.library == entry.name]
        if not own:
            continue
        mine = [t for t in played if t.library == entry.name]
        valid, tried = yields.get(entry.name, (0, 0))
        solved = sum(rates[t.id] for t in mine)
        rows.append(
            f"| {entry.name} | {entry.split} | {sum(t.source == 'mined' for t in own)} | {sum(t.source == 'synthesized' for t in own)} | "
            f"{f'{valid / tried:.0%} ({valid}/{tried})' if tried else '-'} | {statistics.median(t.validation.cpu_seconds for t in own):.1f} | "
            f"{f'{solved:g} / {len(mine)}' if mine else '-'} | {f'{solved / len(mine):.0%}' if mine else '-'} | "
            f"{statistics.mean(t.difficulty_score for t in own):.2f} |"
        )
    lines = [*rows, ""]
    if not played:
        return "\n".join([*lines, "no episode of the results plays a task of the manifest: nothing to calibrate against"])
    by_level = {level: [rates[t.id] for t in played if t.difficulty == level] for level in LEVELS}
    lines.append("solve rate by estimated difficulty: " + ", ".join(
        f"{level} {statistics.mean(r):.0%} of {len(r)}" if r else f"{level} - of 0" for level, r in by_level.items()))  # fmt: skip
    found = auc(played, rates)
    lines.append(
        f"AUC of the difficulty score for an unsolved task: {found:.2f} over {len(played)} task(s) (0.5: no information)"
        if found is not None else f"AUC: undefined, the agent solved {'every' if all(rates[t.id] == 1 for t in played) else 'no'} task played"
    )  # fmt: skip
    return "\n".join(lines)
