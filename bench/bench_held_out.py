"""Issue 32's attacks on the grade, played in process on the code of the tree this script runs in.

    python bench/bench_held_out.py [--seeds 1 2 3]

Prints, per attack and seed, the grade and the summed step rewards: a table of the visible tests' answers in front
of the bug (easy, medium), the bundled repository tasks' recorded overfits (`overfit.patch`, read from the folder
beside this script, so it can be replayed on an older checkout with `--tasks-from`), wrong diagnoses after a no-op
edit (an unused function) and give_up, a cross-task sentence, and the gold fix beside them for scale. Run it on an older checkout (a git
worktree) to get the "before" figures from the same attacks.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from env.families.catalog import TaskCatalog  # noqa: E402
from env.models import DebugAction  # noqa: E402
from env.patches import apply_patch  # noqa: E402
from env.project import RepoTask, source_only  # noqa: E402
from env.runtime import Runtime  # noqa: E402
from env.sandbox.isolation import probe_isolation  # noqa: E402
from env.sandbox.limits import Limits  # noqa: E402
from env.sandbox.runner import Sandbox  # noqa: E402
from env.secret import ServerSecret  # noqa: E402
from env.server.environment import DebugEnvironment  # noqa: E402

# A table of the visible tests' answers in front of the bug, written by hand so it replays on a checkout from
# before issue 32 (which has no env.authoring.degenerate.lookup_table): the buggy function renamed, a wrapper in front.
TABLES = {
    "easy": ("binary_search", "(tuple(args[0]), args[1])", "{((1, 3, 5, 7, 9), 9): 4, ((42,), 42): 0}"),
    "medium": (
        "authenticate_user",
        "(args[1].strip().lower(), args[2])",
        "{('alice', 'wonderland'): True, ('bob', 'hunter2'): True, ('carol', 'correct horse battery staple'): True}",
    ),
}


def lookup(task_id: str, buggy: str) -> str:
    name, key, answers = TABLES[task_id]
    wrapper = f"\n\n_ANSWERS = {answers}\n\n\ndef {name}(*args):\n    if {key} in _ANSWERS:\n        return _ANSWERS[{key}]\n"
    return buggy.replace(f"def {name}(", f"def _buggy_{name}(") + wrapper + f"    return _buggy_{name}(*args)\n"


WRONG = {
    "easy": "the loop's mid rounding skips the last element",
    "medium": "hash_password uses an MD5 digest instead of SHA-256",
    "hard": "decrement raises ValueError at zero instead of clamping, a lost update",
}
CROSS = "The loop in increment skips the last element, causing a lost update."
NOOP = "\n\ndef _unused_helper(value=None):\n    return value\n"  # changes the AST, fixes nothing


def play(env: DebugEnvironment, task_id: str, seed: int, actions: list[dict]) -> tuple[float, float]:
    obs = env.reset(task_id=task_id, seed=seed)
    total = 0.0
    for action in actions + [{"action_type": "give_up"}]:
        if obs.done:
            break
        obs = env.step(DebugAction(**action))
        total += obs.reward or 0.0
    return float(obs.grader_score or 0.0), round(total, 6)


def rewrite(task: RepoTask, target: dict[str, str], partial: bool) -> list[dict]:
    before, after = source_only(task.files), source_only(target)
    actions: list[dict] = []
    for path in sorted(after):
        if after[path] != before.get(path):
            lines = before[path].count("\n") + (0 if before[path].endswith("\n") else 1)
            if partial:
                actions.append({"action_type": "open_file", "path": path})
            actions.append({"action_type": "edit", "path": path, "start_line": 1, "end_line": lines, "new_text": after[path]})
    return actions + [{"action_type": "submit"}]


def latency(runtime: Runtime, catalog: TaskCatalog, runs: int) -> None:
    """The classic verdict's cost of the held-out cases (a sandbox child of their own): medians in the same run."""
    import random
    import statistics

    from env.families.classic.judge import judge_on

    for task_id in ("easy", "medium"):
        task = catalog.get(task_id)
        cases = task.held_out_cases(random.Random(1))
        plain, held = [], []
        for i in range(runs):
            t = time.perf_counter()
            judge_on(runtime, task, task.gold_source, random.Random(i))
            plain.append(time.perf_counter() - t)
            t = time.perf_counter()
            judge_on(runtime, task, task.gold_source, random.Random(i), held_out=cases)
            held.append(time.perf_counter() - t)
        a, b = statistics.median(plain) * 1000, statistics.median(held) * 1000
        print(f"{task_id}: gold verdict p50 {a:.1f} ms visible tests only, {b:.1f} ms with {len(cases)} held-out cases ({b / a:.2f}x)")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--tasks-from", type=Path, default=ROOT / "tasks", help="where the overfit patches are read from")
    parser.add_argument("--latency", type=int, default=0, metavar="N", help="also time N gold verdicts with and without the held-out cases")
    args = parser.parse_args()
    catalog = TaskCatalog.builtin()
    runtime = Runtime(catalog, Sandbox(Limits(), probe_isolation(disabled=set(), allow_unsafe=False)), workers=8, secret=ServerSecret("b" * 32))
    if args.latency:
        latency(runtime, catalog, args.latency)
    env = DebugEnvironment(runtime)
    attacks: list[tuple[str, str, list[dict]]] = []
    for task_id in ("easy", "medium"):
        task = catalog.get(task_id)
        attacks.append((task_id, "gold fix", [{"action_type": "submit_fix", "fixed_code": task.gold_source, "hypothesis": task.gold_hypothesis}]))
        attacks.append((task_id, "lookup table of the visible tests", [{"action_type": "submit_fix", "fixed_code": lookup(task_id, task.buggy_source), "hypothesis": task.gold_hypothesis}]))
    for task_id, text in WRONG.items():
        noop = catalog.get(task_id).buggy_source + NOOP
        attacks.append((task_id, f"no-op + wrong diagnosis {text!r}", [{"action_type": "submit_fix", "fixed_code": noop, "hypothesis": text}]))
        gold = catalog.get(task_id).gold_source
        attacks.append((task_id, f"gold fix + wrong diagnosis {text!r}", [{"action_type": "submit_fix", "fixed_code": gold, "hypothesis": text}]))
        attacks.append((task_id, "no-op + the gold diagnosis", [{"action_type": "submit_fix", "fixed_code": noop, "hypothesis": catalog.get(task_id).gold_hypothesis}]))
    for task_id in ("easy", "hard"):
        noop = catalog.get(task_id).buggy_source + NOOP
        attacks.append((task_id, "no-op + cross-task sentence", [{"action_type": "submit_fix", "fixed_code": noop, "hypothesis": CROSS}]))
    for task in catalog.all():
        patch = args.tasks_from / "repo" / task.id / "overfit.patch"
        if isinstance(task, RepoTask) and task.family == "repo" and patch.is_file():
            target = apply_patch(task.files, patch.read_text(encoding="utf-8"))
            attacks.append((task.id, "overfit.patch", rewrite(task, target, partial=False)))
    print(f"{'task':28} {'attack':70} " + " ".join(f"seed {s:<12}" for s in args.seeds))
    started = time.monotonic()
    for task_id, name, actions in attacks:
        cells = [play(env, task_id, seed, actions) for seed in args.seeds]
        print(f"{task_id:28} {name[:70]:70} " + " ".join(f"{g:.3f} ({r:+.3f})" for g, r in cells))
    print(f"\n{len(attacks)} attacks x {len(args.seeds)} seeds in {time.monotonic() - started:.0f} s (grade, summed step rewards)")


if __name__ == "__main__":
    main()
