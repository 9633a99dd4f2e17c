"""The interface ablation: one agent, the same tasks and seeds under each of several profiles, compared as in the
pdb-vs-shell study (its passX@k: one rollout from each of two configurations, against two rollouts of one).

    python -m env.eval ablate --agent heuristic --profiles bash,pdb --runs 3 --out ablation/
    python -m env.eval ablate --agent llm --profiles bash,pdb,trace --tasks easy repo-slice-window --runs 5 --out ablation/ --ray

Each profile is an arm of ``run`` (``AGENT@PROFILE``, results and steps in the same ``--out``), played by ``run``'s
own machinery (drivers, resume, Ray pool): a rerun plays only what is missing. Only tasks that serve every profile
are played, so each arm plays exactly the same tasks and seeds. Per profile: pass@k (mean over tasks) with the
pooled solved rate's Wilson interval and every task's pass@k interval, tool calls per episode for each verb (from the
recorded steps), and steps and tokens per solve (means over the solved episodes; tokens only where the agent
reports usage). Per pair of profiles: passX@2 beside each one's pass@2.

A profile name that is not registered (``env.interface.PROFILES``), one the agent declares it cannot play (an agent
class may list the profiles it can play in ``profiles``), or one that no chosen task serves is refused (``Refused``:
the command exits 2 naming it) before anything is played.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Callable
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING, Any

from env.agents import AGENTS
from env.eval import run as run_module
from env.eval.metrics import pass_at_k, pass_at_k_interval, passx_at_k, wilson_interval
from env.eval.report import load, per_task_pass_at_k
from env.interface import PROFILES

if TYPE_CHECKING:
    from env.eval.drivers import Driver


class Refused(Exception):
    """The ablation cannot be played as asked (the message names the profile or agent); the command exits 2."""


def parse_profiles(text: str) -> list[str]:
    """``bash,pdb,trace`` as a list, duplicates dropped, order kept."""
    return list(dict.fromkeys(p.strip() for p in text.split(",") if p.strip()))


def check_profiles(agent_name: str, profiles: list[str]) -> None:
    """Refuse unknown profile names and profiles the agent says it cannot play; looked up when called, so a profile
    registered later is taken as soon as it is."""
    if len(profiles) < 2:
        raise Refused(f"an ablation compares at least two profiles, got {', '.join(profiles) or 'none'}")
    unknown = [p for p in profiles if p not in PROFILES]
    if unknown:
        raise Refused(f"unknown profile(s): {', '.join(unknown)}; registered: {', '.join(PROFILES)}")
    playable = getattr(AGENTS[agent_name], "profiles", None)
    if playable is not None and (unusable := [p for p in profiles if p not in playable]):
        raise Refused(f"agent {agent_name!r} cannot use profile(s) {', '.join(unusable)}; it plays: {', '.join(playable)}")


def common_tasks(tasks: dict[str, dict[str, Any]], chosen: list[str], profiles: list[str]) -> list[str]:
    """The chosen tasks that serve every profile; refuses a profile that none of them serves."""
    for profile in profiles:
        if not any(run_module.serves(tasks[t], profile) for t in chosen):
            raise Refused(f"no chosen task serves profile {profile!r}: the agent cannot use it on these tasks")
    kept = [t for t in chosen if all(run_module.serves(tasks[t], p) for p in profiles)]
    if not kept:
        raise Refused(f"no chosen task serves all of the profiles {', '.join(profiles)}")
    if len(kept) < len(chosen):
        left = [t for t in chosen if t not in kept]
        print(f"skipping {len(left)} task(s) that lack one of the profiles: {', '.join(left)}", file=sys.stderr)
    return kept


def ablate(
    driver_factory: Callable[[], Driver], agent_name: str, profiles: list[str], task_ids: list[str] | None, runs: int, concurrency: int,
    out: Path, edit_gate: bool | None = None, pool: run_module.EpisodePool | None = None,
) -> dict[str, Any]:
    """Play what ``out`` lacks of ``runs`` runs of each common task under each profile; the comparison (``summarise``)."""
    check_profiles(agent_name, profiles)
    tasks = run_module.listing(driver_factory, out, task_ids)
    chosen = common_tasks(tasks, task_ids or run_module.evaluated(tasks), profiles)
    done = run_module.completed(out)
    left = sum((run_module.arm_name(agent_name, p), t, r) not in done for p in profiles for t in chosen for r in range(runs))
    print(f"ablation: {len(profiles) * len(chosen) * runs - left} already done, {left} to play "
          f"({len(chosen)} task(s) x {runs} run(s) x {len(profiles)} profiles)", file=sys.stderr)
    for profile in profiles:
        run_module.run(driver_factory, agent_name, chosen, runs, concurrency, out, profile, edit_gate, pool)
    return summarise(out, agent_name, profiles, chosen, runs)


def verbs(steps_file: Path) -> Counter[str]:
    """The tools one episode called, by name: the server's name for the call where the step recorded it (aliases
    resolved), else the action's own."""
    counted: Counter[str] = Counter()
    for line in steps_file.read_text(encoding="utf-8").splitlines() if steps_file.exists() else []:
        record = json.loads(line)
        action = record.get("action") or {}
        counted[(record.get("call") or {}).get("tool") or action.get("action_type") or action.get("type") or "?"] += 1
    return counted


def summarise(out: Path, agent_name: str, profiles: list[str], task_ids: list[str], runs: int) -> dict[str, Any]:
    """The ablation's figures from ``out``: its episodes of these tasks' first ``runs`` runs under each profile.

    Every profile is cut to the same n runs per task, the fewest any task has under any profile (all ``runs`` once
    the ablation finished), as the study's estimators need.
    """
    arms = {p: run_module.arm_name(agent_name, p) for p in profiles}
    episodes: dict[str, dict[str, list[dict[str, Any]]]] = {p: {t: [] for t in task_ids} for p in profiles}
    by_arm = {arm: p for p, arm in arms.items()}
    for r in sorted(load([out]), key=lambda r: r["run"]):
        if r["agent"] in by_arm and r["task_id"] in task_ids and r["run"] < runs:
            episodes[by_arm[r["agent"]]][r["task_id"]].append(r)
    n = min(len(rs) for per_task in episodes.values() for rs in per_task.values())
    if n == 0:
        raise Refused(f"{out} lacks episodes of the ablation: play it first")
    counts = {p: {t: sum(r["solved"] for r in episodes[p][t][:n]) for t in task_ids} for p in profiles}
    summary: dict[str, Any] = {"agent": agent_name, "profiles": profiles, "tasks": task_ids, "runs": n, "arms": {}, "pairs": []}
    for p in profiles:
        played = [r for t in task_ids for r in episodes[p][t][:n]]
        solved = [r for r in played if r["solved"]]
        lo, hi = wilson_interval(len(solved), len(played))
        calls: Counter[str] = Counter()
        for r in played:
            calls.update(verbs(run_module.steps_path(out, arms[p], r["task_id"], r["run"])))
        reports_tokens = any(r.get("tokens") for r in played)
        summary["arms"][p] = {
            "arm": arms[p],
            "episodes": len(played),
            "solved": len(solved),
            "solved_rate": len(solved) / len(played),
            "solved_ci95": [lo, hi],
            "pass_at_k": {str(k): sum(pass_at_k(n, counts[p][t], k) for t in task_ids) / len(task_ids) for k in range(1, n + 1)},
            "by_task": {
                t: {"solved": counts[p][t], "runs": n,
                    "pass_at_k": {str(k): {"value": pass_at_k(n, counts[p][t], k), "ci95": list(pass_at_k_interval(n, counts[p][t], k))}
                                  for k in range(1, n + 1)}}
                for t in task_ids
            },
            "calls_per_episode": {verb: calls[verb] / len(played) for verb in sorted(calls)},
            "steps_per_solve": sum(r["steps"] for r in solved) / len(solved) if solved else None,
            "tokens_per_solve": sum(r.get("tokens", 0) for r in solved) / len(solved) if solved and reports_tokens else None,
        }
    for a, b in combinations(profiles, 2):
        summary["pairs"].append({
            "profiles": [a, b],
            "passx_at_2": sum(passx_at_k([counts[a][t], counts[b][t]], n) for t in task_ids) / len(task_ids),
            "pass_at_2": {p: summary["arms"][p]["pass_at_k"].get("2") for p in (a, b)},
        })
    if len(profiles) > 2:
        summary["all"] = {f"passx_at_{len(profiles)}": sum(passx_at_k([counts[p][t] for p in profiles], n) for t in task_ids) / len(task_ids)}
    return summary


def _figure(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def table(summary: dict[str, Any], out: Path) -> str:
    """The comparison as Markdown: per profile, per pair, per task, and tool calls per verb."""
    n, profiles, arms = summary["runs"], summary["profiles"], summary["arms"]
    lines = [f"Ablation: {summary['agent']} on {len(summary['tasks'])} task(s) x {n} run(s) (the same seeds under every profile)", ""]
    lines += ["| profile | episodes | solved % [95% CI] | " + " | ".join(f"pass@{k}" for k in range(1, n + 1))
              + " | steps per solve | tokens per solve |", "|---|---|---|" + "---|" * (n + 2)]
    for p in profiles:
        s = arms[p]
        lo, hi = s["solved_ci95"]
        lines.append(f"| {p} | {s['episodes']} | {100 * s['solved_rate']:.0f} [{100 * lo:.0f}, {100 * hi:.0f}] | "
                     + " | ".join(f"{v:.3f}" for v in s["pass_at_k"].values())
                     + f" | {_figure(s['steps_per_solve'], 1)} | {_figure(s['tokens_per_solve'], 0)} |")
    lines += ["", "Pairs: passX@2 is one rollout under each profile; pass@2 is two rollouts under one (the study's comparison)", "",
              "| profiles | passX@2 | pass@2 of the first | pass@2 of the second |", "|---|---|---|---|"]
    for pair in summary["pairs"]:
        a, b = pair["profiles"]
        lines.append(f"| {a} + {b} | {pair['passx_at_2']:.3f} | {_figure(pair['pass_at_2'][a])} | {_figure(pair['pass_at_2'][b])} |")
    for name, value in summary.get("all", {}).items():
        lines += ["", f"{name.replace('passx_at_', 'passX@')} (one rollout under each of the {len(profiles)} profiles): {value:.3f}"]
    chosen = [r for r in load([out]) if r["agent"] in {s["arm"] for s in arms.values()} and r["task_id"] in summary["tasks"] and r["run"] < n]
    lines += ["", "pass@k by task [95% CI]", "", per_task_pass_at_k(chosen)]
    verbs_seen = sorted({v for s in arms.values() for v in s["calls_per_episode"]})
    lines += ["", "Tool calls per episode", "", "| verb | " + " | ".join(profiles) + " |", "|---|" + "---|" * len(profiles)]
    for verb in verbs_seen:
        rates = [arms[p]["calls_per_episode"].get(verb) for p in profiles]
        lines.append(f"| {verb} | " + " | ".join("-" if rate is None else f"{rate:.2f}" for rate in rates) + " |")
    return "\n".join(lines)
