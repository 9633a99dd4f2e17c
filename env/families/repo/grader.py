"""The grade of a repository episode: a pure function of recorded facts.

    grade_repo(RepoFacts(resolution="FULL", f2p_passed=2, f2p_total=2, changed=True,
                         edited=[...], gold=[...], steps_used=6, max_steps=30))

score = 0.7 x resolution + 0.2 x localisation + 0.1 x efficiency, and exactly 0.0 when the agent
changed no source file or gave up. Localisation pays only when the trusted outcome improved (FULL
or PARTIAL: at least one F2P test passes and no P2P test broke): an edit next to the bug that
fixes nothing earns nothing, however close it is. Efficiency pays only when resolved.

- resolution: 1.0 when FULL (every F2P and P2P passes); 0.5 x (F2P passing / F2P) when PARTIAL
  (some F2P pass, no P2P broke); 0 otherwise.
- localisation: the mean of three overlaps between the agent's patch and the gold patch:
  files (|edited ∩ gold| / |edited ∪ gold|), functions (gold functions the agent edited / gold
  functions), lines (gold hunks within 3 lines of an edited hunk / gold hunks).
- efficiency: 1 - steps used / max steps.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from env.patches import Location

W_RESOLUTION, W_LOCALISATION, W_EFFICIENCY = 0.7, 0.2, 0.1
LINE_SLACK = 3


class RepoFacts(BaseModel):
    resolution: Literal["FULL", "PARTIAL", "NO"]
    f2p_passed: int
    f2p_total: int
    changed: bool = Field(description="The agent's patch changes at least one source (non-test) file")
    gave_up: bool = False
    edited: list[Location] = Field(default_factory=list)
    gold: list[Location] = Field(default_factory=list)
    steps_used: int
    max_steps: int


class RepoGrade(BaseModel):
    score: float
    components: dict[str, float]


def localisation(edited: list[Location], gold: list[Location]) -> dict[str, float]:
    if not gold:
        return {"files": 0.0, "functions": 0.0, "lines": 0.0}
    edited_files, gold_files = {e.file for e in edited}, {g.file for g in gold}
    files = len(edited_files & gold_files) / len(edited_files | gold_files)
    gold_functions = {(g.file, g.function) for g in gold}
    edited_functions = {(e.file, e.function) for e in edited}
    functions = len(gold_functions & edited_functions) / len(gold_functions)
    near = [
        any(e.file == g.file and e.start <= g.end + LINE_SLACK and g.start <= e.end + LINE_SLACK for e in edited) for g in gold
    ]
    lines = sum(near) / len(gold)
    return {"files": round(files, 6), "functions": round(functions, 6), "lines": round(lines, 6)}


def grade_repo(facts: RepoFacts) -> RepoGrade:
    if not facts.changed or facts.gave_up:
        return RepoGrade(score=0.0, components={"resolution": 0.0, "localisation": 0.0, "efficiency": 0.0})
    if facts.resolution == "FULL":
        resolution = 1.0
    elif facts.resolution == "PARTIAL" and facts.f2p_total:
        resolution = 0.5 * facts.f2p_passed / facts.f2p_total
    else:
        resolution = 0.0
    improved = facts.resolution in ("FULL", "PARTIAL")
    loc = localisation(facts.edited, facts.gold) if improved else {"files": 0.0, "functions": 0.0, "lines": 0.0}
    loc_score = sum(loc.values()) / 3
    efficiency = max(0.0, 1 - facts.steps_used / facts.max_steps) if facts.resolution == "FULL" else 0.0
    score = W_RESOLUTION * resolution + W_LOCALISATION * loc_score + W_EFFICIENCY * efficiency
    components = {"resolution": round(resolution, 6), "localisation": round(loc_score, 6), "efficiency": round(efficiency, 6)}
    components.update({f"localisation.{k}": v for k, v in loc.items()})
    return RepoGrade(score=round(min(1.0, max(0.0, score)), 6), components=components)
