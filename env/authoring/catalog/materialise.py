"""One manifest entry made a repository task folder again, from the pinned sdists alone.

    lib = library(entry)                                          # the release, its sdist checked against its sha256
    synthesized(task, lib, sandbox, folder)                        # the mutant whose digest the manifest records
    mined(task, entry, sandbox, folder)                            # the earlier release's code, the later's tests

A synthesized task is written by ``env.authoring.synthesize.write_task``, as synthesis wrote it: the mutant is
regenerated with ``env.authoring.mutate.mutants`` on the recorded line of the recorded file and must have the recorded
digest; its FAIL_TO_PASS tests must still fail on it, every test file still importing (the run that also gives the
problem statement's output when the manifest records none). A mined task is the release pair: repo/ holds the earlier
release's files with the later release's test files (``pair.test_files``) less the held-out tests' code, which
test_patch.diff puts back; gold.patch is the code diff of ``pair.code`` between the two releases; the problem statement
is the manifest's, else written from the visible failing tests' output on the earlier release (a statement from the
changelog is ``env.authoring.mine``'s). Anything that does not regenerate raises MaterialiseError saying what.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from env.authoring import sdist
from env.authoring.baseline import library_task, write_tree
from env.authoring.catalog.manifest import CatalogTask, LibraryEntry
from env.authoring.difficulty import estimate, record
from env.authoring.holdout import strip_tests
from env.authoring.library import Library, load_library
from env.authoring.mechanism import infer_mechanisms
from env.authoring.mine import changed_helpers
from env.authoring.mutate import Mutant, mutants
from env.authoring.statement import problem_statement
from env.authoring.synthesize import write_task
from env.patches import Files, make_patch
from env.project import RepoTask, is_test_path, load_repo_task, source_only
from env.sandbox.runner import Sandbox
from env.verdict.busy import MachineBusy, until_decided
from env.verdict.outcome import RepoVerdict, f2p_ok
from env.verdict.sandboxed import run_sandboxed
from env.verdict.testenv import ensure


class MaterialiseError(RuntimeError):
    """A manifest entry that does not regenerate (the message says which and why)."""


def release_tree(entry: LibraryEntry, release: str) -> Path:
    """The extracted sdist of one release the entry pins, its archive checked against the pinned sha256."""
    digest = entry.sdists.get(release)
    if digest is None:
        raise MaterialiseError(f"{entry.name}: the manifest pins no sdist of release {release} (libraries.json 'sdists')")
    return sdist.fetch(entry.name, release, digest)


def library(entry: LibraryEntry) -> Library:
    """The release synthesized tasks are planted in, as synthesis loads it (``catalog synthesize`` and the build)."""
    release_tree(entry, entry.version)
    return load_library(entry.pin, entry.requirements, entry.tests or None)


def find_mutant(task: CatalogTask, lib: Library) -> Mutant:
    planted = task.mutation
    assert planted is not None  # CatalogTask's validator: a synthesized task has one
    if planted.path not in lib.files:
        raise MaterialiseError(f"{task.id}: {lib.slug} has no file {planted.path}")
    # every mutant of the file, then those starting on the line: an edit is screened by the lines it reaches (a
    # parameter's wrong default by the body lines that read it, not its own line), so a filter on the line would miss it
    found = [m for m in mutants(lib.files[planted.path], planted.path, None, check=False) if m.start == planted.start]
    same = [m for m in found if m.digest == planted.digest]
    if not same:
        near = ", ".join(f"{m.operator} {m.digest}" for m in found[:6]) or "none"
        raise MaterialiseError(f"{task.id}: no mutant of {planted.path} on line {planted.start} has the digest {planted.digest} "
                               f"(env.authoring.mutate gives {len(found)} there: {near}); the release or the operators changed")  # fmt: skip
    return same[0]


def failing_run(
    sandbox: Sandbox, task_id: str, draft: RepoTask, files: Files, tests: Files, selected: list[str], intact: bool
) -> RepoVerdict:
    """``selected`` run sandboxed on ``files``; each must fail (what the problem statement shows), and with ``intact``
    every test file must still import (synthesis keeps no mutant that breaks one)."""
    env = ensure(draft.requirements)
    try:
        verdict = until_decided(lambda: run_sandboxed(sandbox, env, draft, files, tests, selected))
    except MachineBusy as exc:  # nothing decided: the next build tries it again
        raise MaterialiseError(f"{task_id}: the failing tests were not run, the machine too busy (build again): {exc}") from None
    if verdict.error or verdict.timed_out:
        raise MaterialiseError(f"{task_id}: the failing tests did not run: {verdict.error or 'time limit'}")
    if intact and verdict.collect_errors:
        raise MaterialiseError(f"{task_id}: a test file no longer imports on the bug: {'; '.join(sorted(verdict.collect_errors))[:300]}")
    passing = [t for t in selected if f2p_ok(verdict.outcomes.get(t, "ERROR"))]
    if passing:
        raise MaterialiseError(f"{task_id}: FAIL_TO_PASS tests pass on the bug: {', '.join(passing[:4])}")
    return verdict


def synthesized(task: CatalogTask, lib: Library, sandbox: Sandbox, folder: Path) -> RepoTask:
    """The task folder synthesis wrote for this entry (see the module's docstring)."""
    mutant = find_mutant(task, lib)
    scratch = folder.with_name(folder.name + ".library")
    scratch.mkdir(parents=True, exist_ok=True)
    try:
        clean = library_task(lib, scratch, lib.tests)
        screen = failing_run(
            sandbox, task.id, clean, {**lib.files, mutant.path: mutant.source}, clean.visible_tests, task.fail_to_pass, True
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    built = write_task(folder, lib, task.id, mutant, task.fail_to_pass, task.pass_to_pass, screen, task.held_out, task.problem_statement)
    record(folder, estimate(built, mutant.function))
    return load_repo_task(folder)


def mined(task: CatalogTask, entry: LibraryEntry, sandbox: Sandbox, folder: Path) -> RepoTask:
    """A release pair's task folder (see the module's docstring)."""
    pair = task.pair
    assert pair is not None  # CatalogTask's validator: a mined task has one
    old = sdist.tree_files(release_tree(entry, pair.buggy))
    new = sdist.tree_files(release_tree(entry, pair.fixed))
    absent = [p for p in pair.test_files if p not in new] + [p for p in pair.code if p not in old and p not in new]
    if absent:
        raise MaterialiseError(f"{task.id}: not in the releases {pair.buggy} / {pair.fixed}: {', '.join(absent[:4])}")
    base = {p: t for p, t in old.items() if is_test_path(p)}
    graded = {**base, **{p: new[p] for p in [*pair.test_files, *changed_helpers(old, new)]}}  # the data its tests read too
    visible = strip_tests(graded, task.held_out)
    buggy = {**old, **visible}
    before = {p: old[p] for p in pair.code if p in old}
    after = {p: new[p] for p in pair.code if p in new}
    shutil.rmtree(folder, ignore_errors=True)
    write_tree(folder / "repo", buggy)
    (folder / "gold.patch").write_text(make_patch(before, after), encoding="utf-8")
    if visible != graded:
        (folder / "test_patch.diff").write_text(make_patch(visible, graded), encoding="utf-8")
    data = {
        "id": task.id,
        "name": f"{entry.name} {pair.buggy}: a bug fixed in {pair.fixed}",
        "family": "repo",
        "difficulty": task.difficulty,
        "tags": ["mined", entry.name],
        "problem_statement": "",
        "FAIL_TO_PASS": task.fail_to_pass,
        "PASS_TO_PASS": task.pass_to_pass,
        **({"HELD_OUT": task.held_out} if task.held_out else {}),
        **({"sandboxed": task.sandboxed} if task.sandboxed else {}),  # under the split they would fail: as mining placed them
        "environment": {**sdist.files_layout(old), **entry.environment},
        "requirements": entry.requirements if task.requirements is None else task.requirements,  # an older release's may differ
        "max_steps": 50,
        "instance_id": task.id,
        "repo": entry.name,
        "version": pair.buggy,
        "mechanism": infer_mechanisms(source_only(before), source_only(after)),
    }
    (folder / "task.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    draft = load_repo_task(folder)
    shown = draft.visible_fail_to_pass
    if shown:
        verdict = failing_run(sandbox, task.id, draft, draft.files, draft.visible_tests, shown, False)
        data["problem_statement"] = task.problem_statement or problem_statement(entry.name, shown, verdict)
    elif task.problem_statement:
        data["problem_statement"] = task.problem_statement
    else:  # every failing test held out: nothing of theirs may show
        data["problem_statement"] = (f"Tests of {entry.name} {pair.buggy} that are not shown here fail: the release has a bug its next "
                                     "release fixed. Find the cause and fix the code (not the tests).")  # fmt: skip
    data["suspect"] = [where.model_dump() for where in draft.gold_lines]
    (folder / "task.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return load_repo_task(folder)
