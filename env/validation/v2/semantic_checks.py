"""Level 3 (semantic): what the grades mean. The oracle reaches the top, doing nothing sits well below it, every
canary grades at or below the floor, no observation shows the fix, the verifier and the episodes replay
identically, and a local server stays within its declared resources.

They read the episode grade (``grader_score``, in [0, 1], max 1.0): the verifier's verdict. The manifest's
``reward.range`` is the range of the dense step rewards, which ``runtime.reward_well_formed`` checks; no single step
reaches a "max" the way a one-shot verifier's reward does.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
from openenv.validation.report import CheckResult

from env.authoring.oracle import oracle_actions, overfit_actions
from env.families.registry import FAMILIES, Task
from env.validation.player import Action, play_http, play_ws
from env.validation.v2.canaries import canaries
from env.validation.v2.check import result, skip
from env.validation.v2.context import WORKERS, Run, each_task
from env.validation.v2.memory_envelope import Envelope

GRADE_MAX = 1.0  # the episode grade's top (grader_score lies in [0, 1])

def oracle_max(run: Run) -> CheckResult:
    """The oracle (the gold fix through the API) reaches the grade's max within the declared tolerance."""
    started = time.monotonic()
    tolerance = run.manifest.reward.oracle_tolerance if run.manifest else 0.0
    grades = dict(zip(run.task_ids, each_task(run.task_ids, lambda t: run.oracle(t).grade), strict=True))
    problems = [f"{t}: the oracle grades {g}, below {GRADE_MAX} - {tolerance}" for t, g in grades.items() if g is None or g < GRADE_MAX - tolerance - 1e-9]
    return result("semantic.oracle_max", problems, {"measured_on": "grader_score", "max": GRADE_MAX, "oracle_tolerance": tolerance,
                                                     "lowest_oracle_grade": min((g for g in grades.values() if g is not None), default=None), "grades": grades},
                  f"every oracle grades >= {GRADE_MAX - tolerance:g}", "make the gold fix reach the top grade (or fix the grader)", started)


def floor_gap(run: Run) -> CheckResult:
    """The measured floor (reset, then give_up at once) sits at least the declared margin below the max, and the
    reset's reward is 0.0."""
    started = time.monotonic()
    margin = run.manifest.reward.floor_margin if run.manifest else 0.0
    floors = dict(zip(run.task_ids, each_task(run.task_ids, lambda t: run.floor(t)), strict=True))
    problems = []
    for t, episode in floors.items():
        if episode.grade is None or GRADE_MAX - episode.grade < margin:
            problems.append(f"{t}: doing nothing grades {episode.grade}; the gap to {GRADE_MAX} is below {margin}")
        if episode.reset.get("reward") not in (0.0, 0, None):
            problems.append(f"{t}: the reset's reward is {episode.reset.get('reward')}")
    measured = {"measured_on": "grader_score", "max": GRADE_MAX, "floor_margin": margin,
                "highest_floor": max((e.grade for e in floors.values() if e.grade is not None), default=None)}
    return result("semantic.floor_gap", problems, measured, f"doing nothing grades {measured['highest_floor']} at most, {margin} or more below the max",
                  "award nothing for doing nothing", started)


def canary_floor(run: Run) -> CheckResult:
    """Every canary (degenerate policies, the recorded overfit, the attack classes) grades at or below the measured
    floor, and a degenerate policy's step rewards sum to <= 0. A repository task's recorded overfit (overfit.patch)
    is a partial fix that may pass a held-out test: it must stay unresolved and grade below the oracle."""
    started = time.monotonic()

    def play_one(item: tuple[str, str, list[Action]]) -> str | None:
        task_id, name, actions = item
        floor = run.floor(task_id).grade or 0.0
        episode = play_http(run.url, task_id, 1, actions)
        total = round(sum(episode.rewards), 6)
        last = episode.steps[-1]["observation"]
        if name == "overfit":
            # The family says how high its overfit may grade: a classic lookup table earns nothing, a repository
            # overfit (overfit.patch) may fix a held-out test, so it must stay unresolved and below the oracle.
            ceiling = max(floor, FAMILIES[run.task(task_id).family].overfit_ceiling(run.oracle(task_id).grade or 0.0))
            if last.get("info", {}).get("resolved") or episode.grade is None or episode.grade > ceiling:
                return f"{task_id}/overfit: resolved {last.get('info', {}).get('resolved')}, grade {episode.grade} (ceiling {ceiling:.6f})"
        elif episode.grade is None or episode.grade > floor or (name.startswith("degenerate.") and total > 0):
            return f"{task_id}/{name}: grade {episode.grade} (floor {floor}), rewards {total}"
        return None

    # one pool over every (task, canary): a repository task's canaries are the slow ones, so tasks do not queue behind it
    plays = [(task_id, name, actions) for task_id in run.task_ids for name, actions in canaries(run.task(task_id)).items()]
    with ThreadPoolExecutor(WORKERS) as pool:
        problems = [p for p in pool.map(play_one, plays) if p]
    played = len(plays)
    return result("semantic.canary_floor", problems, {"canaries_played": played, "tasks": len(run.task_ids)},
                  f"{played} canaries (degenerate policies, overfits, attacks) all graded at or below the floor",
                  "close the loophole the canary names", started)


def solution_markers(task: Task) -> list[str]:
    """Lines only the gold fix has: not in anything the task shows (its code, its tests)."""
    return FAMILIES[task.family].solution_lines(task)


def strings(value: object) -> list[str]:
    """Every text in a JSON value (keys included)."""
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in [str(k), *strings(v)]]
    if isinstance(value, list):
        return [t for v in value for t in strings(v)]
    return [value] if isinstance(value, str) else []


def exploration(run: Run, task_id: str) -> list[Action]:
    """Read-only steps that show the most an agent can see before it fixes anything."""
    task = run.task(task_id)
    return FAMILIES[task.family].read_only_actions(task)


def no_solution_leakage(run: Run) -> CheckResult:
    """No observation before a fix shows the solution: the lines only the gold fix has appear in no reset
    observation, no read-only step's observation, and not in GET /tasks/{id}."""
    started = time.monotonic()

    def scan(task_id: str) -> tuple[int, list[str]]:
        markers = solution_markers(run.task(task_id))
        steps = exploration(run, task_id)
        episode = play_http(run.url, task_id, 1, steps)  # ends with give_up, so that no episode stays open
        before_the_end = episode.bodies[:-1] if len(episode.steps) > len(steps) else episode.bodies  # give_up's answer aside
        seen = "\n".join(strings(before_the_end)) + "\n" + "\n".join(strings(httpx.get(f"{run.url}/tasks/{task_id}", timeout=60).json()))
        return len(markers), [f"{task_id}: an observation shows the fix's line {m!r}" for m in markers if m in seen]

    outcomes = each_task(run.task_ids, scan)
    problems = [p for _, leaks in outcomes for p in leaks]
    markers = sum(n for n, _ in outcomes)
    unmarked = [t for t, (n, _) in zip(run.task_ids, outcomes, strict=True) if n == 0]
    measured = {"solution_lines_searched": markers, "tasks_without_a_distinct_line": unmarked}
    return result("semantic.no_solution_leakage", problems, measured,
                  f"none of {markers} lines only the gold fixes have appears before a fix"
                  + (f" ({', '.join(unmarked)}: the fix deletes or reorders lines, nothing distinct to search)" if unmarked else ""),
                  "keep the fix out of descriptions, outputs and hints", started)


def verifier_determinism(run: Run) -> CheckResult:
    """The verifier gives the same verdict on the same submission: the oracle and the recorded overfit, replayed
    three times each, grade identically (the race task included: its verdict must not depend on the scheduler)."""
    started = time.monotonic()

    def thrice(task_id: str) -> str | None:
        task = run.task(task_id)
        plays = {"oracle": oracle_actions(task), "overfit": overfit_actions(task)}
        for name, actions in plays.items():
            if actions is None:
                continue
            verdicts = [(e.grade, e.steps[-1]["observation"].get("breakdown")) for e in (play_http(run.url, task_id, 3, actions) for _ in range(3))]
            if any(v != verdicts[0] for v in verdicts):
                return f"{task_id}/{name}: grades {[v[0] for v in verdicts]}"
        return None

    tasks = run.representatives()
    problems = [p for p in each_task(tasks, thrice) if p]
    return result("semantic.verifier_determinism", problems, {"tasks": tasks, "replays": 3},
                  "the oracle and the overfit, three times each, got identical grades and breakdowns",
                  "make the verdict independent of timing and scheduling", started)


def replayability(run: Run) -> CheckResult:
    """A recorded trajectory replays to the same outcome: the oracle episode, recorded over HTTP and serialised,
    replayed over /ws (OpenEnv's EnvClient wire) with the same seed, gives the same rewards, done flags and grade."""
    started = time.monotonic()

    def replay(task_id: str) -> str | None:
        recorded = json.loads(json.dumps({"task_id": task_id, "seed": 1, "actions": oracle_actions(run.task(task_id)) + [{"action_type": "give_up"}],
                                          "rewards": run.oracle(task_id).rewards, "grade": run.oracle(task_id).grade}))
        again = play_ws(run.url, recorded["task_id"], recorded["seed"], recorded["actions"])
        if again.rewards != recorded["rewards"] or again.grade != recorded["grade"]:
            return f"{task_id}: recorded rewards {recorded['rewards']} grade {recorded['grade']}, replayed {again.rewards} grade {again.grade}"
        return None

    tasks = run.representatives()
    problems = [p for p in each_task(tasks, replay) if p]
    return result("semantic.replayability", problems, {"tasks": tasks, "recorded_over": "HTTP", "replayed_over": "/ws"},
                  "the recorded oracle trajectories replayed over /ws to the same rewards and grades",
                  "make an episode a function of its task, seed and actions", started)

def resource_envelope(run: Run, envelope: Envelope) -> CheckResult:
    """Measured usage of the oracle replays stays within the declared resources: the server's process tree's peak
    memory within memory_mb, every oracle episode within episode_timeout_s."""
    started = time.monotonic()
    if envelope.pid is None:
        return skip("semantic.resource_envelope", "the server's process is not on this host (--url): its memory cannot be measured from here; "
                                                  "run validator.py without --url to measure it")
    declared = run.manifest.resources if run.manifest else None
    longest = max(run.oracle(t).seconds for t in run.task_ids)
    problems = []
    if declared and envelope.peak_mb > declared.memory_mb:
        problems.append(f"peak memory {envelope.peak_mb:.0f} MB exceeds the declared {declared.memory_mb} MB")
    if declared and longest > declared.episode_timeout_s:
        problems.append(f"an oracle episode took {longest:.0f} s, beyond the declared {declared.episode_timeout_s} s")
    return result("semantic.resource_envelope", problems, {"peak_memory_mb": round(envelope.peak_mb, 1), "longest_oracle_episode_s": round(longest, 2),
                                                           "cpu": "not measured (the declared cpu is a scheduling request)", "disk": "not measured"},
                  f"peak memory {envelope.peak_mb:.0f} MB and the longest oracle episode {longest:.1f} s are within the declaration",
                  "declare the resources the server uses", started)

