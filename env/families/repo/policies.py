"""A repository task's scripted plays: the gold fix, its overfit, the smoke trajectory and the degenerate policies,
as actions on the file tools. The procedural family plays its tasks the same way with ``partial_view`` (only an
opened file can be edited there, and its grade rewards exploring and testing before an edit).

    oracle_actions(task)                         # each file the gold patch changes rewritten, then submit
    oracle_actions(task, read_first=[...])       # partial view: run the tests, open these files, then rewrite
    repo_policies(task, partial_view=False)      # {name: actions}: each grades exactly 0.0
"""

from __future__ import annotations

from env.families.base import Action
from env.families.policies import STUFFED, gold_only_lines
from env.patches import Files, apply_patch
from env.project import RepoTask, source_only


def oracle_actions(task: RepoTask, read_first: list[str] | None = None) -> list[Action]:
    return rewrite_actions(task, task.gold_files, read_first)


def overfit_actions(task: RepoTask, read_first: list[str] | None = None) -> list[Action] | None:
    """The task's ``overfit.patch`` played (a fix that fits only the visible tests), or None if it has none."""
    if not task.overfit_patch:
        return None
    return rewrite_actions(task, apply_patch(task.files, task.overfit_patch), read_first)


def rewrite_actions(task: RepoTask, target: Files, read_first: list[str] | None = None) -> list[Action]:
    """Actions that turn the task's source files into ``target``'s with the file tools, then ``submit``.
    ``read_first``: under partial view (only an opened file can be edited), the files to open before editing;
    None when every file is visible."""
    before, after = source_only(task.files), source_only(target)
    actions: list[Action] = []
    opened: set[str] = set()
    partial_view = read_first is not None
    if read_first is not None:  # as a careful debugger would: test first, read the code around the fault
        opened = set(read_first)
        actions += [{"action_type": "run_tests"}] + [{"action_type": "open_file", "path": p} for p in sorted(opened)]
    for path in sorted(after):
        if path not in before:
            actions.append({"action_type": "create_file", "path": path, "content": after[path]})
        elif after[path] != before[path]:
            lines = before[path].count("\n") + (0 if before[path].endswith("\n") or not before[path] else 1)
            if partial_view and path not in opened:
                opened.add(path)
                actions.append({"action_type": "open_file", "path": path})
            actions.append({"action_type": "edit", "path": path, "start_line": 1, "end_line": lines, "new_text": after[path]})
    return actions + [{"action_type": "submit"}]


def a_visible_test(task: RepoTask) -> str:
    """A test the agent can see and the debugger can start on."""
    return next(t for t in task.visible_fail_to_pass + task.visible_pass_to_pass if t.split("::")[0] in task.visible_tests)


def _open(path: str, partial_view: bool) -> list[Action]:
    return [{"action_type": "open_file", "path": path}] if partial_view else []


def repo_policies(task: RepoTask, partial_view: bool) -> dict[str, list[Action]]:
    """Giving up, submitting unchanged, an edit next to the bug (with a stuffed claim, with test-run spam) and
    alternating a breaking edit with its undoing."""
    gold = task.gold_lines[0]
    path, line = gold.file, gold.start
    source = source_only(task.files)[path]
    indent = source.splitlines()[line - 1][: len(source.splitlines()[line - 1]) - len(source.splitlines()[line - 1].lstrip())]
    comment = {"action_type": "edit", "path": path, "start_line": line, "end_line": line - 1, "new_text": f"{indent}# the bug is around here\n"}
    uncomment = {"action_type": "edit", "path": path, "start_line": line, "end_line": line, "new_text": ""}
    breaking = {"action_type": "edit", "path": path, "start_line": line, "end_line": line - 1, "new_text": f"{indent}raise RuntimeError('broken')\n"}
    claim = {"suspect": gold.function or f"{path}:{line}", "mechanism": (task.mechanism or ["wrong_value"])[0], "hypothesis": STUFFED}
    run = {"action_type": "run_tests"}
    submit = {"action_type": "submit"}
    spam = max(1, min(6, task.max_steps - 4))
    opened = _open(path, partial_view)
    return {
        "give_up": [{"action_type": "give_up"}],
        "submit_unchanged": [submit],
        "edit_next_to_bug": opened + [comment, run, submit],
        "stuffed_claim": opened + [comment, {**submit, **claim}],
        "run_tests_spam": opened + [comment] + [run] * spam + [submit],
        "alternating": opened + [breaking, run, uncomment, run, breaking, run, uncomment, run, submit],
    }


def read_only_actions(task: RepoTask, opener: str) -> list[Action]:
    """Run the tests and open every file the gold patch changes (with ``opener``: the family's file tool)."""
    changed = sorted(p for p, text in task.gold_files.items() if text != task.files.get(p) and p in task.files)
    return [{"action_type": "run_tests"}, *({"action_type": opener, "path": p} for p in changed)]


def solution_lines(task: RepoTask) -> list[str]:
    """The lines the gold patch adds that none of the task's files has."""
    fixed = [line for path, text in task.gold_files.items() if text != task.files.get(path) for line in text.splitlines()]
    return gold_only_lines("\n".join(task.files.values()), fixed)
