"""The evaluation harness on the command line.

    python -m env.eval run --agent NAME [--profile PROFILE] [--tasks ID ...] [--runs N] --out DIR [--url URL] [--ray [ADDRESS]]
    python -m env.eval procedural --out DIR [--agents random heuristic oracle] [--seeds 5] [--splits train ood]
    python -m env.eval ablate --agent NAME --profiles bash,pdb[,...] [--tasks ID ...] [--runs N] --out DIR [--url URL] [--ray [ADDRESS]] [--json]
    python -m env.eval report DIR [DIR ...] [--out REPORT_DIR]
    python -m env.eval predictions DIR --agent NAME [--run 0] [--model NAME] > preds.jsonl   # SWE-bench format
    python -m env.eval difficulty TASK_DIR ... [--out DIR]     # play the heuristic agent on repository tasks, record difficulty
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, get_args

from env.agents import AGENTS
from env.contract import SPLITS, Source
from env.interface import PROFILES
from env.sandbox.lifetime import command

if TYPE_CHECKING:
    from env.eval.drivers import Driver
    from env.eval.run import EpisodePool, Selection


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the docstring's layout and shows every option's default in ``--help``.

    Not argparse's ArgumentDefaultsHelpFormatter: that one adds "(default: None)" to options whose help already says
    in words what leaving them out means ("default: every task"), and nothing to options without a help text.
    """

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.default not in (None, argparse.SUPPRESS) and "default" not in text and (action.option_strings or action.nargs in ("?", "*")):
            shown = " ".join(map(str, action.default)) if isinstance(action.default, list) else str(action.default)  # as typed
            text += f" (default: {shown.replace('%', '%%')})"  # help texts are %-formatted
        return text


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m env.eval", description=__doc__, formatter_class=HelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub_parser = partial(sub.add_parser, formatter_class=HelpFormatter)  # each command's --help shows its defaults too

    def playing(p: argparse.ArgumentParser, runs_flags: tuple[str, ...] = ("--runs",)) -> None:
        """The options of the commands that play episodes with run's machinery (run, ablate)."""
        p.add_argument("--agent", required=True, choices=sorted(AGENTS))
        p.add_argument("--tasks", nargs="*", help="task ids (default: every task of the test split, or of --split, as the options below narrow it)")
        p.add_argument("--split", default="test", choices=SPLITS, help="the split whose tasks are played when --tasks names none")
        p.add_argument("--family", help="only this family's tasks (classic, repo, procedural, race)")
        p.add_argument("--library", nargs="+", action="extend", metavar="NAME", help="only these libraries' tasks (a built catalog's, ENV_CATALOG)")
        p.add_argument("--source", choices=get_args(Source), help="only a built catalog's tasks of this source")
        p.add_argument("--per-library", type=int, metavar="N", help="at most N tasks of each library, drawn by a hash of --seed and the id")
        p.add_argument("--seed", type=int, default=0, help="the --per-library draw's seed")
        p.add_argument(*runs_flags, dest="runs", type=int, default=5, help="runs of each task")
        p.add_argument("--concurrency", type=int, default=2, help="episodes played at once")
        p.add_argument("--out", required=True, help="the results directory (a rerun into it plays only what it lacks)")
        p.add_argument("--url", help="play on this server over /ws (default: in this process)")
        p.add_argument("--edit-gate", choices=("on", "off"), help="override the profile's edit gate (default: the profile's)")
        p.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                       help="play the episodes as Ray actors: on a local Ray instance, or on the cluster at ADDRESS (needs pip install -e '.[ray]'; "
                            "default: in threads of this process)")

    p = sub_parser("run", help="play episodes and save every step (resumable)")
    playing(p)
    p.add_argument("--profile", default="default", choices=sorted(PROFILES), help="the tool interface (the arm is AGENT@PROFILE)")
    p = sub_parser("ablate", help="one agent under several profiles on the same tasks and seeds: pass@k, passX@2, tool calls, cost (resumable)")
    playing(p, ("--runs", "--seeds"))
    p.add_argument("--profiles", default="bash,pdb", help="comma-separated profiles to compare, each an arm AGENT@PROFILE")
    p.add_argument("--json", action="store_true", help="print the figures as JSON instead of the tables (default: the tables; --out gets both, ablation.md and ablation.json)")
    p = sub_parser("procedural", help="the procedural benchmark table: agents x splits x difficulties, mean ± std over seeds")
    p.add_argument("--agents", nargs="+", default=["random", "heuristic", "oracle"], choices=sorted(AGENTS), help="agents to play")
    p.add_argument("--seeds", type=int, default=5, help="generated tasks per split and difficulty")
    p.add_argument("--splits", nargs="+", default=["train", "ood"], choices=["train", "test", "ood"], help="splits to generate from")
    p.add_argument("--levels", nargs="+", default=["easy", "medium", "hard", "extreme"], choices=["easy", "medium", "hard", "extreme"],
                   help="difficulties to generate")
    p.add_argument("--concurrency", type=int, default=2, help="episodes played at once")
    p.add_argument("--out", required=True, help="the results directory")
    p.add_argument("--url", help="play on this server over /ws (default: in this process)")
    p.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                   help="play the episodes as Ray actors: on a local Ray instance, or on the cluster at ADDRESS (needs pip install -e '.[ray]'; "
                        "default: in threads of this process)")
    p = sub_parser("report", help="Markdown report and PNG plots from result directories")
    p.add_argument("dirs", nargs="+")
    p.add_argument("--out", help="where report.md and the plots go (default: the first directory)")
    p = sub_parser("predictions", help="SWE-bench predictions (instance_id, model_name_or_path, model_patch) from finished repository episodes")
    p.add_argument("dir")
    p.add_argument("--agent", required=True)
    p.add_argument("--run", type=int, default=0, help="which run of each task (default 0)")
    p.add_argument("--model", help="model_name_or_path (default: the agent's name)")
    p = sub_parser("calibrate", help="the catalog's table per library with an agent's solve rates, and how far the difficulty estimates agree")
    p.add_argument("dirs", nargs="+", help="result directories of `run` over a built catalog's tasks")
    p.add_argument("--manifest", default="catalog", help="the folder of libraries.json and tasks.jsonl")
    p.add_argument("--work", help="catalog synthesize's --work folder, for each library's share of valid candidates (default: not shown)")
    p.add_argument("--agent", help="the arm to read, AGENT@PROFILE (default: the only one in the results)")
    p = sub_parser("difficulty", help="play the heuristic agent on each repository task folder and record its difficulty")
    p.add_argument("paths", nargs="+", help="task folders or directories of them (synthesized or imported)")
    p.add_argument("--out", help="where the episodes' steps go (default: a temporary folder)")
    return parser


@contextmanager
def _playing(args: argparse.Namespace) -> Iterator[tuple[Callable[[], Driver], EpisodePool | None]]:
    """Where the episodes of ``run``, ``procedural`` and ``ablate`` are played: a driver factory (a server's /ws with
    --url, else this process on a runtime whose secret is the output folder's), and Ray's workers with --ray."""
    from env.eval.drivers import WsDriver
    from env.families.catalog import TaskCatalog
    from env.runtime import Runtime
    from env.secret import ServerSecret
    from env.server.in_process import InProcessDriver

    secret: str | None = None
    factory: Callable[[], Driver]
    if args.url:
        factory = partial(WsDriver, args.url)
    else:
        server_secret = ServerSecret.for_directory(Path(args.out))
        secret = server_secret.shared_value()
        factory = partial(InProcessDriver, Runtime.from_env(TaskCatalog.from_env(), server_secret))
    with ExitStack() as stack:
        pool = None
        if args.ray is not None:
            from env.eval.ray_pool import RayPool

            pool = stack.enter_context(RayPool(args.ray or None, args.url, secret, args.concurrency, Path(args.out)))
        yield factory, pool


def _ray_missing(args: argparse.Namespace) -> bool:
    """With --ray: False once Ray is importable and the address answers (before any task is listed), else True and
    why on stderr."""
    if args.ray is None:
        return False
    try:
        from env.eval.ray_pool import reachable
    except ImportError as exc:
        print(f"--ray needs Ray, which is not installed here ({exc}): pip install -e '.[ray]'", file=sys.stderr)
        return True
    reachable(args.ray or None)  # a wrong address costs nothing: SystemExit naming it
    return False


def _selection(args: argparse.Namespace) -> tuple[bool | None, Selection]:
    from env.eval.run import Selection

    gate = None if args.edit_gate is None else args.edit_gate == "on"
    return gate, Selection(args.split, tuple(args.library or ()), args.source, args.per_library, args.seed, args.family)


def cmd_run(args: argparse.Namespace) -> int:
    from env.eval import report as report_module
    from env.eval import run as run_module

    if _ray_missing(args):
        return 2
    gate, selection = _selection(args)
    with _playing(args) as (factory, pool):
        results = run_module.run(factory, args.agent, args.tasks, args.runs, args.concurrency, Path(args.out), args.profile, gate, pool, selection)
    print(f"{len(results)} episode(s) played; results in {Path(args.out) / 'results.jsonl'}", file=sys.stderr)
    # every arm in --out, what earlier runs played included: the figures a resumed run ends with
    print(report_module.summary_table(report_module.load([Path(args.out)])))
    return 0


def cmd_procedural(args: argparse.Namespace) -> int:
    from env.eval import report as report_module
    from env.eval import run as run_module
    from env.families.registry import FAMILIES

    if _ray_missing(args):
        return 2
    family = FAMILIES["procedural"]  # the family makes its ids (proc-<level>-<split>-<index>)
    ids = [family.generated_id(level, split, i) for split in args.splits for level in args.levels for i in range(args.seeds)]
    with _playing(args) as (factory, pool):
        for agent in args.agents:
            run_module.run(factory, agent, ids, 1, args.concurrency, Path(args.out), pool=pool)
    print(report_module.family_tables(report_module.load([Path(args.out)])) or "(no procedural episodes)")
    return 0


def cmd_ablate(args: argparse.Namespace) -> int:
    from env.eval import ablate as ablate_module

    profiles = ablate_module.parse_profiles(args.profiles)
    try:
        ablate_module.check_profiles(args.agent, profiles)  # before anything starts: a wrong name costs nothing
    except ablate_module.Refused as exc:
        print(f"ablate: {exc}", file=sys.stderr)
        return 2
    if _ray_missing(args):
        return 2
    gate, selection = _selection(args)
    with _playing(args) as (factory, pool):
        try:
            summary = ablate_module.ablate(factory, args.agent, profiles, args.tasks, args.runs, args.concurrency, Path(args.out), gate, pool, selection)
        except ablate_module.Refused as exc:
            print(f"ablate: {exc}", file=sys.stderr)
            return 2
    text = ablate_module.table(summary, Path(args.out))
    (Path(args.out) / "ablation.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    (Path(args.out) / "ablation.md").write_text(text + "\n", encoding="utf-8")
    print(json.dumps(summary, indent=2) if args.json else text)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from env.eval import report as report_module

    dirs = [Path(d) for d in args.dirs]
    print(report_module.report(dirs, Path(args.out) if args.out else dirs[0]))
    print("Summary\n\n" + report_module.summary_table(report_module.load(dirs)))  # the report is long: its gist comes last
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    from env.eval import report as report_module
    from env.eval.calibrate import table as calibration

    try:
        print(calibration(Path(args.manifest), report_module.load([Path(d) for d in args.dirs]), Path(args.work) if args.work else None, args.agent))
    except (ValueError, OSError) as exc:
        print(f"calibrate: {exc}", file=sys.stderr)
        return 2
    return 0


def cmd_difficulty(args: argparse.Namespace) -> int:
    from env.eval.difficulty import measure
    from env.sandbox.isolation import probe_isolation
    from env.sandbox.limits import Limits
    from env.sandbox.runner import Sandbox

    for task_id, found in measure([Path(p) for p in args.paths], Sandbox(Limits.from_env(), probe_isolation()), Path(args.out) if args.out else None):
        print(f"{task_id}: {found.level} ({found.basis()})")
    return 0


def cmd_predictions(args: argparse.Namespace) -> int:
    from env.authoring.predictions import Prediction, instance_of
    from env.eval import report as report_module
    from env.families.catalog import TaskCatalog

    catalog = TaskCatalog.from_env()
    for r in report_module.load([Path(args.dir)]):
        if r["agent"] == args.agent and r["run"] == args.run and r.get("model_patch") is not None:
            instance = instance_of(catalog.get(r["task_id"]))
            print(Prediction(instance_id=instance, model_name_or_path=args.model or args.agent, model_patch=r["model_patch"]).model_dump_json())
    return 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "run": cmd_run, "procedural": cmd_procedural, "ablate": cmd_ablate, "report": cmd_report, "calibrate": cmd_calibrate,
    "difficulty": cmd_difficulty, "predictions": cmd_predictions,
}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    # the commands import what they use after parsing: the families and the server's models (OpenEnv), which --help does not need
    args = build_parser().parse_args(argv)
    return COMMANDS[args.command](args)


if __name__ == "__main__":
    # Nothing this command starts outlives it, and what killed runs left on the scratch disk goes (env.sandbox.lifetime).
    sys.exit(command(main))
