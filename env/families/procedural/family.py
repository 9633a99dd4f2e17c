"""The procedural family: generated multi-module services under controlled noise and drift (DebugOps-RX), seen
through partial observability (a file's text only once opened) and graded on the trajectory too.

    PROCEDURAL.builtin()                          # one listed task per difficulty (proc-<level>-test-0)
    PROCEDURAL.listed()                           # and one per difficulty of train and ood, generated when first asked for
    PROCEDURAL.generate("proc-hard-ood-7")        # any other id is generated on request
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from env.contract import Split
from env.families.base import TASKS_DIR, Action, Family, ResultRow
from env.families.policies import HypothesisKind
from env.families.procedural.episode import ProceduralEpisode
from env.families.procedural.grader import grade_procedural
from env.families.procedural.model import PRESETS, SPLIT_SIZE, SPLITS
from env.families.procedural.split_table import split_table
from env.families.procedural.task import LISTED, ProceduralTask, is_procedural_id, load_procedural_task, procedural_id, procedural_task
from env.families.repo import attacks, policies, validation
from env.families.validation import TaskValidation
from env.interface import Interface, Profile, profile_named
from env.project import RepoTask
from env.runtime import Runtime

# One interface: the DebugOps-RX actions plus the file tools, each made partially observable
# (a file's text is shown only once the agent has opened it).
PROFILE = Profile(
    name="default",
    description="open_file, edit_file, run_tests and analyze_logs, plus the file tools; only opened files are visible",
    tools=("open_file", "edit_file", "run_tests", "analyze_logs", "list_dir", "view_file", "search", "edit", "replace_text",
           "create_file", "diff", "submit", "give_up"),
    names={"view_file": "open_file", "edit": "edit_file", "search": "search_opened", "replace_text": "replace_in_file",
           "run_tests": "run_tests_short", "submit": "submit_short"},
)  # fmt: skip
# The interface ablation's trace arm: the same partial view, plus trace_report. A report holds what a run did (calls,
# arguments, return values, changes), named by path and line as a traceback is; a file's text still shows only once
# opened. A shell or a debugger would show any file's text, so those profiles stay refused.
TRACE_PROFILE = Profile(
    name="trace",
    description=PROFILE.description + "; and trace_report, a test's call trace",
    tools=(*PROFILE.tools[:-2], "trace_report", *PROFILE.tools[-2:]),
    names=PROFILE.names,
)
SERVED = {p.name: p for p in (PROFILE, TRACE_PROFILE)}
# The Task API split an id serves in, by the split its id names. ood draws bug types no train id draws: it measures
# generalisation, so it is held out with test (a trainer that chose checkpoints on it would no longer measure that).
SERVED_SPLIT: dict[str, Split] = {"train": "train", "test": "test", "ood": "test"}
assert set(SERVED_SPLIT) == set(SPLITS), "every procedural split serves in one Task API split"


class ProceduralFamily(Family[ProceduralTask]):
    name = "procedural"
    description = "A generated service with noisy, drifting logs; only opened files are visible"
    grader = staticmethod(grade_procedural)
    partial_view: ClassVar[bool] = True
    generated_ids: ClassVar[str] = f"proc-<{'|'.join(PRESETS)}>-<{'|'.join(SPLITS)}>-<index 0-{SPLIT_SIZE - 1}>"

    def load(self, folder: Path, data: dict[str, Any]) -> ProceduralTask:
        task = load_procedural_task(folder, data)
        task.check_folder()  # a written-out task folder is input like any other
        return task

    def builtin(self) -> list[ProceduralTask]:
        return [procedural_task(task_id) for task_id in LISTED]

    def listed(self) -> list[tuple[str, Split]]:
        """Index 0 of every difficulty of the splits ``builtin`` does not list (train, then ood): generated when first
        asked for, so a server's start pays only for the test tasks it always built."""
        return [(f"proc-{level}-{split}-0", SERVED_SPLIT[split]) for split in SPLITS if split != "test" for level in PRESETS]

    def split(self, task: ProceduralTask) -> Split:
        return SERVED_SPLIT.get(task.split or "test", "test")  # a written-out folder naming no split the server knows: test

    def generate(self, task_id: str) -> ProceduralTask | None:
        return procedural_task(task_id) if is_procedural_id(task_id) else None

    def generated_id(self, *parts: str | int) -> str:
        """``generated_id(level, split, index)``: ``proc-<level>-<split>-<index>``, refused when no such task exists."""
        level, split, index = parts
        return procedural_id(str(level), str(split), int(index))

    def interface(self, profile: str | None = None, edit_gate: bool | None = None, aliases: object = None) -> Interface:
        name = profile_named(profile).name
        if name not in SERVED:
            raise ValueError(f"procedural tasks have two interfaces (default, trace); {name!r} would show files the agent has not opened")
        return Interface.build(SERVED[name], SERVED[name].tools, edit_gate, aliases)

    def episode(self, runtime: Runtime, task: ProceduralTask, seed: int, episode_id: str, interface: Interface | None = None) -> ProceduralEpisode:
        return ProceduralEpisode(runtime, task, seed, episode_id, interface or self.interface())

    # A generated service is a repository: it is played, validated and exported as one (env.families.repo).

    def oracle_actions(self, task: ProceduralTask) -> list[Action]:
        """Run the tests and open the fault's file and its neighbours first, then rewrite what the gold patch changes."""
        return policies.oracle_actions(task, read_first=task.relevant_files())

    def overfit_actions(self, task: ProceduralTask) -> list[Action] | None:
        return policies.overfit_actions(task, read_first=task.relevant_files())

    def overfit_ceiling(self, oracle_grade: float) -> float:
        # Generation proves the lookup table of the visible calls fails every held-out FAIL_TO_PASS test, so the min
        # rule leaves it no credit and the all-or-nothing gate no other term: it earns nothing (issue 47).
        return 0.0

    def degenerate_policies(self, task: ProceduralTask, hypothesis: HypothesisKind = "wrong") -> dict[str, list[Action]]:
        return policies.repo_policies(task, self.partial_view)

    def smoke_actions(self, task: ProceduralTask) -> list[Action]:
        # the logs drift with the seed: same seed, same rewards
        return [{"action_type": "analyze_logs"}, {"action_type": "run_tests"}, {"action_type": "analyze_logs"}] + self.oracle_actions(task)

    def read_only_actions(self, task: ProceduralTask) -> list[Action]:
        return policies.read_only_actions(task, "open_file")

    def seeded_actions(self, task: ProceduralTask) -> list[Action]:
        return [{"action_type": "analyze_logs"}]  # the logs drift with the seed

    def solution_lines(self, task: ProceduralTask) -> list[str]:
        return policies.solution_lines(task)

    def attack_actions(self, task: ProceduralTask) -> dict[str, list[Action]]:
        return attacks.attack_actions(task)

    def a_visible_test(self, task: ProceduralTask) -> str:
        return policies.a_visible_test(task)

    def validate(self, runtime: Runtime, task: ProceduralTask, runs: int, tasks_dir: Path = TASKS_DIR) -> TaskValidation:
        return validation.validate(runtime, task, runs, tasks_dir)

    def repository(self, task: ProceduralTask) -> RepoTask | None:
        return task

    def report_table(self, rows: list[ResultRow]) -> str:
        """The DebugOps-RX table: per split, mean grade ± std over seeds per difficulty."""
        return split_table(rows)


PROCEDURAL = ProceduralFamily()
