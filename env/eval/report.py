"""A Markdown report and PNG plots from one or more result directories of ``python -m env.eval run``.

    python -m env.eval report results/ [more_results/ ...] --out report/

Per agent and task: mean score ± std, solved % with its Wilson 95% interval, average attempts and
steps (the reference README's baseline table); pass@k for every k up to the runs per task, mean
over tasks and per task with a 95% interval (``metrics.pass_at_k_interval``: Wilson's, mapped to
pass@k); who solved what between each pair of agents (single run and pooled) with passX@2; cost
per solved task; trajectory flags with counts. Plots: pass@k against k (integer k), cumulative
solve rate against the step budget, mean reward per step. ``summary_table`` is the short table
``run`` and ``report`` print at the end.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from itertools import combinations
from pathlib import Path
from typing import Any

from env.eval.metrics import mean_std, pass_at_k, pass_at_k_interval, passx_at_k, wilson_interval
from env.families.registry import FAMILIES


def load(dirs: list[Path]) -> list[dict[str, Any]]:
    """The episodes every statistic counts: those the machine decided part of (``infra_failed``) are left out."""
    return [r for r in load_all(dirs) if not r.get("infra_failed")]


def load_all(dirs: list[Path]) -> list[dict[str, Any]]:
    seen: dict[tuple[str, str, int], dict[str, Any]] = {}
    for d in dirs:
        path = d / "results.jsonl"
        for line in path.read_text(encoding="utf-8").splitlines() if path.exists() else []:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            seen[(r["agent"], r["task_id"], int(r["run"]))] = r  # one episode counts once
    return list(seen.values())


def _group(results: list[dict[str, Any]]) -> dict[str, dict[str, list[dict[str, Any]]]]:
    grouped: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for r in sorted(results, key=lambda r: (r["agent"], r["task_id"], r["run"])):
        grouped[r["agent"]][r["task_id"]].append(r)
    return grouped


def baseline_table(results: list[dict[str, Any]]) -> str:
    rows = ["| agent | task | runs | mean score ± std | solved % [95% CI] | avg attempts | avg steps |", "|---|---|---|---|---|---|---|"]
    for agent, tasks in _group(results).items():
        for task_id, runs in tasks.items():
            mean, std = mean_std([r["score"] for r in runs])
            solved = sum(r["solved"] for r in runs)
            lo, hi = wilson_interval(solved, len(runs))
            attempts = sum(r["attempts"] for r in runs) / len(runs)
            steps = sum(r["steps"] for r in runs) / len(runs)
            rows.append(f"| {agent} | `{task_id}` | {len(runs)} | {mean:.3f} ± {std:.3f} | {100 * solved / len(runs):.0f} [{100 * lo:.0f}, {100 * hi:.0f}] | {attempts:.1f} | {steps:.1f} |")
    return "\n".join(rows)


def family_tables(results: list[dict[str, Any]]) -> str:
    """Each family's own section (``Family.report_table``: the procedural family's table by split and difficulty),
    from its episodes' rows; "" when no family has one. Rows of a family this process does not know are left out."""
    by_family: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        by_family[r.get("family", "")].append(r)
    sections = [FAMILIES[name].report_table(rows) for name, rows in by_family.items() if name in FAMILIES]
    return "\n\n".join(section for section in sections if section)


def by_task_table(results: list[dict[str, Any]]) -> str:
    """One row per task, one column per agent: mean score ± std and solved % [95% CI] (the table of docs/evaluation.md, "Baselines")."""
    grouped = _group(results)
    agents = sorted(grouped)
    tasks = list(dict.fromkeys(r["task_id"] for r in results))
    rows = ["| task | " + " | ".join(agents) + " |", "|---|" + "---|" * len(agents)]
    for task_id in tasks:
        cells = []
        for agent in agents:
            runs = grouped[agent].get(task_id, [])
            if not runs:
                cells.append("-")
                continue
            mean, std = mean_std([r["score"] for r in runs])
            solved = sum(r["solved"] for r in runs)
            lo, hi = wilson_interval(solved, len(runs))
            cells.append(f"{mean:.2f} ± {std:.2f}, {100 * solved / len(runs):.0f}% [{100 * lo:.0f}, {100 * hi:.0f}]")
        rows.append(f"| `{task_id}` | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def pass_at_k_table(results: list[dict[str, Any]]) -> tuple[str, dict[str, list[float]]]:
    curves: dict[str, list[float]] = {}
    for agent, tasks in _group(results).items():
        n = min(len(runs) for runs in tasks.values())
        curves[agent] = [sum(pass_at_k(n, sum(r["solved"] for r in runs[:n]), k) for runs in tasks.values()) / len(tasks) for k in range(1, n + 1)]
    width = max((len(c) for c in curves.values()), default=0)
    rows = ["| agent | " + " | ".join(f"pass@{k}" for k in range(1, width + 1)) + " |", "|---|" + "---|" * width]
    for agent, curve in curves.items():
        rows.append(f"| {agent} | " + " | ".join(f"{v:.3f}" for v in curve) + " |")
    return "\n".join(rows), curves


def per_task_pass_at_k(results: list[dict[str, Any]]) -> str:
    """One row per agent and task: pass@k for k = 1 .. the task's runs, each with its 95% interval.

    A task's own runs decide its row (a task with fewer runs has fewer columns filled), unlike the mean over tasks,
    which truncates every task to the agent's fewest runs so that each k averages the same tasks.
    """
    grouped = _group(results)
    width = max((len(runs) for tasks in grouped.values() for runs in tasks.values()), default=0)
    rows = ["| agent | task | solved | " + " | ".join(f"pass@{k} [95% CI]" for k in range(1, width + 1)) + " |", "|---|---|---|" + "---|" * width]
    for agent, tasks in grouped.items():
        for task_id, runs in tasks.items():
            n, c = len(runs), sum(r["solved"] for r in runs)
            cells = []
            for k in range(1, width + 1):
                if k > n:
                    cells.append("-")
                    continue
                lo, hi = pass_at_k_interval(n, c, k)
                cells.append(f"{pass_at_k(n, c, k):.2f} [{lo:.2f}, {hi:.2f}]")
            rows.append(f"| {agent} | `{task_id}` | {c}/{n} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def summary_table(results: list[dict[str, Any]]) -> str:
    """A few lines per arm for the end of ``run`` and ``report``: how much was played, how much solved, pass@1 and
    pass@k at the largest k every task has.

    The solved interval is Wilson's over the arm's episodes pooled: runs of different tasks succeed at different
    rates, and a sum of independent Bernoulli trials varies no more than a binomial one with their mean rate, so
    for this set of tasks the interval errs wide, never narrow.
    """
    _, curves = pass_at_k_table(results)
    rows = ["| agent | tasks | episodes | solved % [95% CI] | mean score | pass@1 | pass@k |", "|---|---|---|---|---|---|---|"]
    for agent, tasks in _group(results).items():
        runs = [r for rs in tasks.values() for r in rs]
        solved = sum(r["solved"] for r in runs)
        lo, hi = wilson_interval(solved, len(runs))
        mean = sum(r["score"] for r in runs) / len(runs)
        curve = curves[agent]
        rows.append(f"| {agent} | {len(tasks)} | {len(runs)} | {100 * solved / len(runs):.0f} [{100 * lo:.0f}, {100 * hi:.0f}] | "
                    f"{mean:.3f} | {curve[0]:.3f} | {curve[-1]:.3f} (k={len(curve)}) |")
    return "\n".join(rows)


def who_solved(results: list[dict[str, Any]]) -> str:
    grouped = _group(results)
    lines = []
    for a, b in combinations(sorted(grouped), 2):
        tasks = sorted(set(grouped[a]) & set(grouped[b]))
        if not tasks:
            continue
        n = min(min(len(grouped[a][t]), len(grouped[b][t])) for t in tasks)
        single = {"only " + a: 0, "only " + b: 0, "both": 0, "neither": 0}
        pooled = dict(single)
        passx = []
        for t in tasks:
            ca = [r["solved"] for r in grouped[a][t][:n]]
            cb = [r["solved"] for r in grouped[b][t][:n]]
            for table, (x, y) in ((single, (ca[0], cb[0])), (pooled, (any(ca), any(cb)))):
                key = "both" if x and y else "only " + a if x else "only " + b if y else "neither"
                table[key] += 1
            passx.append(passx_at_k([sum(ca), sum(cb)], n))
        lines.append(f"**{a} vs {b}** ({len(tasks)} tasks, {n} runs each): passX@2 = {sum(passx) / len(passx):.3f}")
        lines.append("| | " + " | ".join(single) + " |")
        lines.append("|---|" + "---|" * len(single))
        lines.append("| run 0 | " + " | ".join(str(v) for v in single.values()) + " |")
        lines.append(f"| any of {n} runs | " + " | ".join(str(v) for v in pooled.values()) + " |")
        lines.append("")
    return "\n".join(lines) or "(one agent only)"


def costs_and_flags(results: list[dict[str, Any]]) -> str:
    """Per agent: the steps of a solved episode (their mean), and what a solve cost in all (every episode's steps and
    tokens, solved or not, over the solves): two different figures, each named for what it divides."""
    rows = [
        "| agent | episodes | solved | steps of a solved episode (mean) | steps spent per solve (all episodes) "
        "| tokens spent per solve (all episodes) | flags |",
        "|---|---|---|---|---|---|---|",
    ]
    for agent, tasks in _group(results).items():
        runs = [r for rs in tasks.values() for r in rs]
        solved = [r for r in runs if r["solved"]]
        steps = sum(r["steps"] for r in runs)
        tokens = sum(r.get("tokens", 0) for r in runs)
        counts: dict[str, int] = defaultdict(int)
        for r in runs:
            for f in r.get("flags", []):
                counts[f] += 1
        if solved:
            mean = f"{sum(r['steps'] for r in solved) / len(solved):.1f}"
            per_steps, per_tokens = f"{steps / len(solved):.1f}", f"{tokens / len(solved):.1f}"
        else:
            mean = per_steps = per_tokens = "n/a"
        flags = ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "-"
        rows.append(f"| {agent} | {len(runs)} | {len(solved)} | {mean} | {per_steps} | {per_tokens} | {flags} |")
    return "\n".join(rows)


def pass_at_k_figure(curves: dict[str, list[float]]) -> tuple[Any, Any]:
    """The pass@k plot's figure and axes, before labels; k is a number of runs, so its axis ticks integers only
    (matplotlib's default locator put k = 1.25, 1.75 between two runs)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(5, 3.5))
    for agent, curve in curves.items():
        ax.plot(range(1, len(curve) + 1), curve, marker="o", label=agent)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    return fig, ax


def plots(results: list[dict[str, Any]], curves: dict[str, list[float]], out: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made = []

    def save(fig: Any, ax: Any, name: str, **labels: Any) -> None:
        ax.set(**labels)
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / name, dpi=100)
        plt.close(fig)
        made.append(name)

    grouped = _group(results)
    fig, ax = pass_at_k_figure(curves)
    save(fig, ax, "pass_at_k.png", xlabel="k", ylabel="pass@k", ylim=(0, 1.05), title="pass@k")

    fig, ax = plt.subplots(figsize=(5, 3.5))
    for agent, tasks in grouped.items():
        runs = [r for rs in tasks.values() for r in rs]
        budget = max(r["steps"] for r in runs)
        ax.step(range(budget + 1), [sum(r["solved"] and r["steps"] <= b for r in runs) / len(runs) for b in range(budget + 1)], where="post", label=agent)
    save(fig, ax, "solve_rate.png", xlabel="step budget", ylabel="solved", ylim=(0, 1.05), title="cumulative solve rate")

    fig, ax = plt.subplots(figsize=(5, 3.5))
    for agent, tasks in grouped.items():
        runs = [r["rewards"] for rs in tasks.values() for r in rs]
        length = max(len(x) for x in runs)
        means = [sum(x[i] for x in runs if len(x) > i) / max(1, sum(len(x) > i for x in runs)) for i in range(length)]
        ax.plot(range(1, length + 1), means, label=agent)
    save(fig, ax, "reward_per_step.png", xlabel="step", ylabel="mean reward", title="reward per step")
    return made


def trust_note(results: list[dict[str, Any]]) -> str:
    """Which results rest on sandboxed test runs (forgeable in principle by the project's code; see
    docs/repository-tasks.md, "Two trust models")."""
    untrusted = sorted({r["task_id"] for r in results if r.get("trust") == "sandboxed"})
    if not untrusted:
        return "Every result comes from the split verdict: no code of an agent's could forge it."
    episodes = sum(1 for r in results if r.get("trust") == "sandboxed")
    return (
        f"{episodes} of {len(results)} episodes are on tasks whose FAIL_TO_PASS tests run sandboxed, where the project's "
        f"code shares pytest's process (forgeable in principle; tamper canaries void what they catch): "
        + ", ".join(f"`{t}`" for t in untrusted)
    )


def infra_note(every: list[dict[str, Any]]) -> str:
    """How many episodes the machine decided part of (left out of every statistic), and why."""
    failed = [r for r in every if r.get("infra_failed")]
    if not failed:
        return f"No episode met an infrastructure failure (0 of {len(every)})."
    causes = Counter(c for r in failed for c in r.get("infra_causes") or ["unknown"])
    said = ", ".join(f"{cause} {n}" for cause, n in sorted(causes.items()))
    return (
        f"{len(failed)} of {len(every)} episodes ({100 * len(failed) / len(every):.1f} %) met an infrastructure failure and are left "
        f"out of every statistic below (steps by cause: {said}); `python -m env.eval run` with the same arguments plays them again."
    )


def report(dirs: list[Path], out: Path) -> str:
    every = load_all(dirs)
    results = load(dirs)  # the machine's episodes are not the agent's: no statistic counts them
    if not every:
        raise SystemExit(f"no results.jsonl with episodes in {', '.join(map(str, dirs))}")
    if not results:
        raise SystemExit(f"every one of the {len(every)} episodes in {', '.join(map(str, dirs))} met an infrastructure failure: {infra_note(every)}")
    out.mkdir(parents=True, exist_ok=True)
    pass_table, curves = pass_at_k_table(results)
    images = plots(results, curves, out)
    families = family_tables(results)
    text = "\n\n".join([
        "# Evaluation report",
        f"{len(results)} episodes from {', '.join(map(str, dirs))}.",
        "## Infrastructure\n\n" + infra_note(every),
        "## Trust\n\n" + trust_note(results),
        "## Score and solve rate by task\n\nmean score ± std, solved % [Wilson 95% interval]\n\n" + by_task_table(results),
        "## Baseline table\n\n" + baseline_table(results),
        "## pass@k (mean over tasks)\n\n" + pass_table,
        "## pass@k by task\n\npass@k [95% interval for the task's true pass@k: Wilson's for its success rate, mapped to "
        "1 - (1 - p)^k; at k = runs the estimate is 0 or 1 and may lie outside it]\n\n" + per_task_pass_at_k(results),
        "## Who solved it\n\n" + who_solved(results),
        "## Cost and trajectory flags\n\n" + costs_and_flags(results),
        *(["## By family\n\n" + families] if families else []),
        "## Plots\n\n" + "\n".join(f"![{name}]({name})" for name in images),
    ]) + "\n"
    (out / "report.md").write_text(text, encoding="utf-8")
    return text
