"""The ``catalog`` commands of ``python -m env.authoring`` (docs/catalog.md).

    python -m env.authoring catalog synthesize [--only NAME ...] [--n N] [--work DIR]      # tasks into catalog/tasks.jsonl
    python -m env.authoring catalog build [--only NAME ...] [--out DIR] [--jobs N] [--ray [ADDRESS]]
    python -m env.authoring catalog verify [--sample N] [--out DIR]
    python -m env.authoring catalog stats [--json]

Every command takes ``--manifest DIR`` (default: the repository's ``catalog/``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from env.authoring.catalog.build import build
from env.authoring.catalog.intake import describe, synthesize
from env.authoring.catalog.manifest import MAX_SHARE, read_libraries, read_tasks
from env.authoring.catalog.stats import counts, table
from env.authoring.catalog.verify import cost_line, verify

ROOT = Path(__file__).resolve().parents[3]
MANIFEST = ROOT / "catalog"


def _cache(leaf: str) -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "agentdebugger" / leaf


DEFAULT_OUT = _cache("catalog")
DEFAULT_WORK = _cache("catalog-work")


def cmd_build(args: argparse.Namespace) -> int:
    summary = build(Path(args.manifest), Path(args.out), args.only, args.jobs, args.ray, say=lambda line: print(line, file=sys.stderr))
    for task_id, why in sorted(summary.errors.items()):
        print(f"not built: {task_id}: {why}")
    if summary.removed:
        print(f"removed {len(summary.removed)} folder(s) of tasks the manifest no longer lists: {', '.join(summary.removed)}")
    print(f"{summary.built} task(s) built, {summary.unchanged} unchanged, {len(summary.errors)} not built, of {summary.tasks}; "
          f"index: {summary.index}")  # fmt: skip
    return 1 if summary.errors else 0


def cmd_verify(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if not (out / "catalog.json").is_file():
        print(f"error: {out} holds no built catalog (catalog.json): run `catalog build --out {out}` first", file=sys.stderr)
        return 2
    results = verify(out, args.sample, args.seed, args.runs, args.jobs, args.ray)
    for r in results:
        said = "valid" if r.valid else f"not decided, the machine too busy: {r.busy}" if r.busy else f"INVALID: {r.problems}"
        print(f"{r.id}: {said} (CPU {r.cpu_seconds:.1f} s, wall {r.wall_seconds:.1f} s)")
    invalid = [r.id for r in results if not r.valid and not r.busy]
    busy = [r.id for r in results if r.busy]
    print(f"{len(results) - len(invalid) - len(busy)} of {len(results)} task(s) valid, {len(invalid)} invalid, {len(busy)} not decided "
          f"(machine busy); CPU seconds per task: {cost_line([r.cpu_seconds for r in results])}; wall: {cost_line([r.wall_seconds for r in results])}")  # fmt: skip
    return 1 if invalid or busy else 0


def cmd_stats(args: argparse.Namespace) -> int:
    libraries = read_libraries(Path(args.manifest) / "libraries.json")
    tasks = read_tasks(Path(args.manifest) / "tasks.jsonl")
    print(json.dumps(counts(libraries, tasks), indent=2) if args.json else table(libraries, tasks))
    return 0


def cmd_synthesize(args: argparse.Namespace) -> int:
    report = synthesize(Path(args.manifest), Path(args.work), args.only, args.n, args.runs, args.max_share, args.retry)
    print(describe(report, args.max_share))
    return 1 if report.failed else 0


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    catalog = sub.add_parser("catalog", help="the catalog of real-library tasks: synthesize into the manifest, build, verify, stats")
    commands = catalog.add_subparsers(dest="catalog_command", required=True)
    manifest = argparse.ArgumentParser(add_help=False)
    manifest.add_argument("--manifest", default=str(MANIFEST), help="the folder of libraries.json and tasks.jsonl (default: catalog/)")
    workers = argparse.ArgumentParser(add_help=False)
    workers.add_argument("--jobs", type=int, default=1, help="tasks at once, each in a process of its own (default 1: in this process)")
    workers.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                         help="run the tasks on Ray: a local instance of --jobs CPUs, or the cluster at ADDRESS (needs pip install -e '.[ray]')")  # fmt: skip
    out = argparse.ArgumentParser(add_help=False)
    out.add_argument("--out", default=str(DEFAULT_OUT), help=f"the built catalog's folder (default {DEFAULT_OUT})")

    p = commands.add_parser(
        "build", parents=[manifest, out, workers], help="every task of the manifest as a task folder in --out (resumable)"
    )
    p.add_argument("--only", nargs="+", action="extend", default=[], metavar="NAME", help="only these libraries' tasks")
    p.set_defaults(fn=cmd_build)
    p = commands.add_parser("verify", parents=[out, workers], help="prove built tasks valid again, with the CPU seconds each proof cost")
    p.add_argument("--sample", type=int, help="this many tasks, drawn with --seed (default: every task)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--runs", type=int, default=3, help="runs of each state (default 3, as synthesis)")
    p.set_defaults(fn=cmd_verify)
    p = commands.add_parser("stats", parents=[manifest], help="tasks by source, library, split and difficulty")
    p.add_argument("--json", action="store_true", help="as JSON: tasks, mined, synthesized, libraries, by_split, by_library")
    p.set_defaults(fn=cmd_stats)
    p = commands.add_parser(
        "synthesize", parents=[manifest], help="synthesize tasks from each library and add the valid ones to tasks.jsonl"
    )
    p.add_argument("--only", nargs="+", action="extend", default=[], metavar="NAME", help="only these libraries")
    p.add_argument("--n", type=int, default=20, help="valid tasks wanted per library (default 20)")
    p.add_argument("--work", default=str(DEFAULT_WORK), help=f"the syntheses' folders, one per library, resumable (default {DEFAULT_WORK})")
    p.add_argument("--runs", type=int, default=3, help="runs of each state the validation compares (default 3)")
    p.add_argument(
        "--max-share", type=float, default=MAX_SHARE, help=f"the largest share of the catalog one library may give (default {MAX_SHARE:g})"
    )
    p.add_argument("--retry", action="store_true", help="try again the libraries that failed with their current entry")
    p.set_defaults(fn=cmd_synthesize)
