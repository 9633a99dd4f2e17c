"""Task tools on the command line.

    python -m env.authoring validate [PATH ...] [--runs 10] [--family F]   # prove tasks valid (default: every built-in task)
    python -m env.authoring import-swebench INSTANCES (--repo PATH_OR_DIR | --pypi NAME==VERSION) --out TASKS_DIR [--smith] [--env K=V ...] [--no-place]
    python -m env.authoring evaluate PREDICTIONS.jsonl [PATH ...] # grade SWE-bench-format predictions
    python -m env.authoring prepare [PATH ...]                    # build the tasks' test environments ahead (needs PyPI)
    python -m env.authoring place PATH ... [--dry-run]            # fill task.json's "sandboxed": the tests the split cannot run
    python -m env.authoring synthesize NAME==VERSION|PATH --n N --out DIR [--requires PIN ...] [--tests PATH ...]
    python -m env.authoring catalog synthesize|build|verify|stats ...   # the catalog of real-library tasks (docs/catalog.md)
    python -m env.authoring mine NAME [--releases N | --versions V ...] [--out DIR] [--requires PIN ...] [--tests PATH ...]

Authoring order for a repository task: import (which places the tests itself, on the gold tree, never at grading time,
and drops the PASS_TO_PASS tests the gold does not pass), validate. ``place`` re-places a task after its tests change.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import time
from pathlib import Path

from env.authoring.catalog.cli import MANIFEST
from env.authoring.catalog.cli import add_parser as add_catalog_parser
from env.authoring.catalog.manifest import LibraryEntry, read_libraries
from env.authoring.importer import ImportError_, Instance, import_instance, read_instances
from env.authoring.library import SynthesisError, load_library
from env.authoring.mine import RELEASES, MineError, Miner, last_releases
from env.authoring.placement import Placement, place
from env.authoring.predictions import evaluate, read_predictions
from env.authoring.sdist import SdistError
from env.authoring.settle import report as settle_report
from env.authoring.settle import settle
from env.authoring.synthesize import Synthesis
from env.authoring.validate import table, validate_task
from env.families.catalog import TaskCatalog
from env.families.registry import FAMILIES, TaskLoadError, load_task, task_folders
from env.project import RepoTask
from env.runtime import Runtime
from env.sandbox.isolation import probe_isolation
from env.sandbox.lifetime import command
from env.sandbox.limits import Limits
from env.sandbox.runner import Sandbox
from env.verdict.busy import MachineBusy
from env.verdict.testenv import TestEnvError, cache_root, ensure, spec


def _runtime(catalog: TaskCatalog) -> Runtime:
    """Every command's runs decide something offline (a task's validity, a prediction's grade), so their limits count
    CPU time (``Limits.for_validity``): the same answer idle and at full load."""
    return Runtime(catalog, Sandbox(Limits.from_env().for_validity(), probe_isolation()), workers=4)


def _catalog(paths: list[str], with_builtin: bool) -> TaskCatalog:
    tasks = TaskCatalog.builtin().all() if with_builtin else []
    for path in paths:
        tasks += [load_task(folder) for folder in task_folders(Path(path))]
    return TaskCatalog(tasks)


def cmd_validate(args: argparse.Namespace) -> int:
    catalog = _catalog(args.paths, with_builtin=not args.paths)
    runtime = _runtime(catalog)
    reports = []
    tasks = [t for t in catalog.all() if args.family is None or t.family == args.family]
    if not tasks:
        print(f"no task to validate: no served task is of the family {args.family!r} (families: {', '.join(FAMILIES)})", file=sys.stderr)
        return 2
    started = time.monotonic()
    for task in tasks:
        report = validate_task(runtime, task, runs=args.runs)
        reports.append(report)
        said = "not decided (the machine was too busy)" if report.busy else "valid" if report.ok else "INVALID"
        print(f"{task.id}: {said} ({report.seconds:.1f} s)", file=sys.stderr, flush=True)
    print(table(reports))
    invalid = [r.task_id for r in reports if not r.ok and not r.busy]
    busy = [r.task_id for r in reports if r.busy]
    if busy:
        print(f"\n{len(busy)} task(s) not decided, the machine too busy to run them (validate them again): {', '.join(busy)}")
    if invalid:
        print(f"\n{len(invalid)} invalid task(s): {', '.join(invalid)}")
    if invalid or busy:
        return 1
    print(f"\nall {len(reports)} task(s) valid in {time.monotonic() - started:.0f} s")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    environment = dict(item.split("=", 1) for item in args.env)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    failures = 0
    sandbox: Sandbox | None = None
    for row in read_instances(Path(args.instances)):
        name = str(row.get("instance_id", "?"))
        try:
            instance = Instance.model_validate(row)
            folder = import_instance(instance, Path(args.repo) if args.repo else None, out, smith=args.smith, environment=environment,
                                     pypi=args.pypi, requirements=args.requires)  # fmt: skip
        except (ImportError_, SdistError, ValueError) as exc:
            failures += 1
            print(f"skipped {name}: {exc}")
            continue
        print(f"imported {instance.instance_id} -> {folder}")
        if args.no_place:
            continue
        sandbox = sandbox or Sandbox(Limits.from_env().for_validity(), probe_isolation())
        settled = settle(sandbox, folder)
        print("\n".join(settle_report(settled)))
        if settled.busy:
            failures += 1
            print(f"not settled {instance.instance_id}: {settled.busy} (import it again)")
        elif settled.problems:
            failures += 1
            if any(p.startswith("FAIL_TO_PASS") for p in settled.problems):  # it can never be valid: not left to be served
                shutil.rmtree(folder)
            print(f"invalid {instance.instance_id}: {'; '.join(settled.problems)}" + (" (folder removed)" if not folder.exists() else ""))
    print(f"next: python -m env.authoring validate {out}")
    return 1 if failures else 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    runtime = _runtime(_catalog(args.paths, with_builtin=True))
    results = [evaluate(runtime, p) for p in read_predictions(Path(args.predictions))]
    for result in results:
        print(json.dumps(result.model_dump()))
    resolved = sum(r.resolution == "FULL" for r in results)
    print(f"resolved {resolved} of {len(results)}", file=sys.stderr)
    return 0


def repositories(catalog: TaskCatalog) -> list[RepoTask]:
    """The listed tasks that are repositories (``Family.repository``): what has test environments to prepare."""
    found = (FAMILIES[t.family].repository(t) for t in catalog.all())
    return [t for t in found if t is not None]


def cmd_prepare(args: argparse.Namespace) -> int:
    catalog = _catalog(args.paths, with_builtin=not args.paths)
    wanted = {spec(t.requirements).key: t.requirements for t in repositories(catalog)}
    failures = 0
    for requirements in wanted.values():
        try:
            env = ensure(requirements, build=True)
            print(f"ready {env.root} ({', '.join(env.requirements) or 'pytest only'})")
        except TestEnvError as exc:
            failures += 1
            print(f"error: {exc}", file=sys.stderr)
    print(f"{len(wanted) - failures} of {len(wanted)} test environment(s) ready under {cache_root()}")
    return 1 if failures else 0


def write_sandboxed(folder: Path, sandboxed: list[str]) -> bool:
    """Set task.json's "sandboxed", every other key and the key order kept; False when nothing changes."""
    path = folder / "task.json"
    text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    if data.get("sandboxed", []) == sandboxed:
        return False
    data["sandboxed"] = sandboxed  # an existing key keeps its place, a new one goes last
    indented = next((line for line in text.splitlines()[1:] if line.strip()), "")
    indent = len(indented) - len(indented.lstrip(" ")) or 2
    path.write_text(json.dumps(data, indent=indent, ensure_ascii=False) + "\n", encoding="utf-8")
    return True


def report_placement(task: RepoTask, placement: Placement, listed: list[str]) -> str:
    """What ``place`` decided for one task, for its author."""
    trusted = task.model_copy(update={"sandboxed": listed}).trusted
    lines = [
        f"{task.id}: {len(placement.split)} test(s) run split, {len(placement.sandboxed)} sandboxed, {len(placement.failing)} failing "
        f"either way; the task is {'trusted' if trusted else 'UNTRUSTED (a FAIL_TO_PASS test runs sandboxed)'}"
    ]
    lines += [f"  sandboxed: {t} (the split: {placement.split_reasons[t]})" for t in placement.sandboxed]
    lines += [f"  back under the split: {t} (it passes there now)" for t in task.sandboxed if t in placement.split]
    lines += [f"  fails either way: {t}: {why}" for t, why in placement.failing.items()]
    return "\n".join(lines)


def cmd_place(args: argparse.Namespace) -> int:
    catalog = _catalog(args.paths, with_builtin=False)
    runtime = _runtime(catalog)
    if not runtime.sandbox.isolation.can_execute:
        print(f"error: this host cannot run the verdict: {runtime.sandbox.isolation.reason}", file=sys.stderr)
        return 2
    failing = 0
    for listed_task in catalog.all():
        task = FAMILIES[listed_task.family].repository(listed_task)
        if task is None:
            print(f"{listed_task.id}: not a repository task, every test of it runs where its family runs it")
            continue
        try:
            placement = place(runtime.sandbox, task)
        except MachineBusy as exc:
            failing += 1
            print(f"{task.id}: not placed, task.json unchanged: {exc}")
            continue
        listed = placement.listed(task.sandboxed)
        print(report_placement(task, placement, listed))
        failing += bool(placement.failing)
        if args.dry_run:
            print(f"  dry run: task.json not written (it would list {len(listed)} sandboxed test(s))")
        elif write_sandboxed(task.folder, listed):
            print(f"  wrote {len(listed)} sandboxed test(s) to {task.folder / 'task.json'}")
        else:
            print("  task.json unchanged")
    return 1 if failing else 0


def cmd_synthesize(args: argparse.Namespace) -> int:
    try:
        lib = load_library(args.library, args.requires, args.tests)
        synthesis = Synthesis(lib, Path(args.out), runs=args.runs, seed=args.seed, log=lambda line: print(line, file=sys.stderr, flush=True))
        summary = synthesis.run(args.n)
    except (SynthesisError, SdistError, TestEnvError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(summary.model_dump_json(indent=2))
    print(f"{summary.valid} valid task(s) of {summary.tried} tried (yield {summary.yield_:.0%}) in {Path(args.out)}; "
          f"instances: {Path(args.out) / 'instances.jsonl'}")  # fmt: skip
    return 0 if summary.valid >= args.n else 1


def recorded_library(name: str, manifest: Path | None = None) -> LibraryEntry | None:
    """The manifest's entry (the committed one by default) for the PyPI project ``name`` (names compared as PyPI
    does), if it lists one."""
    canonical = re.sub(r"[-_.]+", "-", name).lower()
    path = (manifest or MANIFEST) / "libraries.json"
    entries = read_libraries(path) if path.is_file() else []
    return next((e for e in entries if re.sub(r"[-_.]+", "-", e.name).lower() == canonical), None)


def cmd_mine(args: argparse.Namespace) -> int:
    requires, tests = args.requires, args.tests
    entry = recorded_library(args.name) if not requires and tests is None else None
    if entry is not None and (entry.requirements or entry.tests):  # what its tests need, found once already: not guessed again
        requires, tests = entry.requirements, entry.tests or None
        paths = " ".join(tests or []) or "pytest's naming"
        print(f"{args.name}: the tests' requirements ({' '.join(requires) or 'none'}) and paths ({paths}) as catalog/libraries.json "
              "records them; --requires or --tests choose others", file=sys.stderr)  # fmt: skip
    try:
        versions = args.versions or last_releases(args.name, args.releases)
        miner = Miner(args.name, Path(args.out), requires, tests, runs=args.runs, log=lambda line: print(line, file=sys.stderr, flush=True))
        summary = miner.run(versions)
    except (MineError, SdistError, TestEnvError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(summary.model_dump_json(indent=2))
    print(f"{len(summary.tasks)} valid mined task(s) from {summary.pairs} release pair(s) of {args.name} in {Path(args.out)}; "
          f"the catalog's lines: {Path(args.out) / 'mined.jsonl'}")  # fmt: skip
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m env.authoring", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("validate", help="prove tasks valid: buggy fails F2P and passes P2P, gold passes all, stable, no vacuous test")
    p.add_argument("paths", nargs="*", help="task folders or directories of them (default: every built-in task)")
    p.add_argument("--runs", type=int, default=10, help="runs of each state (default 10)")
    p.add_argument("--family", help="only this family's tasks (the race family's 228: --family race --runs 20)")
    p.set_defaults(fn=cmd_validate)
    p = sub.add_parser("import-swebench", help="turn SWE-bench / SWE-smith instances into task folders")
    p.add_argument("instances", help="JSON or JSONL file of instances")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--repo", help="a git clone, or a directory of clones named by instance_id")
    source.add_argument("--pypi", metavar="NAME[==VERSION]", help="build the repository from this release's sdist (no clone needed)")
    p.add_argument("--requires", action="append", default=[], metavar="PIN", help="what the tests import besides pytest (exact pins)")
    p.add_argument("--out", required=True, help="directory to write task folders into")
    p.add_argument("--smith", action="store_true", help="SWE-smith instances: the patch introduces the bug")
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="environment the tests need, e.g. PYTHONPATH=src")
    p.add_argument("--no-place", action="store_true", help="write the task folders only: no placement, no PASS_TO_PASS dropped (run place later)")
    p.set_defaults(fn=cmd_import)
    p = sub.add_parser("evaluate", help="grade SWE-bench-format predictions (instance_id, model_name_or_path, model_patch)")
    p.add_argument("predictions")
    p.add_argument("paths", nargs="*", help="extra task folders (the built-in tasks are always included)")
    p.set_defaults(fn=cmd_evaluate)
    p = sub.add_parser("prepare", help="build the test environments repository runs need (pytest and each task's requirements)")
    p.add_argument("paths", nargs="*", help="task folders or directories of them (default: every built-in task)")
    p.set_defaults(fn=cmd_prepare)
    p = sub.add_parser("place", help="run each task's tests on its gold tree under the split, then sandboxed those it cannot run there; "
                                     "write those that pass sandboxed to task.json's \"sandboxed\"")  # fmt: skip
    p.add_argument("paths", nargs="+", help="task folders or directories of them")
    p.add_argument("--dry-run", action="store_true", help="print the placement, write nothing")
    p.set_defaults(fn=cmd_place)
    p = sub.add_parser("synthesize", help="plant bugs in a real library (AST mutations of covered code) and keep those proven valid")
    p.add_argument("library", help="NAME==VERSION (its sdist from PyPI) or a project folder")
    p.add_argument("--n", type=int, default=10, help="valid tasks wanted (default 10)")
    p.add_argument("--out", required=True, help="directory for the task folders, instances.jsonl and the resumable state")
    p.add_argument("--requires", action="append", default=[], metavar="PIN", help="what the tests import besides pytest (exact pins)")
    p.add_argument("--tests", action="append", default=None, metavar="PATH", help="test files or folders (default: pytest's naming)")
    p.add_argument("--runs", type=int, default=3, help="runs of each state the validator compares (default 3)")
    p.add_argument("--seed", type=int, default=0, help="the order candidates are tried in")
    p.set_defaults(fn=cmd_synthesize)
    add_catalog_parser(sub)  # catalog synthesize|build|verify|stats (env.authoring.catalog.cli)
    p = sub.add_parser("mine", help="real bugs from a library's release pairs: the later release's tests on the earlier release's code")
    p.add_argument("name", help="the PyPI project")
    p.add_argument("--releases", type=int, default=RELEASES, help=f"mine its last N final releases on PyPI (default {RELEASES}: {RELEASES - 1} pairs)")
    p.add_argument("--versions", nargs="+", metavar="V", help="these releases instead, oldest first (each consecutive two a pair)")
    p.add_argument("--out", default="mined", help="directory for the task folders, mined.jsonl and the resumable ledger (default ./mined)")
    p.add_argument("--requires", action="append", default=[], metavar="PIN", help="what the tests import besides pytest (exact pins)")
    p.add_argument("--tests", action="append", default=None, metavar="PATH", help="test files or folders (default: pytest's naming)")
    p.add_argument("--runs", type=int, default=3, help="runs of each state the validator compares (default 3)")
    p.set_defaults(fn=cmd_mine)
    args = parser.parse_args(argv)
    try:
        return args.fn(args)
    except TaskLoadError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    # Nothing this command starts outlives it, and what killed runs left on the scratch disk goes (env.sandbox.lifetime).
    sys.exit(command(main))
