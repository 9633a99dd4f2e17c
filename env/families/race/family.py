"""The race family: generated thread-safe classes with one concurrency bug each (ten patterns over eight domains), played
as a classic task is (submit the whole corrected module; the bash and pdb profiles add a workbench), judged by the
classic verdict with the class's own concurrency check (env.families.race.check).

    RACE.listed()                                    # 12 seeds of every (pattern, domain): 228 ids and their splits
    RACE.generate("race-missed-signal-job-queue-40")   # any seed of a combination, made on request

The Task API splits: train, validation and test by seed; the ``ood`` combinations (pattern x domain pairs no other
split has) are held out with test, as the procedural family's ood split is (a trainer that chose checkpoints on them
would no longer measure generalisation); each entry's ``race_split`` says which.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from statistics import mean
from typing import Any, ClassVar

from env.contract import Split
from env.families.base import TASKS_DIR, ResultRow
from env.families.classic.family import ClassicFamily
from env.families.classic.task import TaskSpec
from env.families.procedural.salt import ProceduralSalt
from env.families.race import validation as race_validation
from env.families.race.generator import GeneratorError
from env.families.race.task import LISTED, RaceSplit, RaceTaskSpec, listed_ids, race_task
from env.families.race.templates import PATTERNS
from env.families.validation import TaskValidation
from env.runtime import Runtime

SERVED_SPLIT: dict[RaceSplit, Split] = {"train": "train", "validation": "validation", "test": "test", "ood": "test"}


class RaceFamily(ClassicFamily):
    name = "race"
    description = "A generated thread-shared class with one concurrency bug; the agent submits the whole corrected module"
    generated_ids: ClassVar[str] = f"race-<pattern>-<domain>-<seed> (patterns: {', '.join(p.replace('_', '-') for p in PATTERNS)}; seeds 0-{LISTED - 1} listed)"

    def __init__(self) -> None:
        self._salt: ProceduralSalt | None = None

    @property
    def salt(self) -> ProceduralSalt:
        if self._salt is None:
            self._salt = ProceduralSalt.from_env()  # read once, when a task is first made
        return self._salt

    def load(self, folder: Path, data: dict[str, Any]) -> TaskSpec:
        raise ValueError("race tasks are generated from their id, never loaded from a folder")

    def builtin(self) -> list[TaskSpec]:
        return []  # every race task is listed by id and made when first asked for (listed)

    def listed(self) -> list[tuple[str, Split]]:
        return [(task_id, SERVED_SPLIT[split]) for task_id, split in listed_ids()]

    def spot_checked(self, ids: list[str]) -> list[str]:
        """One seed of each (pattern, domain), the lowest listed: seeds of a combination differ only in their names."""
        seen: set[tuple[str, str]] = set()
        kept = []
        for task_id in ids:
            task = self.generate(task_id)
            if isinstance(task, RaceTaskSpec) and (task.pattern, task.domain) not in seen:
                seen.add((task.pattern, task.domain))
                kept.append(task_id)
        return kept

    def split(self, task: TaskSpec) -> Split:
        return SERVED_SPLIT[task.race_split] if isinstance(task, RaceTaskSpec) else "test"

    def generate(self, task_id: str) -> TaskSpec | None:
        try:
            return race_task(task_id, self.salt)
        except GeneratorError:
            return None  # a seed past the combination's namings: no such task

    def validate(self, runtime: Runtime, task: TaskSpec, runs: int, tasks_dir: Path = TASKS_DIR) -> TaskValidation:
        if not isinstance(task, RaceTaskSpec):
            raise ValueError(f"{task.id} is not a race task")
        return race_validation.validate(runtime, task, runs)

    def report_table(self, rows: list[ResultRow]) -> str:
        """Per pattern and split: episodes, mean grade and solve rate."""
        groups: dict[tuple[str, str], list[ResultRow]] = defaultdict(list)
        for row in rows:
            task = self.generate(str(row.get("task_id", "")))
            if task is not None and isinstance(task, RaceTaskSpec):
                groups[(task.pattern, task.race_split)].append(row)
        if not groups:
            return ""
        lines = ["| pattern | split | episodes | mean grade | solved |", "|---|---|---|---|---|"]
        for (pattern, split), group in sorted(groups.items()):
            solved = sum(1 for row in group if row.get("solved"))
            lines.append(f"| {pattern} | {split} | {len(group)} | {mean(float(row.get('score') or 0.0) for row in group):.2f} | {solved}/{len(group)} |")
        return "\n".join(lines)


RACE = RaceFamily()
