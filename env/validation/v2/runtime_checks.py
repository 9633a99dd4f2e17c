"""Level 2 (runtime), the checks that play the server's episodes: it starts healthy; OpenEnv's own runtime graders;
its tools and tasks are the ones declared; the seed controls an episode; episodes are deterministic and isolated.
(What agent code can reach is in ``containment_checks``.)"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import NotRequired, TypedDict, cast

import httpx
from openenv.validation.graders import Subject
from openenv.validation.graders.runtime import NetworkPolicyGrader, ObservationSchemaGrader, RewardWellFormedGrader, StateContractGrader
from openenv.validation.report import CheckResult
from openenv.validation.runtime.collector import collect_runtime_evidence
from openenv.validation.runtime.contracts import RuntimePlanError, load_runtime_plan
from openenv.validation.runtime.scheduler import execute_graders
from openenv.validation.types import CheckStatus

from env.authoring.oracle import oracle_actions
from env.eval.drivers import HttpDriver
from env.families.registry import FAMILIES
from env.validation.player import JSON, Action, Body, Observation, normalised, play_http, plays_alone, rpc
from env.validation.v2.check import result, skip
from env.validation.v2.context import LIMITS, Run, each_task


class Start(Body):
    """An episode's start as ``runtime.seed_control`` compares it: the reset's answer, what the seed draws, the state."""

    seeded: NotRequired[list[Observation]]
    state: NotRequired[dict[str, JSON]]


class Isolation(TypedDict, total=False):
    can_execute: bool
    reason: str
    tier: str


class Health(TypedDict, total=False):
    """``GET /health``'s answer (the fields the checks read)."""

    status: str
    isolation: Isolation



def startup(run: Run) -> CheckResult:
    started = time.monotonic()
    try:
        health = httpx.get(run.url + "/health", timeout=30)
        body: Health = health.json()
    except (httpx.HTTPError, ValueError) as exc:
        return CheckResult(check_id="runtime.startup", status=CheckStatus.FAIL, evidence=[f"GET /health failed ({type(exc).__name__})"],
                           duration_s=time.monotonic() - started)
    isolation: Isolation = body.get("isolation", {})
    problems = [] if health.status_code == 200 and body.get("status") == "healthy" else [f"GET /health answered {health.status_code}"]
    if isolation.get("can_execute") is not True:
        problems.append(f"the sandbox cannot run code here: {isolation.get('reason', '')}"[:300])
    return result("runtime.startup", problems, {"isolation_tier": isolation.get("tier")},
                  "the server is healthy and its sandbox can run code", "start the server on a host whose sandbox holds", started)


def openenv_runtime_graders(run: Run, prior: CheckResult) -> list[CheckResult]:
    """OpenEnv's own runtime graders, on evidence OpenEnv's collector gathers from this server over /ws."""
    graders: list[RewardWellFormedGrader | ObservationSchemaGrader | StateContractGrader | NetworkPolicyGrader] = [
        RewardWellFormedGrader(), ObservationSchemaGrader(), StateContractGrader(), NetworkPolicyGrader()]
    if run.manifest is None or not hasattr(run.manifest, "execution"):
        return [skip(g.check_id, "unmet dependency: a v2 manifest (validation.execution) with its runtime plan") for g in graders]
    try:
        plan = load_runtime_plan(run.root, run.manifest.execution)
    except RuntimePlanError as exc:
        return [CheckResult(check_id=g.check_id, status=CheckStatus.FAIL, evidence=[str(exc)[:500]], duration_s=0.0) for g in graders]
    evidence = collect_runtime_evidence(run.url, plan, episode_timeout_s=run.manifest.resources.episode_timeout_s)
    subject = Subject(root=run.root, manifest=run.manifest, image_ref=None, running=None, outputs_dir=run.root / "outputs",
                      runtime_evidence=evidence)
    # No provider measures this server's network from outside: OpenEnv's scheduler skips network_policy and says so.
    results: list[CheckResult] = execute_graders(graders, subject, provider_capabilities=frozenset(), prior=[prior])
    return results


def tool_declaration_accuracy(run: Run) -> CheckResult:
    """The manifest's declared_tools are exactly the tools discovered over MCP (tools/list), over every family and
    profile; and each session's tools/list is its profile's tool list as /tasks publishes it."""
    started = time.monotonic()
    declared = set(run.manifest.capabilities.declared_tools) if run.manifest else set()
    discovered: set[str] = set()
    problems = []
    with httpx.Client(base_url=run.url, timeout=120) as http:
        for task_id in run.representatives([t["id"] for t in run.listed]):  # every family the server serves, whatever --tasks says
            listed = next(t for t in run.listed if t["id"] == task_id)
            for profile, spec in (listed.get("profiles") or {"default": {"tools": listed.get("tools", [])}}).items():
                session = rpc(http, "openenv/session/create", {"task_id": task_id, "seed": 1, "profile": profile})["session_id"]
                try:
                    names = [t["name"] for t in rpc(http, "tools/list", {"session_id": session})["tools"]]
                finally:
                    rpc(http, "openenv/session/close", {"session_id": session})
                published = [t["function"]["name"] for t in spec.get("tools", [])]
                if sorted(names) != sorted(published):
                    problems.append(f"{task_id}/{profile}: tools/list {sorted(names)} but /tasks publishes {sorted(published)}")
                discovered |= set(names)
    if not declared:
        problems.append("the manifest declares no tools (capabilities.declared_tools)")
    elif declared != discovered:
        problems.append(f"declared but not discovered: {sorted(declared - discovered)}; discovered but not declared: {sorted(discovered - declared)}")
    return result("runtime.tool_declaration_accuracy", problems, {"declared": len(declared), "discovered": len(discovered)},
                  f"the {len(declared)} declared tools are exactly the tools discovered over MCP (every family, every profile)",
                  "list the tools of every profile in capabilities.declared_tools", started)


def task_declaration_accuracy(run: Run) -> CheckResult:
    """declared_task_count (per family) and openenv.yaml's task list match what GET /tasks discovers."""
    started = time.monotonic()
    declared = dict(run.manifest.capabilities.declared_task_count) if run.manifest else {}
    discovered: dict[str, int] = {}
    for task in run.listed:
        discovered[task.get("family", "")] = discovered.get(task.get("family", ""), 0) + 1
    problems = [] if declared == discovered else [f"declared_task_count {declared}, discovered {discovered}"]
    listed_ids = sorted(t["id"] for t in run.listed)
    yaml_ids = sorted(t["id"] for t in run.raw_manifest.get("tasks", []))
    if yaml_ids != listed_ids:
        problems.append(f"openenv.yaml tasks {yaml_ids} differ from GET /tasks {listed_ids}")
    for entry in run.raw_manifest.get("tasks", []):
        served = next((t for t in run.listed if t["id"] == entry["id"]), None)
        if served is not None:
            for key in LIMITS:
                if key in entry and entry[key] != served.get(key):
                    problems.append(f"{entry['id']}: openenv.yaml says {key} {entry[key]}, the server {served.get(key)}")
    return result("runtime.task_declaration_accuracy", problems, {"declared": declared, "discovered": discovered},
                  f"{len(listed_ids)} tasks, as declared per family and listed (ids and limits) in openenv.yaml",
                  "make openenv.yaml's tasks and declared_task_count match GET /tasks", started)


def start(driver: HttpDriver, task_id: str, seed: int, seeded: list[Action]) -> Start:
    """An episode's start: the reset's observation, and the observations of the steps its family draws from the seed
    (``Family.seeded_actions``: a procedural task's logs)."""
    body = cast(Start, driver.start(task_id, seed))
    drawn: list[Observation] = [cast(Body, driver.send(action))["observation"] for action in seeded]
    if drawn:
        body = {**body, "seeded": drawn}
    body["state"] = driver.state()
    driver.send({"action_type": "give_up"})  # no episode left open
    return body


def seed_control(run: Run) -> CheckResult:
    """The seed given to reset controls the episode: the same seed gives the same start, the state reports it, and
    where a task draws from the seed (the procedural logs) another seed gives another start."""
    started = time.monotonic()
    problems, varies = [], []
    with HttpDriver(run.url, timeout_s=120) as driver:
        for task_id in run.representatives():
            task = run.task(task_id)
            seeded = FAMILIES[task.family].seeded_actions(task)
            first, second, other = (start(driver, task_id, s, seeded) for s in (11, 11, 12))
            if normalised(first) != normalised(second):
                problems.append(f"{task_id}: two resets with seed 11 start differently")
            state = first.pop("state")
            second.pop("state"), other.pop("state")
            if state.get("seed") != 11:
                problems.append(f"{task_id}: the state reports seed {state.get('seed')}, not 11")
            if normalised(first) != normalised(other):
                varies.append(task_id)
            if seeded and task_id not in varies:
                problems.append(f"{task_id}: seeds 11 and 12 give the same start, though {seeded[0]['action_type']} is drawn from the seed")
    return result("runtime.seed_control", problems, {"tasks": run.representatives(), "seed_changes_the_start": varies},
                  "the same seed gives the same start; the state reports the seed; seeded tasks start differently under another seed",
                  "derive every random draw from the reset's seed (and the server's secret)", started)


def mixed_actions(run: Run, task_id: str) -> list[Action]:
    """Exploration, a wrong step and the gold fix (``Family.smoke_actions``): the episode the determinism checks play twice."""
    task = run.task(task_id)
    return FAMILIES[task.family].smoke_actions(task)


def episode_determinism(run: Run) -> CheckResult:
    """The same seed and actions, twice: identical rewards, done flags, grades and observations (ids and timings aside)."""
    started = time.monotonic()

    def twice(task_id: str) -> str | None:
        actions = mixed_actions(run, task_id)
        first, second = play_http(run.url, task_id, 7, actions), play_http(run.url, task_id, 7, actions)
        if first.rewards != second.rewards or first.grade != second.grade:
            return f"{task_id}: rewards {first.rewards} grade {first.grade}, then {second.rewards} grade {second.grade}"
        for index, (a, b) in enumerate(zip(first.bodies, second.bodies, strict=False)):
            if normalised(a) != normalised(b):
                keys = sorted(k for k in a["observation"] if normalised(a["observation"].get(k)) != normalised(b["observation"].get(k)))
                return f"{task_id}: body {index} differs ({', '.join(keys) or 'envelope'})"
        return None

    tasks = run.representatives()
    problems = [p for p in each_task(tasks, twice) if p]
    return result("runtime.episode_determinism", problems, {"tasks": tasks},
                  "the same seed and actions gave identical episodes (rewards, done, grade, observations)",
                  "derive every draw from the seed and the server's secret; keep clocks out of observations", started)


def episode_isolation(run: Run) -> CheckResult:
    """Episodes do not see each other: concurrent episodes keep their ids, tasks and step counts; an episode played
    while another solves the same task sees what it sees alone; a request naming no episode reaches none."""
    started = time.monotonic()
    problems = []
    ids = run.task_ids

    with ThreadPoolExecutor(8) as pool:
        crossed = list(pool.map(lambda i: plays_alone(run.url, ids[i % len(ids)], i), range(16))).count(False)
    if crossed:
        problems.append(f"{crossed} of 16 concurrent episodes saw another's id, task or step count")
    task_id = ids[0]
    probe: list[Action] = FAMILIES[run.task(task_id).family].read_only_actions(run.task(task_id))[:1]
    alone = play_http(run.url, task_id, 5, probe)
    with ThreadPoolExecutor(2) as pool:
        solving = pool.submit(play_http, run.url, task_id, 5, oracle_actions(run.task(task_id)))
        beside = pool.submit(play_http, run.url, task_id, 5, probe)
        solving.result()
        if normalised(beside.result().bodies) != normalised(alone.bodies):
            problems.append(f"{task_id}: an episode played beside one that solved the task saw something else than alone")
    with httpx.Client(base_url=run.url, timeout=60) as anonymous:
        answer = anonymous.post("/step", json={"action": {"action_type": "give_up"}})
    reached = answer.status_code < 400 and bool(answer.json().get("observation", {}).get("episode_id"))
    if reached or (answer.status_code < 400 and not answer.json().get("observation", {}).get("error")):
        problems.append(f"POST /step naming no episode answered {answer.status_code} without refusing: it reached an episode")
    return result("runtime.episode_isolation", problems, {"concurrent": 16, "crossed": crossed, "anonymous_step_status": answer.status_code},
                  "16 concurrent episodes kept their identity; an episode beside a solving one saw what it sees alone; "
                  "a step naming no episode reached none", "key every episode by its own id; never fall back to another", started)
