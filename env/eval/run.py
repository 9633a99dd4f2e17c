"""Run agents on tasks, saving every step; resumable after a crash or Ctrl-C.

    python -m env.eval run --agent heuristic --tasks easy repo-slice-window --runs 5 --concurrency 2 --out results/
    python -m env.eval run --agent oracle --out results/ --url http://localhost:8000     # over /ws

Layout of ``--out``: ``results.jsonl`` gets one line per finished episode (written last, in one
write), ``steps/<agent>/<task>/run<N>.jsonl`` one line per step. A rerun skips every episode
already in ``results.jsonl`` and replays the rest from scratch, so nothing is lost or counted twice.
Seeds are fixed: run N of a task always uses the same seed.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
import threading
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tqdm import tqdm

from env.agents import heuristic, oracle, random_agent  # noqa: F401  (registers the agents)
from env.agents.base import AGENTS

DIGEST_FIELDS = ("step_number", "done", "error", "tests_passed", "tests_total", "score_estimate", "grader_score", "step_reward", "cumulative_reward")


def seed_for(task_id: str, run: int) -> int:
    return zlib.crc32(f"{task_id}:{run}".encode()) & 0x7FFFFFFF


def digest(obs: dict[str, Any]) -> dict[str, Any]:
    """What a trajectory keeps of an observation: the numbers, and a hash of the long texts."""
    kept = {k: obs.get(k) for k in DIGEST_FIELDS}
    text = (obs.get("tool_output") or "") + (obs.get("current_error_output") or "") + (obs.get("query_result") or "")
    kept["text_sha1"] = hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()[:12]
    kept["text_chars"] = len(text)
    results = obs.get("test_results") or {}
    if results:
        kept["test_counts"] = {s: list(results.values()).count(s) for s in sorted(set(results.values()))}
    return kept


def completed(out: Path) -> set[tuple[str, str, int]]:
    path = out / "results.jsonl"
    if not path.exists():
        return set()
    done = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            r = json.loads(line)
            done.add((r["agent"], r["task_id"], int(r["run"])))
        except (ValueError, KeyError):
            continue  # a line cut by a crash: that episode runs again
    return done


def play(driver: Any, agent_name: str, task: dict[str, Any], run: int, steps_file: Path) -> dict[str, Any]:
    seed = seed_for(task["id"], run)
    agent = AGENTS[agent_name]()
    started = time.monotonic()
    obs = driver.reset(task["id"], seed)
    agent.begin(task, obs, random.Random(seed))
    steps_file.parent.mkdir(parents=True, exist_ok=True)
    rewards: list[float] = []
    actions: list[dict[str, Any]] = []
    tokens = 0
    with steps_file.open("w", encoding="utf-8") as handle:
        done = bool(obs.get("done"))
        while not done:
            aliased = len(getattr(agent, "aliases_used", []))
            action = agent.act(obs)
            t0 = time.monotonic()
            obs, reward, done = driver.step(action)
            rewards.append(reward)
            actions.append(action)
            record = {
                "step": len(rewards),
                "action": action,
                "observation": digest(obs),
                "reward": reward,
                "breakdown": obs.get("breakdown", {}),
                "ms": round((time.monotonic() - t0) * 1000, 1),
                "tokens": agent.usage(),
                "aliases": [list(a) for a in getattr(agent, "aliases_used", [])[aliased:]],
            }
            tokens += sum(record["tokens"].values())
            handle.write(json.dumps(record) + "\n")
    info = obs.get("info") or {}
    # A classic episode ends with the solve bonus exactly when its last submission solved the task.
    solved = bool(info.get("resolved")) if task["family"] == "repo" else "solve_bonus" in (obs.get("breakdown") or {})
    return {
        "agent": agent_name,
        "task_id": task["id"],
        "family": task["family"],
        "run": run,
        "seed": seed,
        "score": obs.get("grader_score") or 0.0,
        "solved": solved,
        "steps": len(rewards),
        "attempts": sum(1 for a in actions if a.get("action_type") in ("submit_fix", "submit")),
        "rewards": rewards,
        "actions": [a.get("action_type") for a in actions],
        "flags": flags(actions),
        "tokens": tokens,
        "model_patch": info.get("model_patch"),  # repository tasks: the agent's patch, for SWE-bench predictions
        "seconds": round(time.monotonic() - started, 2),
    }


def flags(actions: list[dict[str, Any]]) -> list[str]:
    """Behaviours worth counting in a report."""
    found = []
    kinds = [a.get("action_type") for a in actions]
    if "edit" in kinds or "replace_text" in kinds or "submit" in kinds:
        if "run_tests" not in kinds:
            found.append("never_ran_tests")
    views = [a.get("path") for a in actions if a.get("action_type") == "view_file" and a.get("start_line") is None]
    if len(views) != len(set(views)):
        found.append("reread_same_file")
    fixes = [json.dumps(a, sort_keys=True) for a in actions if a.get("action_type") in ("submit_fix", "edit", "replace_text")]
    if len(fixes) != len(set(fixes)):
        found.append("repeated_same_fix")
    if kinds[:2].count("give_up") or (kinds and kinds[0] == "submit"):
        found.append("gave_up_early")
    return found


def run(driver_factory: Any, agent_name: str, task_ids: list[str] | None, runs: int, concurrency: int, out: Path) -> list[dict[str, Any]]:
    out.mkdir(parents=True, exist_ok=True)
    with driver_factory() as probe:
        tasks = {t["id"]: t for t in probe.tasks()}
    unknown = [t for t in task_ids or [] if t not in tasks]
    if unknown:
        raise SystemExit(f"unknown task(s): {', '.join(unknown)}; available: {', '.join(tasks)}")
    chosen = task_ids or list(tasks)
    done = completed(out)
    results_file = out / "results.jsonl"
    if results_file.exists() and not results_file.read_bytes().endswith(b"\n") and results_file.stat().st_size:
        with results_file.open("a", encoding="utf-8") as handle:
            handle.write("\n")  # close a line a crash cut short; it is skipped when read
    jobs = [(tasks[t], r) for t in chosen for r in range(runs) if (agent_name, t, r) not in done]
    lock = threading.Lock()
    results: list[dict[str, Any]] = []

    def job(item: tuple[dict[str, Any], int]) -> None:
        task, r = item
        with driver_factory() as driver:
            result = play(driver, agent_name, task, r, out / "steps" / agent_name / task["id"] / f"run{r}.jsonl")
        with lock, (out / "results.jsonl").open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(result) + "\n")  # one write: the episode counts once it is here
            results.append(result)
            bar.update(1)

    with tqdm(total=len(jobs), desc=f"{agent_name}", unit="episode", file=sys.stderr, disable=not jobs) as bar:
        with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
            list(pool.map(job, jobs))
    return results
