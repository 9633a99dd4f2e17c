"""Run agents on tasks, saving every step; resumable after a crash or Ctrl-C.

    python -m env.eval run --agent heuristic --tasks easy repo-slice-window --runs 5 --concurrency 2 --out results/
    python -m env.eval run --agent oracle --out results/ --url http://localhost:8000     # over /ws

Layout of ``--out``: ``results.jsonl`` gets one line per finished episode (written last, in one
write), ``steps/<agent>/<task>/run<N>.jsonl`` one line per step. A rerun skips every episode
already in ``results.jsonl`` and replays the rest from scratch, so nothing is lost or counted twice.
Seeds are fixed: run N of a task always uses the same seed. The same seed gives the same episode
only under the same server secret (``ENV_SECRET``): every result records the secret's fingerprint,
and a resumed run under another secret stops and says so instead of mixing two evaluations. A procedural id names
one task per salt (``ENV_PROCEDURAL_SALT`` of whoever generates it: the server, or this process in-process): every
procedural result records ``procedural_salt``, "public" or the salt's fingerprint (never the salt), and a resumed run
whose tasks come from another salt stops the same way. When the model
endpoint fails for good (its retries spent, bad credentials, a request it refuses), no further episode starts and the
run stops naming the error; the episodes already finished stay, and a rerun plays the rest.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
import threading
import time
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import openai
from tqdm import tqdm

from env.agents import AGENTS
from env.agents.base import unready
from env.agents.llm import endpoint
from env.agents.retry import ModelUnavailable, describe
from env.infra import RETRIES

if TYPE_CHECKING:  # the drivers import OpenEnv's server: only their shape is needed here
    from env.eval.drivers import Driver

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
    info = obs.get("info") or {}
    if "trust" in info:  # split or sandboxed: how far the results in this step could be forged
        kept["trust"] = info["trust"]
        kept["sandboxed_tests"] = len(info.get("sandboxed_tests") or [])
    return kept


def completed(out: Path) -> set[tuple[str, str, int]]:
    """The episodes ``out`` holds a result for (one the machine decided part of is played again on resume)."""
    path = out / "results.jsonl"
    if not path.exists():
        return set()
    done = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            r = json.loads(line)
            if r.get("infra_failed"):
                continue
            done.add((r["agent"], r["task_id"], int(r["run"])))
        except (ValueError, KeyError):
            continue  # a line cut by a crash: that episode runs again
    return done


class SecretMismatch(SystemExit):
    pass


def check_secret(out: Path, fingerprint: str) -> None:
    """Refuse to add episodes to results produced under another server secret."""
    path = out / "results.jsonl"
    if not path.exists():
        return
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            recorded = json.loads(line).get("secret_fingerprint")
        except (ValueError, AttributeError):
            continue
        if recorded and recorded != fingerprint:
            raise SecretMismatch(
                f"{path} holds episodes run under the secret with fingerprint {recorded}; this environment's is {fingerprint}. "
                "Set ENV_SECRET to the secret those episodes used to resume them, or write to another --out."
            )


def check_salt(out: Path, tasks: dict[str, dict[str, Any]]) -> None:
    """Refuse to add episodes of procedural tasks generated under another salt than the recorded ones."""
    path = out / "results.jsonl"
    if not path.exists():
        return
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            recorded = json.loads(line)
            task_id, salt = recorded["task_id"], recorded.get("procedural_salt")
        except (ValueError, KeyError, TypeError):
            continue
        now = tasks.get(task_id, {}).get("salt")
        if salt and now and salt != now:
            raise SecretMismatch(
                f"{path} holds episodes of {task_id} generated with the procedural salt {salt}; this environment's is {now}. "
                "Set ENV_PROCEDURAL_SALT to the salt those episodes used to resume them, or write to another --out."
            )


def arm_name(agent_name: str, profile: str = "default") -> str:
    """An evaluation arm is an agent with an interface profile: ``llm@pdb`` (pass@k and passX@k are per arm)."""
    return agent_name if profile == "default" else f"{agent_name}@{profile}"


def play(
    driver: Driver, agent_name: str, task: dict[str, Any], run: int, steps_file: Path, profile: str = "default", edit_gate: bool | None = None,
) -> dict[str, Any]:
    seed = seed_for(task["id"], run)
    agent = AGENTS[agent_name]()
    started = time.monotonic()
    options: dict[str, Any] = {} if profile == "default" else {"profile": profile}
    if edit_gate is not None:
        options["edit_gate"] = edit_gate
    obs = driver.reset(task["id"], seed, **options)
    fingerprint = (obs.get("info") or {}).get("secret_fingerprint", "")
    if not obs.get("done"):
        task = {**task, "tools": driver.tools()}  # the agent sees the episode's tools: its tools/list
    agent.begin(task, obs, random.Random(seed))
    steps_file.parent.mkdir(parents=True, exist_ok=True)
    rewards: list[float] = []
    actions: list[dict[str, Any]] = []
    tokens = 0
    infra: list[str] = [str(obs.get("infra_cause"))] if obs.get("infra_failed") else []  # the machine's, not the agent's
    with steps_file.open("w", encoding="utf-8") as handle:
        done = bool(obs.get("done"))
        in_a_row = 0
        while not done:
            aliased = len(getattr(agent, "aliases_used", []))
            action = agent.act(obs)
            t0 = time.monotonic()
            obs, reward, done = driver.step(action)
            if obs.get("infra_failed"):  # not counted by the server: not a step of the agent's either
                infra.append(str(obs.get("infra_cause")))
                in_a_row += 1
                if in_a_row >= RETRIES:
                    break  # the machine keeps failing: the episode ends here, left out of the statistics
                continue
            in_a_row = 0
            rewards.append(reward)
            actions.append(action)
            record = {
                "step": len(rewards),
                "task_id": task["id"],  # with the seed and profile, enough to replay the episode (the demo does)
                "seed": seed,
                "secret_fingerprint": fingerprint,  # a replay under another secret would not match, and says so
                "profile": profile,
                "agent": arm_name(agent_name, profile),
                "action": action,
                "observation": digest(obs),
                "reward": reward,
                "breakdown": obs.get("breakdown", {}),
                "ms": round((time.monotonic() - t0) * 1000, 1),
                "tokens": agent.usage(),
                "aliases": [list(a) for a in getattr(agent, "aliases_used", [])[aliased:]],
                "call": (obs.get("info") or {}).get("call"),  # the tool that ran, and the server-side alias used
            }
            tokens += sum(record["tokens"].values())
            handle.write(json.dumps(record) + "\n")
    info = obs.get("info") or {}
    solved = bool(info.get("resolved"))  # every family says at the end whether the task was solved
    return {
        "agent": arm_name(agent_name, profile),
        "profile": profile,
        "task_id": task["id"],
        "family": task["family"],
        "trust": "split" if task.get("trusted", True) else "sandboxed",  # how far the results deciding it can be forged
        "run": run,
        "seed": seed,
        "secret_fingerprint": fingerprint,
        # which task a procedural id named: "public" or the salt's fingerprint, never the salt (None: not procedural)
        "procedural_salt": task.get("salt"),
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
        # the machine decided part of it (steps the server did not count): left out of every statistic, counted apart
        "infra_failed": bool(infra),
        "infra_causes": infra,
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


Job = tuple[dict[str, Any], int]  # a task's listing entry, and which of its runs


class EpisodePool(Protocol):
    """Somewhere else to play the episodes (``env.eval.ray_pool``): the harness plans and records, the pool plays."""

    def play(
        self, agent_name: str, jobs: list[Job], profile: str, edit_gate: bool | None, finished: Callable[[dict[str, Any], str], None],
    ) -> str | None:
        """Play ``jobs``, calling ``finished(result, steps_jsonl)`` as each ends; the reason it stopped early, or None."""
        ...


def stop_reason(exc: BaseException) -> str:
    """Why no further episode starts after the model endpoint failed for good, naming the settings that chose it."""
    return f"the model endpoint failed ({exc if isinstance(exc, ModelUnavailable) else describe(exc)}; {endpoint()})"


def steps_path(out: Path, arm: str, task_id: str, run: int) -> Path:
    return out / "steps" / arm / task_id / f"run{run}.jsonl"


def listing(driver_factory: Callable[[], Driver], out: Path, task_ids: list[str] | None) -> dict[str, dict[str, Any]]:
    """The tasks' listing entries by id: every listed task, and the named ones not listed (procedural ids, generated
    on request). Makes ``out``, refuses it if it holds another secret's episodes, and exits naming unknown ids."""
    out.mkdir(parents=True, exist_ok=True)
    with driver_factory() as probe:
        check_secret(out, probe.fingerprint())
        tasks = {t["id"]: t for t in probe.tasks()}
        for task_id in task_ids or []:
            if task_id not in tasks and (found := probe.task(task_id)) is not None:
                tasks[task_id] = found  # a procedural id: generated on request
    unknown = [t for t in task_ids or [] if t not in tasks]
    if unknown:
        raise SystemExit(f"unknown task(s): {', '.join(unknown)}; available: {', '.join(tasks)}")
    check_salt(out, tasks)
    return tasks


@dataclass(frozen=True)
class Selection:
    """Which listed tasks an evaluation plays when it names none: one split's (the test split's by default: the
    evaluation set), of this family, these libraries and this source only when given, and at most ``per_library`` of each library
    (those first by a hash of ``seed`` and the id: a sample that is the same on every run)."""

    split: str = "test"
    libraries: tuple[str, ...] = ()
    source: str | None = None
    per_library: int | None = None
    seed: int = 0
    family: str | None = None


def evaluated(tasks: dict[str, dict[str, Any]], selection: Selection = Selection()) -> list[str]:
    """The ids ``selection`` keeps, in listing order (a server from before the splits names none: it listed only the
    test split's). SystemExit naming the libraries served when a library names none of them."""
    served = sorted({str(t["library"]) for t in tasks.values() if t.get("library")})
    unknown = [name for name in selection.libraries if name not in served]
    if unknown:
        raise SystemExit(f"no task of library {', '.join(unknown)} is served; libraries: {', '.join(served) or '(none: no ENV_CATALOG)'}")
    kept = [
        task_id for task_id, task in tasks.items()
        if task.get("split", "test") == selection.split
        and (not selection.libraries or task.get("library") in selection.libraries)
        and (selection.source is None or task.get("source") == selection.source)
        and (selection.family is None or task.get("family") == selection.family)
    ]  # fmt: skip
    if selection.per_library is None:
        return kept
    rank = {t: hashlib.sha256(f"{selection.seed}\0{t}".encode()).hexdigest() for t in kept}
    by_library: dict[str, list[str]] = {}
    for task_id in sorted(kept, key=rank.__getitem__):
        by_library.setdefault(str(tasks[task_id].get("library") or ""), []).append(task_id)
    sampled = {t for ids in by_library.values() for t in ids[: selection.per_library]}
    return [t for t in kept if t in sampled]


def serves(task: dict[str, Any], profile: str) -> bool:
    """Whether the task's family offers the profile's tools (a task without a profile list has only the default)."""
    return profile in (task.get("profiles") or {"default": {}})


def run(
    driver_factory: Callable[[], Driver], agent_name: str, task_ids: list[str] | None, runs: int, concurrency: int, out: Path,
    profile: str = "default", edit_gate: bool | None = None, pool: EpisodePool | None = None, selection: Selection = Selection(),
) -> list[dict[str, Any]]:
    """Play what ``out`` lacks of ``runs`` runs of each task, in threads of this process (each with its own driver
    from ``driver_factory``) or in ``pool``; ``driver_factory`` also lists the tasks and the secret's fingerprint."""
    problem = unready(AGENTS[agent_name])
    if problem:
        raise SystemExit(f"{arm_name(agent_name, profile)}: {problem}; nothing was played")
    tasks = listing(driver_factory, out, task_ids)
    chosen = task_ids or evaluated(tasks, selection)
    unsupported = [t for t in chosen if not serves(tasks[t], profile)]
    if unsupported:
        print(f"skipping {len(unsupported)} task(s) without the {profile!r} profile: {', '.join(unsupported)}", file=sys.stderr)
        chosen = [t for t in chosen if t not in unsupported]
    arm = arm_name(agent_name, profile)
    done = completed(out)
    results_file = out / "results.jsonl"
    if results_file.exists() and not results_file.read_bytes().endswith(b"\n") and results_file.stat().st_size:
        with results_file.open("a", encoding="utf-8") as handle:
            handle.write("\n")  # close a line a crash cut short; it is skipped when read
    jobs = [(tasks[t], r) for t in chosen for r in range(runs) if (arm, t, r) not in done]
    # said before the progress bar, so that a resumed run shows what it keeps, not only what it has left to play
    print(f"{arm}: {len(chosen) * runs - len(jobs)} already done, {len(jobs)} to play", file=sys.stderr)
    lock = threading.Lock()
    results: list[dict[str, Any]] = []
    stopped: list[str] = []  # why no further episode starts (the model endpoint's first failure)

    def finished(result: dict[str, Any], steps: str | None = None) -> None:
        with lock:
            if steps is not None:  # played elsewhere: its steps came back with it
                path = steps_path(out, arm, result["task_id"], result["run"])
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(steps, encoding="utf-8")
            with results_file.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(result) + "\n")  # one write: the episode counts once it is here
            results.append(result)
            bar.update(1)

    def job(item: Job) -> None:
        task, r = item
        if stopped:
            return
        try:
            with driver_factory() as driver:
                result = play(driver, agent_name, task, r, steps_path(out, arm, task["id"], r), profile, edit_gate)
        except (ModelUnavailable, openai.APIError) as exc:  # spent retries, bad auth, a bad request: every episode would
            with lock:
                stopped.append(stop_reason(exc))
            return
        finished(result)

    with tqdm(total=len(jobs), desc=arm, unit="episode", file=sys.stderr, disable=not jobs) as bar:
        if pool is not None:
            if jobs and (reason := pool.play(agent_name, jobs, profile, edit_gate, finished)):
                stopped.append(reason)
        else:
            with ThreadPoolExecutor(max_workers=max(1, concurrency)) as threads:
                list(threads.map(job, jobs))
    if stopped:
        raise SystemExit(
            f"stopped: {stopped[0]}; {len(results)} of {len(jobs)} episode(s) played, their results "
            f"are in {out / 'results.jsonl'}; run the same command again to play the rest"
        )
    return results
