"""The grade of a repository episode: a pure function of recorded facts.

    grade_repo(RepoFacts(resolution="FULL", f2p_passed=2, f2p_total=2, changed=True,
                         edited=[...], gold=[...], steps_used=6, max_steps=30))

score = 0.7 x resolution + 0.2 x localisation + 0.1 x efficiency, and exactly 0.0 when the agent
changed no source file or gave up. Localisation is paid times the resolution term that gates it (1 for
FULL, 0.5 x the F2P share for PARTIAL, 0 otherwise): an edit is worth only as much as the trusted outcome
it improved, so one next to the bug that fixes nothing earns nothing, however close it is, and a fix of
one F2P test in three earns a sixth of its overlap. Efficiency pays only when resolved (resolution 1).

- resolution: 1.0 when FULL (every F2P and P2P passes, the held-out ones included); 0.5 x the F2P
  share when PARTIAL (some F2P pass, no P2P broke); 0 otherwise. The F2P share is F2P passing / F2P;
  when the task holds out F2P tests it is min(visible F2P share, held-out F2P share), so fitting the
  visible tests earns nothing by itself: an overfit that fixes no held-out F2P test has resolution 0,
  hence no localisation either, and grades exactly 0.0.
- localisation: the mean of three overlaps between the agent's patch and the gold patch, times resolution
  (so are the three reported overlaps): files (|edited ∩ gold| / |edited ∪ gold|), functions (gold functions
  the agent edited / gold functions), lines (gold hunks within 3 lines of an edited hunk / gold hunks).
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
    f2p_passed: int = Field(description="FAIL_TO_PASS tests passing, held-out ones included")
    f2p_total: int = Field(description="FAIL_TO_PASS tests, held-out ones included")
    held_out_f2p_passed: int = Field(0, description="Of f2p_passed, the held-out ones")
    held_out_f2p_total: int = Field(0, description="Of f2p_total, the held-out ones")
    changed: bool = Field(description="The agent's patch changes at least one source (non-test) file")
    gave_up: bool = False
    edited: list[Location] = Field(default_factory=list)
    gold: list[Location] = Field(default_factory=list)
    steps_used: int
    max_steps: int

    def f2p_share(self) -> float:
        """The F2P share PARTIAL credit pays for: min(visible, held-out) when tests are held out (a test nobody may see
        decides as much as the ones the agent can fit), else passing / total."""
        if not self.f2p_total:
            return 0.0
        if not self.held_out_f2p_total:
            return self.f2p_passed / self.f2p_total
        held = self.held_out_f2p_passed / self.held_out_f2p_total
        visible_total = self.f2p_total - self.held_out_f2p_total
        if not visible_total:  # every F2P test held out (an imported task: the issue text is the evidence)
            return held
        return min((self.f2p_passed - self.held_out_f2p_passed) / visible_total, held)

    def resolution_score(self) -> float:
        if self.resolution == "FULL":
            return 1.0
        return 0.5 * self.f2p_share() if self.resolution == "PARTIAL" else 0.0

    @property
    def improved(self) -> bool:
        """The trusted outcome is better than the bug's, by the resolution term (what the procedural grade's terms wait for)."""
        return self.resolution_score() > 0


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
    resolution = facts.resolution_score()
    # Paid times the resolution that gates it: a partial fix earns its share of the overlap, not all of it.
    loc = {k: v * resolution for k, v in localisation(facts.edited, facts.gold).items()}
    loc_score = sum(loc.values()) / 3
    efficiency = max(0.0, 1 - facts.steps_used / facts.max_steps) if facts.resolution == "FULL" else 0.0
    score = W_RESOLUTION * resolution + W_LOCALISATION * loc_score + W_EFFICIENCY * efficiency
    components = {"resolution": round(resolution, 6), "localisation": round(loc_score, 6), "efficiency": round(efficiency, 6)}
    components.update({f"localisation.{k}": round(v, 6) for k, v in loc.items()})
    return RepoGrade(score=round(min(1.0, max(0.0, score)), 6), components=components)
