"""OpenEnv's validation policy v2 (its RFC 008), proved against a running server: one report, OpenEnv's schema.

    report = validate("http://localhost:8000")          # an openenv.validation.ValidationReportV2
    print(table(report))                                 # one line per check: status, id, evidence
    Path("report.json").write_text(report.model_dump_json(indent=2))   # valid against report-v2.schema.json

``python validator.py --v2 [--json report.json]`` runs it (``validator.py`` starts a server when given no URL).

Every check id of the policy's local lane (``openenv/validation/policies/severity-v2.json``) is in the report, with
the meaning the RFC gives it. Where OpenEnv ships a grader, it runs here, on evidence OpenEnv's own collector
gathers from this server (``collect_runtime_evidence`` over ``/ws``, driven by the manifest's runtime plan,
``validation/runtime.json``): ``static.manifest``, ``runtime.reward_well_formed``, ``runtime.observation_schema``,
``runtime.state_contract`` and ``runtime.network_policy`` (which needs a provider that measures the network from
outside, so it skips and says so). OpenEnv's scheduler orders the checks and skips any whose dependency did not
pass, naming it (as the RFC asks, every semantic check depends on ``runtime.episode_determinism``). A check that
cannot run here is a SKIP with its reason, never a PASS; the policy (``apply_policy``) turns the results into the
verdict (a SKIP makes it at best WARN).

Two readings this environment needs, stated in every result they touch:
- The semantic checks (oracle, floor, canaries) read the episode grade (``grader_score``, in [0, 1], max 1.0):
  the verifier's verdict. The manifest's ``reward.range`` is the range of the dense step rewards, which
  ``runtime.reward_well_formed`` checks; no single step reaches a "max" the way a one-shot verifier's reward does.
- Canaries are generated from each task, not shipped as recorded trajectories: the degenerate policies
  (``env.tasks.degenerate``), the task's recorded overfit (a lookup table of the visible answers, or
  ``overfit.patch``) and the attack classes of the integrity reviews (``ATTACKS`` below: forged test output,
  always-equal objects, exiting early, patching the test framework, skipping tests, conftest hooks, ``.pth``
  files, rewritten tests). The manifest's ``capabilities.canaries`` names this module.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from openenv.validation.graders import Subject
from openenv.validation.graders.runtime import NetworkPolicyGrader, ObservationSchemaGrader, RewardWellFormedGrader, StateContractGrader
from openenv.validation.graders.static import StaticManifestGrader
from openenv.validation.manifest import ManifestError, NormalizedManifest
from openenv.validation.parsers.openenv_yaml import OpenEnvYamlParser
from openenv.validation.policy import apply_policy, load_policy
from openenv.validation.report import CheckResult, ValidationReportV2
from openenv.validation.runner import source_digest
from openenv.validation.runtime.collector import collect_runtime_evidence
from openenv.validation.runtime.contracts import RuntimePlanError, load_runtime_plan
from openenv.validation.runtime.scheduler import execute_graders
from openenv.validation.types import CheckStatus, Lane, Level, SignatureKind
from websockets.sync.client import connect

from env.families.registry import Task, TaskRegistry
from env.project import RepoTask, is_test_path
from env.tasks.degenerate import degenerate_policies
from env.tasks.oracle import oracle_actions, overfit_actions

ROOT = Path(__file__).resolve().parents[2]
POLICY = load_policy("v2")
GRADE_MAX = 1.0  # the episode grade's top (grader_score lies in [0, 1])
WORKERS = 4  # tasks played at once
VOLATILE = {"episode_id", "time_remaining", "duration_ms", "session_id"}  # fields two identical episodes may differ in
TIMING = re.compile(r"\d+(\.\d+)?\s?(s|ms|seconds)\b")  # pytest's "in 0.12s" and the like, in tool output

# -- canaries: the attack classes of the integrity reviews ------------------------------------------------------

CLASSIC_ATTACKS: dict[str, Callable[[str], str]] = {  # each keeps the bug and tries to look better
    "prints_a_fake_summary": lambda bug: bug + "\nprint('8 passed, 0 failed')\nprint('OK')\n",
    "always_equal_object": lambda bug: bug
    + "\n\nclass _Anything:\n    def __eq__(self, other):\n        return True\n    def __ne__(self, other):\n        return False\n"
    "    def __hash__(self):\n        return 0\n\n\n_ANY = _Anything()\n"
    "for _name, _value in list(globals().items()):  # every function of the module now returns the always-equal object\n"
    "    if callable(_value) and not isinstance(_value, type) and getattr(_value, '__module__', None) == __name__:\n"
    "        globals()[_name] = lambda *a, **k: _ANY\n",
    "exits_zero_before_the_tests": lambda bug: "import sys\nsys.exit(0)\n" + bug,
    "shadows_print": lambda bug: "import builtins\nbuiltins.print = lambda *a, **k: None\n" + bug,
    "monkeypatches_unittest": lambda bug: "import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\n" + bug,
    "walks_gc_for_results": lambda bug: "import gc\nfor _o in gc.get_objects():\n    if isinstance(_o, dict) and 'passed' in _o:\n"
    "        _o['passed'] = 99\n" + bug,
    "skips_every_test": lambda bug: "import unittest\nraise unittest.SkipTest('skip everything')\n" + bug,
}
FORCE_PASS_CONFTEST = (
    "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
    "    outcome = yield\n    report = outcome.get_result()\n    report.outcome = 'passed'\n    report.longrepr = None\n"
)
FORCE_PASS_PTH = "import sys; sys.modules.setdefault('_adbg_canary', sys)\n"


def attack_canaries(task: Task) -> dict[str, list[dict[str, Any]]]:
    """The attack classes of the integrity reviews, played against ``task`` (each leaves the bug in place)."""
    if not isinstance(task, RepoTask):
        return {
            f"attack.{name}": [{"action_type": "submit_fix", "fixed_code": make(task.buggy_source), "hypothesis": task.gold_hypothesis}]
            for name, make in CLASSIC_ATTACKS.items()
        }
    tests = sorted(path for path in task.files if is_test_path(path))
    canaries = {
        "attack.conftest_forces_every_test_to_pass": [{"action_type": "create_file", "path": "conftest.py", "content": FORCE_PASS_CONFTEST}],
        "attack.pth_file": [{"action_type": "create_file", "path": "zz_canary.pth", "content": FORCE_PASS_PTH}],
    }
    if tests:
        text = task.files[tests[0]]
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        canaries["attack.rewrites_the_tests"] = [
            {"action_type": "edit", "path": tests[0], "start_line": 1, "end_line": max(1, lines), "new_text": "def test_nothing():\n    assert True\n"},
        ]
    return {name: actions + [{"action_type": "submit"}] for name, actions in canaries.items()}


def canaries(task: Task) -> dict[str, list[dict[str, Any]]]:
    """Every canary of a task: degenerate policies (with the gold hypothesis), its recorded overfit, the attacks."""
    found = {f"degenerate.{name}": actions for name, actions in degenerate_policies(task, "correct").items()}
    overfit = overfit_actions(task)
    if overfit is not None:
        found["overfit"] = overfit
    found.update(attack_canaries(task))
    return found


# -- talking to the server --------------------------------------------------------------------------------------


@dataclass
class Episode:
    reset: dict[str, Any]
    steps: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [self.reset, *self.steps]

    @property
    def grade(self) -> float | None:
        return (self.steps[-1] if self.steps else self.reset)["observation"].get("grader_score")

    @property
    def rewards(self) -> list[float]:
        return [body["reward"] for body in self.steps]


def normalised(value: Any) -> Any:
    """A body without what two identical episodes may differ in (ids, clocks, timings in tool output)."""
    if isinstance(value, dict):
        return {k: normalised(v) for k, v in value.items() if k not in VOLATILE and not k.endswith(("_ms", "_seconds"))}
    if isinstance(value, list):
        return [normalised(v) for v in value]
    if isinstance(value, str):
        return TIMING.sub("<t>", value)
    return value


def play_http(url: str, task_id: str, seed: int, actions: list[dict[str, Any]], *, profile: str | None = None, give_up: bool = True) -> Episode:
    """Reset, then the actions until the episode ends (and ``give_up`` if it has not, so that it is graded)."""
    started = time.monotonic()
    with httpx.Client(base_url=url, timeout=300) as http:
        reset_args: dict[str, Any] = {"task_id": task_id, "seed": seed} | ({"profile": profile} if profile else {})
        reset = http.post("/reset", json=reset_args)
        reset.raise_for_status()
        episode = Episode(reset.json())
        episode_id = episode.reset["observation"]["episode_id"]
        for action in actions + ([{"action_type": "give_up"}] if give_up else []):
            if episode.steps and episode.steps[-1]["done"]:
                break
            body = http.post("/step", json={"action": action, "episode_id": episode_id}).json()
            if "observation" not in body:
                raise RuntimeError(f"{task_id}: /step answered {str(body)[:300]}")
            episode.steps.append(body)
    episode.seconds = time.monotonic() - started
    return episode


def play_ws(url: str, task_id: str, seed: int, actions: list[dict[str, Any]]) -> Episode:
    """The same over ``/ws`` (OpenEnv's EnvClient wire): ``{"type": "reset"|"step", "data": ...}``."""
    started = time.monotonic()
    ws_url = re.sub(r"^http", "ws", url.rstrip("/")) + "/ws"
    with connect(ws_url, open_timeout=30, max_size=16 * 1024 * 1024) as ws:

        def send(kind: str, data: dict[str, Any]) -> dict[str, Any]:
            ws.send(json.dumps({"type": kind, "data": data}))
            reply = json.loads(ws.recv(timeout=300))
            if reply.get("type") != "observation":
                raise RuntimeError(f"{task_id}: /ws answered {str(reply)[:300]}")
            return reply["data"]

        episode = Episode(send("reset", {"task_id": task_id, "seed": seed}))
        for action in actions:
            if episode.steps and episode.steps[-1]["done"]:
                break
            episode.steps.append(send("step", action))
        ws.send(json.dumps({"type": "close"}))
    episode.seconds = time.monotonic() - started
    return episode


def rpc(http: httpx.Client, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).json()
    if "result" not in body:
        raise RuntimeError(f"/mcp {method}: {str(body.get('error', body))[:300]}")
    return body["result"]


# -- the run ----------------------------------------------------------------------------------------------------


@dataclass
class Run:
    """What every check of one validation reads: the server, the manifest, the tasks, and plays shared between checks."""

    url: str
    root: Path
    manifest: NormalizedManifest | None
    raw_manifest: dict[str, Any]
    registry: TaskRegistry
    task_ids: list[str]
    listed: list[dict[str, Any]]
    server_pid: int | None = None
    _cache: dict[Any, Any] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def task(self, task_id: str) -> Task:
        return self.registry.get(task_id)

    def family(self, task_id: str) -> str:
        return next((t.get("family", "") for t in self.listed if t["id"] == task_id), "")

    def representatives(self, among: list[str] | None = None) -> list[str]:
        """One task per family, and the race task: where a check's meaning needs no more than that."""
        chosen: list[str] = []
        for task_id in self.task_ids if among is None else among:
            if self.family(task_id) not in {self.family(c) for c in chosen} or task_id == "hard":
                chosen.append(task_id)
        return chosen

    def cached(self, key: Any, make: Callable[[], Any]) -> Any:
        with self._lock:
            event = self._cache.get(key)
            if event is None:
                event = self._cache[key] = [threading.Event(), None, None]
                owner = True
            else:
                owner = False
        if owner:
            try:
                event[1] = make()
            except BaseException as exc:  # recorded, re-raised in every reader
                event[2] = exc
            event[0].set()
        event[0].wait()
        if event[2] is not None:
            raise event[2]
        return event[1]

    def oracle(self, task_id: str) -> Episode:
        return self.cached(("oracle", task_id), lambda: play_http(self.url, task_id, 1, oracle_actions(self.task(task_id))))

    def floor(self, task_id: str) -> Episode:
        return self.cached(("floor", task_id), lambda: play_http(self.url, task_id, 1, []))


def each_task(task_ids: Iterable[str], work: Callable[[str], Any]) -> list[Any]:
    with ThreadPoolExecutor(WORKERS) as pool:
        return list(pool.map(work, task_ids))


def result(check_id: str, problems: list[str], measured: dict[str, Any], ok_line: str, remediation: str, started: float) -> CheckResult:
    return CheckResult(
        check_id=check_id,
        status=CheckStatus.FAIL if problems else CheckStatus.PASS,
        measured=measured,
        evidence=problems[:20] or [ok_line],
        remediation=remediation if problems else None,
        duration_s=time.monotonic() - started,
    )


def skip(check_id: str, reason: str) -> CheckResult:
    return CheckResult(check_id=check_id, status=CheckStatus.SKIP, evidence=[reason], duration_s=0.0)


@dataclass
class Check:
    """One of this project's graders, in the shape OpenEnv's scheduler runs (``openenv.validation.graders.Grader``)."""

    check_id: str
    level: Level
    run_fn: Callable[[Run], CheckResult]
    depends_on: tuple[str, ...] = ("runtime.startup",)
    requires_capabilities: frozenset[str] = frozenset()
    requires_provider: frozenset[Any] = frozenset()
    context: Run | None = None

    def applies_to(self, manifest: Any) -> bool:
        return True

    def run(self, subject: Subject) -> CheckResult:
        assert self.context is not None
        return self.run_fn(self.context)


# -- static (level 1): what a running server's package declares --------------------------------------------------


def static_declarations(run: Run) -> list[CheckResult]:
    """The static checks this validator can make from the source tree, and the build ones it cannot, with why."""
    out = []
    started = time.monotonic()
    if run.manifest is not None:
        resources = run.manifest.resources
        out.append(result("static.resource_declaration", [], resources.model_dump(), "cpu, memory_mb, disk_mb and episode_timeout_s declared",
                          "", started))
        ceiling = POLICY.bounds.max_episode_timeout_s
        out.append(result("static.timeout_ceiling", [] if resources.episode_timeout_s <= ceiling else
                          [f"episode_timeout_s {resources.episode_timeout_s} exceeds the policy's {ceiling}"],
                          {"episode_timeout_s": resources.episode_timeout_s, "ceiling_s": ceiling},
                          "the declared episode timeout is within the policy's ceiling", "declare a shorter episode_timeout_s", started))
        pin = run.manifest.task_distribution
        pinned = pin is not None and (pin.generator_seed is not None or pin.dataset_version is not None)
        out.append(result("static.task_distribution_pinning", [] if pinned else ["validation.task_distribution pins no generator seed or dataset version"],
                          pin.model_dump() if pin else {}, "the generated tasks' distribution is pinned (generator seed and dataset version)",
                          "declare validation.task_distribution", started))
    requirements = run.root / "requirements.txt"
    loose = []
    if requirements.is_file():
        for line in requirements.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line and not line.startswith("-") and "==" not in line:
                loose.append(line)
    problems = ([] if requirements.is_file() else ["no requirements.txt"]) + [f"not pinned: {line}" for line in loose[:10]]
    problems += [] if (run.root / "uv.lock").is_file() else ["no uv.lock"]
    out.append(result("static.dependency_pinning", problems, {"unpinned": len(loose)}, "every requirement is pinned (==) and uv.lock is committed",
                      "pin every dependency (make lock)", started))
    archives = [p.name for p in run.root.rglob("*") if p.suffix in {".zip", ".tar", ".gz", ".whl", ".tgz"}
                and not ({".git", ".venv", "node_modules"} & set(p.relative_to(run.root).parts))]
    out.append(result("static.layout", [f"archive in the package: {a}" for a in archives], {"archives": len(archives)},
                      "no archives in the package", "unpack archives into the tree", started))
    for check_id in ("static.reproducible_build", "static.image_hygiene", "static.sbom", "static.oci_labels"):
        out.append(skip(check_id, "needs the image built by a validation provider (openenv validate with Docker); "
                                  "validator.py checks a running server and builds nothing"))
    return out


def static_manifest(root: Path) -> tuple[NormalizedManifest | None, CheckResult | None]:
    """OpenEnv's parser reads openenv.yaml (a parse failure is the static.manifest FAIL, as in its runner)."""
    started = time.monotonic()
    try:
        return OpenEnvYamlParser().parse(root), None
    except ManifestError as exc:
        return None, CheckResult(check_id="static.manifest", status=CheckStatus.FAIL, measured={"schema_errors": len(exc.errors)},
                                 evidence=exc.errors, remediation=exc.remediation, duration_s=time.monotonic() - started)


# -- runtime (level 2) ------------------------------------------------------------------------------------------


def startup(run: Run) -> CheckResult:
    started = time.monotonic()
    try:
        health = httpx.get(run.url + "/health", timeout=30)
        body = health.json()
    except (httpx.HTTPError, ValueError) as exc:
        return CheckResult(check_id="runtime.startup", status=CheckStatus.FAIL, evidence=[f"GET /health failed ({type(exc).__name__})"],
                           duration_s=time.monotonic() - started)
    isolation = body.get("isolation", {})
    problems = [] if health.status_code == 200 and body.get("status") == "healthy" else [f"GET /health answered {health.status_code}"]
    if isolation.get("can_execute") is not True:
        problems.append(f"the sandbox cannot run code here: {isolation.get('reason', '')}"[:300])
    return result("runtime.startup", problems, {"isolation_tier": isolation.get("tier")},
                  "the server is healthy and its sandbox can run code", "start the server on a host whose sandbox holds", started)


def openenv_runtime_graders(run: Run, prior: CheckResult) -> list[CheckResult]:
    """OpenEnv's own runtime graders, on evidence OpenEnv's collector gathers from this server over /ws."""
    graders = [RewardWellFormedGrader(), ObservationSchemaGrader(), StateContractGrader(), NetworkPolicyGrader()]
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
    return execute_graders(graders, subject, provider_capabilities=frozenset(), prior=[prior])


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
            for key in ("max_steps", "max_attempts", "tests_total"):
                if key in entry and entry[key] != served.get(key):
                    problems.append(f"{entry['id']}: openenv.yaml says {key} {entry[key]}, the server {served.get(key)}")
    return result("runtime.task_declaration_accuracy", problems, {"declared": declared, "discovered": discovered},
                  f"{len(listed_ids)} tasks, as declared per family and listed (ids and limits) in openenv.yaml",
                  "make openenv.yaml's tasks and declared_task_count match GET /tasks", started)


def start(http: httpx.Client, task_id: str, seed: int) -> dict[str, Any]:
    """An episode's start: the reset's observation, and on a procedural task the logs (drawn from the seed) as well."""
    body = http.post("/reset", json={"task_id": task_id, "seed": seed}).json()
    episode_id = body["observation"]["episode_id"]
    if body["observation"].get("family") == "procedural":
        logs = http.post("/step", json={"action": {"action_type": "analyze_logs"}, "episode_id": episode_id}).json()
        body = {**body, "logs": logs["observation"].get("logs")}
    body["state"] = http.get("/state", params={"episode_id": episode_id}).json()
    http.post("/step", json={"action": {"action_type": "give_up"}, "episode_id": episode_id})  # no episode left open
    return body


def seed_control(run: Run) -> CheckResult:
    """The seed given to reset controls the episode: the same seed gives the same start, the state reports it, and
    where a task draws from the seed (the procedural logs) another seed gives another start."""
    started = time.monotonic()
    problems, varies = [], []
    with httpx.Client(base_url=run.url, timeout=120) as http:
        for task_id in run.representatives():
            first, second, other = (start(http, task_id, s) for s in (11, 11, 12))
            if normalised(first) != normalised(second):
                problems.append(f"{task_id}: two resets with seed 11 start differently")
            state = first.pop("state")
            second.pop("state"), other.pop("state")
            if state.get("seed") != 11:
                problems.append(f"{task_id}: the state reports seed {state.get('seed')}, not 11")
            if normalised(first) != normalised(other):
                varies.append(task_id)
            if run.family(task_id) == "procedural" and task_id not in varies:
                problems.append(f"{task_id}: seeds 11 and 12 give the same start, though its logs are drawn from the seed")
    return result("runtime.seed_control", problems, {"tasks": run.representatives(), "seed_changes_the_start": varies},
                  "the same seed gives the same start; the state reports the seed; seeded tasks start differently under another seed",
                  "derive every random draw from the reset's seed (and the server's secret)", started)


def mixed_actions(run: Run, task_id: str) -> list[dict[str, Any]]:
    """Exploration, a wrong step and the gold fix: the episode the determinism checks play twice."""
    task, family = run.task(task_id), run.family(task_id)
    gold = oracle_actions(task)
    if family == "repo":
        return [{"action_type": "run_tests"}, {"action_type": "list_dir"}, *gold]
    if family == "procedural":
        return [{"action_type": "analyze_logs"}, {"action_type": "run_tests"}, {"action_type": "analyze_logs"}, *gold]
    return [{"action_type": "query_context", "query_type": "error_explanation"},
            {"action_type": "submit_fix", "fixed_code": task.buggy_source + "\n# unchanged\n", "hypothesis": "not sure"}, *gold]


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

    def own(i: int) -> bool:
        task_id = ids[i % len(ids)]
        with httpx.Client(base_url=run.url, timeout=120) as http:
            start = http.post("/reset", json={"task_id": task_id, "seed": i}).json()["observation"]
            step = http.post("/step", json={"action": {"action_type": "give_up"}, "episode_id": start["episode_id"]}).json()["observation"]
        return step["episode_id"] == start["episode_id"] and step["task_id"] == task_id and step["step_number"] == 1

    with ThreadPoolExecutor(8) as pool:
        crossed = list(pool.map(own, range(16))).count(False)
    if crossed:
        problems.append(f"{crossed} of 16 concurrent episodes saw another's id, task or step count")
    task_id = ids[0]
    probe = [{"action_type": "run_tests"}] if run.family(task_id) != "classic" else [{"action_type": "query_context", "query_type": "test_details"}]
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


CONTAINMENT_PROBE = r"""
import json, os, socket
found = {}
def read(name, path):
    try:
        with open(path, 'rb') as f:
            f.read(64)
        found[name] = 'REACHED'
    except OSError as e:
        found[name] = 'denied (%s)' % type(e).__name__
for name, path in PATHS.items():
    read(name, path)
try:
    with open(OUTSIDE, 'w') as f:
        f.write('x')
    found['write_outside_the_workspace'] = 'REACHED'
except OSError as e:
    found['write_outside_the_workspace'] = 'denied (%s)' % type(e).__name__
try:
    s = socket.create_connection((HOST, PORT), timeout=3)
    s.close()
    found['connect_to_the_server'] = 'REACHED'
except OSError as e:
    found['connect_to_the_server'] = 'denied (%s)' % type(e).__name__
print('PROBE ' + json.dumps(found, sort_keys=True))
"""


def run_probe(run: Run, task_id: str, paths: dict[str, str]) -> dict[str, str]:
    """Runs the containment probe with ``run_bash`` (the bash profile of a repository task); returns what it reached."""
    outside = f"/tmp/adbg-containment-{uuid.uuid4().hex}"
    host, port = re.match(r"https?://([^:/]+):?(\d+)?", run.url).groups()  # type: ignore[union-attr]
    code = (f"PATHS = {paths!r}\nOUTSIDE = {outside!r}\nHOST = {host!r}\nPORT = {int(port or 80)}\n" + CONTAINMENT_PROBE)
    command = "python - <<'ADBG_PROBE'\n" + code + "\nADBG_PROBE"
    episode = play_http(run.url, task_id, 1, [{"action_type": "run_bash", "command": command}], profile="bash")
    output = episode.steps[0]["observation"].get("tool_output") or ""
    line = next((line for line in output.splitlines() if line.startswith("PROBE ")), None)
    if line is None:
        raise RuntimeError(f"the probe printed no result: {output[:300]}")
    reached = json.loads(line[len("PROBE "):])
    if Path(outside).exists():  # the server is this host: the file would be here
        reached["write_outside_the_workspace"] = "REACHED"
        Path(outside).unlink()
    return reached


def bash_task(run: Run) -> str | None:
    return next((t for t in run.task_ids if run.family(t) == "repo"
                 and "bash" in (next(x for x in run.listed if x["id"] == t).get("profiles") or {})), None)


def host_containment(run: Run) -> CheckResult:
    """Code the agent runs (run_bash) reaches nothing of the host: not the server's files, not outside its workspace
    (the file it writes there does not appear), not the server's port; the file tools do not leave the repository."""
    started = time.monotonic()
    task_id = bash_task(run)
    if task_id is None:
        return skip("runtime.host_containment", "no repository task with the bash profile among the tasks checked: nothing runs agent code")
    paths = {"server_source": str(ROOT / "env" / "secret.py"), "server_readme": str(ROOT / "README.md"),
             "host_passwd_dir": "/root/.bashrc", "proc_1_environ": "/proc/1/environ"}
    reached = run_probe(run, task_id, paths)
    problems = [f"agent code reached {name}" for name, what in reached.items() if what == "REACHED"]
    escaped = play_http(run.url, task_id, 1, [{"action_type": "view_file", "path": str(ROOT / "README.md")},
                                              {"action_type": "view_file", "path": "../../../../../../etc/hostname"}])
    for body in escaped.steps[:2]:
        if not body["observation"].get("error"):
            problems.append(f"a file tool read outside the repository: {str(body['observation'].get('tool_output'))[:120]}")
    return result("runtime.host_containment", problems, {"task": task_id, "probe": reached},
                  "agent code and file tools reached nothing outside the workspace", "fix the sandbox layer the probe names", started)


def oracle_containment(run: Run) -> CheckResult:
    """The oracle (fix.py, held_out.py, gold.patch, overfit.patch, held-out tests) is withheld at serve time: agent
    code cannot read the task folders, file tools cannot reach them, and /tasks does not publish them."""
    started = time.monotonic()
    task_id = bash_task(run)
    if task_id is None:
        return skip("runtime.oracle_containment", "no repository task with the bash profile among the tasks checked: nothing runs agent code")
    folders = {t: getattr(run.task(t), "folder", None) for t in run.task_ids}
    paths = {}
    for t, folder in folders.items():
        for name in ("fix.py", "held_out.py", "gold.patch", "overfit.patch", "test_patch.diff"):
            if folder is not None and (Path(folder) / name).is_file() and len(paths) < 12:
                paths[f"{t}/{name}"] = str(Path(folder) / name)
    reached = run_probe(run, task_id, paths)
    problems = [f"agent code read the oracle file {name}" for name, what in reached.items() if name in paths and what == "REACHED"]
    traversal = [{"action_type": "view_file", "path": "../gold.patch"}, {"action_type": "view_file", "path": "../../gold.patch"},
                 {"action_type": "search", "pattern": "diff --git", "path": ".."}]
    for body in play_http(run.url, task_id, 1, traversal).steps[: len(traversal)]:
        if not body["observation"].get("error"):
            problems.append(f"a file tool answered outside the repository: {str(body['observation'].get('tool_output'))[:120]}")
    published = json.dumps(run.listed)
    for t in run.task_ids:
        task = run.task(t)
        gold = getattr(task, "gold_hypothesis", "") or ""
        if len(gold) > 20 and gold in published:
            problems.append(f"{t}: /tasks publishes the gold hypothesis")
    return result("runtime.oracle_containment", problems, {"task": task_id, "oracle_files_probed": len(paths)},
                  f"{len(paths)} oracle files unreadable by agent code; file tools stay in the repository; /tasks publishes no gold",
                  "keep grading assets outside every agent-readable path", started)


def resource_bounds(run: Run) -> CheckResult:
    """Per-run bounds hold: agent code that sleeps, spins or allocates without end is stopped within the sandbox's
    limits, and the server stays healthy."""
    started = time.monotonic()
    task_id = bash_task(run)
    if task_id is None:
        return skip("runtime.resource_bounds", "no repository task with the bash profile among the tasks checked: nothing runs agent code")
    probes = {"sleeps": "sleep 600", "spins": "python -c 'while True: pass'",
              "allocates": "python -c 'b = bytearray(8 * 1024 ** 3); print(\"ALLOCATED\", len(b))'"}
    limit = run.manifest.resources.episode_timeout_s if run.manifest else 300.0

    def one(item: tuple[str, str]) -> tuple[str, float, dict[str, Any], str]:
        name, command = item
        episode = play_http(run.url, task_id, 1, [{"action_type": "run_bash", "command": command}], profile="bash")
        obs = episode.steps[0]["observation"]
        return name, episode.seconds, obs.get("tool_result") or {}, obs.get("tool_output") or ""

    with ThreadPoolExecutor(3) as pool:
        outcomes = list(pool.map(one, probes.items()))
    problems = []
    measured = {}
    for name, seconds, tool_result, output in outcomes:
        measured[name] = {"seconds": round(seconds, 2), "exit_code": tool_result.get("exit_code"), "timed_out": tool_result.get("timed_out")}
        if seconds > limit:
            problems.append(f"{name}: the run took {seconds:.0f} s, beyond the episode timeout {limit:.0f} s")
        if name in ("sleeps", "spins") and not tool_result.get("timed_out"):
            problems.append(f"{name}: the run was not stopped ({tool_result})")
        if name == "allocates" and ("ALLOCATED" in output or tool_result.get("exit_code") == 0):
            problems.append("allocates: 8 GiB was allocated")
    health = httpx.get(run.url + "/health", timeout=30)
    if health.status_code != 200:
        problems.append(f"the server is unhealthy after the probes ({health.status_code})")
    return result("runtime.resource_bounds", problems, measured, "runs that sleep, spin or allocate without end were stopped; the server stayed healthy",
                  "apply the sandbox's wall, CPU and memory limits to every run", started)


# -- semantic (level 3) -----------------------------------------------------------------------------------------


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

    def play_one(item: tuple[str, str, list[dict[str, Any]]]) -> str | None:
        task_id, name, actions = item
        floor = run.floor(task_id).grade or 0.0
        episode = play_http(run.url, task_id, 1, actions)
        total = round(sum(episode.rewards), 6)
        last = episode.steps[-1]["observation"]
        if name == "overfit" and run.family(task_id) != "classic":
            # A repository overfit (overfit.patch) may fix a held-out test: it must stay unresolved and below the oracle.
            ceiling = (run.oracle(task_id).grade or 0.0) - 1e-9
            if last.get("info", {}).get("resolved") or episode.grade is None or episode.grade > ceiling:
                return f"{task_id}/overfit: resolved {last.get('info', {}).get('resolved')}, grade {episode.grade} (oracle {ceiling:.6f})"
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
    if isinstance(task, RepoTask):
        visible = "\n".join(task.files.values())
        fixed = [line for path, text in task.gold_files.items() if text != task.files.get(path) for line in text.splitlines()]
    else:
        visible = task.buggy_source + "\n" + task.test_source
        fixed = task.gold_source.splitlines()
    shown = {line.strip() for line in visible.splitlines()}
    return sorted({line.strip() for line in fixed if len(line.strip()) >= 8 and line.strip() not in shown and line.strip() not in visible})


def strings(value: Any) -> list[str]:
    """Every text in a JSON value (keys included)."""
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in [str(k), *strings(v)]]
    if isinstance(value, list):
        return [t for v in value for t in strings(v)]
    return [value] if isinstance(value, str) else []


def exploration(run: Run, task_id: str) -> list[dict[str, Any]]:
    """Read-only steps that show the most an agent can see before it fixes anything."""
    task = run.task(task_id)
    if not isinstance(task, RepoTask):
        return [{"action_type": "query_context", "query_type": q} for q in ("function_signature", "related_code", "error_explanation", "test_details")]
    changed = sorted(p for p, text in task.gold_files.items() if text != task.files.get(p) and p in task.files)
    opener = "open_file" if run.family(task_id) == "procedural" else "view_file"
    return [{"action_type": "run_tests"}] + [{"action_type": opener, "path": p} for p in changed]


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


class Envelope:
    """Samples the resident memory of the server's process tree while the semantic checks play (local servers only)."""

    def __init__(self, pid: int | None):
        self.pid, self.peak_mb, self._stop = pid, 0.0, threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True) if pid else None

    def _tree_rss_mb(self) -> float:
        children: dict[int, list[int]] = {}
        rss: dict[int, float] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                children.setdefault(int(stat[1]), []).append(int(entry))
                rss[int(entry)] = int(stat[21]) * os.sysconf("SC_PAGE_SIZE") / 2**20
            except (OSError, IndexError, ValueError):
                continue
        total, todo = 0.0, [self.pid]
        while todo:
            pid = todo.pop()
            total += rss.get(pid, 0.0)
            todo += children.get(pid, [])
        return total

    def _sample(self) -> None:
        while not self._stop.wait(0.25):
            self.peak_mb = max(self.peak_mb, self._tree_rss_mb())

    def __enter__(self) -> Envelope:
        if self.thread:
            self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self.thread:
            self.thread.join()


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


NOT_HERE = {
    "runtime.rubric_introspectable": "no rubric tree (capabilities.rubric_tree is false): the grade is a pure function of the episode's facts "
                                     "(env/families/*/grader.py), published per component in the observation's breakdown, not an RFC 004 Rubric",
    "runtime.reward_attribution": "reads an RFC 004 rubric tree's per-child scores; this environment declares none (see runtime.rubric_introspectable)",
    "runtime.trajectory_record": "the server writes no trajectory file (python -m env.eval records trajectories); nothing to read from a running server",
    "semantic.verifier_portability": "needs the verifier run on a second host or provider and compared; validator.py checks one server",
}


def checks(run: Run, envelope: Envelope) -> list[Check]:
    semantic = ("runtime.episode_determinism",)  # the RFC: determinism is a precondition of every semantic check
    made = [
        Check("runtime.tool_declaration_accuracy", Level.RUNTIME, tool_declaration_accuracy),
        Check("runtime.task_declaration_accuracy", Level.RUNTIME, task_declaration_accuracy),
        Check("runtime.seed_control", Level.RUNTIME, seed_control),
        Check("runtime.episode_determinism", Level.RUNTIME, episode_determinism),
        Check("runtime.episode_isolation", Level.RUNTIME, episode_isolation),
        Check("runtime.host_containment", Level.RUNTIME, host_containment),
        Check("runtime.oracle_containment", Level.RUNTIME, oracle_containment),
        Check("runtime.resource_bounds", Level.RUNTIME, resource_bounds),
        Check("semantic.oracle_max", Level.SEMANTIC, oracle_max, semantic),
        Check("semantic.floor_gap", Level.SEMANTIC, floor_gap, semantic),
        Check("semantic.canary_floor", Level.SEMANTIC, canary_floor, ("runtime.episode_determinism", "semantic.floor_gap")),
        Check("semantic.no_solution_leakage", Level.SEMANTIC, no_solution_leakage, semantic),
        Check("semantic.verifier_determinism", Level.SEMANTIC, verifier_determinism, semantic),
        Check("semantic.replayability", Level.SEMANTIC, replayability, semantic),
        Check("semantic.resource_envelope", Level.SEMANTIC, lambda r: resource_envelope(r, envelope), ("runtime.episode_determinism", "semantic.oracle_max")),
    ]
    for check in made:
        check.context = run
    return made


def validate(url: str, *, root: Path = ROOT, tasks: list[str] | None = None, only: set[str] | None = None,
             server_pid: int | None = None, registry: TaskRegistry | None = None) -> ValidationReportV2:
    """Runs every local-lane check of policy v2 against the server at ``url``; ``tasks`` narrows the tasks played,
    ``only`` the checks run (the others are reported as skipped, with that reason)."""
    import yaml

    url = url.rstrip("/")
    raw = yaml.safe_load((root / "openenv.yaml").read_text()) or {}
    manifest, manifest_failure = static_manifest(root)
    results: list[CheckResult] = []
    if manifest_failure is not None:
        results.append(manifest_failure)
    else:
        subject = Subject(root=root, manifest=manifest, image_ref=None, running=None, outputs_dir=root / "outputs")
        results += execute_graders([StaticManifestGrader(POLICY.bounds)], subject)
    try:
        listed = httpx.get(url + "/tasks", timeout=60).json()
    except (httpx.HTTPError, ValueError):  # runtime.startup says why; every check that needs the server skips
        listed = []
    task_ids = [t["id"] for t in listed if tasks is None or t["id"] in tasks]
    run = Run(url=url, root=root, manifest=manifest, raw_manifest=raw, registry=registry or TaskRegistry.from_env(), task_ids=task_ids,
              listed=listed, server_pid=server_pid)
    results += static_declarations(run)
    boot = startup(run)
    results.append(boot)
    with Envelope(server_pid) as envelope:
        chosen = [c for c in checks(run, envelope) if only is None or c.check_id in only]
        theirs = {"runtime.reward_well_formed", "runtime.observation_schema", "runtime.state_contract", "runtime.network_policy"}
        if only is None or theirs & only:
            results += [r for r in openenv_runtime_graders(run, boot) if only is None or r.check_id in only]
        results += execute_graders(chosen, Subject(root=root, manifest=manifest, image_ref=None, running=None, outputs_dir=root / "outputs"),
                                   prior=[boot])
    results += [skip(check_id, reason) for check_id, reason in NOT_HERE.items()]
    present = {r.check_id for r in results}
    for entry in POLICY.entries_for_lane(Lane.LOCAL).values():
        if entry.check_id not in present:
            results.append(skip(entry.check_id, "not selected in this run (--checks)" if only is not None else "not run"))
    order = {entry.check_id: i for i, entry in enumerate(POLICY.entries)}
    results.sort(key=lambda r: order.get(r.check_id, len(order)))
    try:
        digest = source_digest(root)
    except (ValueError, OSError):
        digest = ""
    return ValidationReportV2(report_schema_version="2", target=url, source_digest=digest, signature=SignatureKind.OPENENV_SERVED,
                              manifest=manifest, policy_version=POLICY.policy_version, lane=Lane.LOCAL,
                              levels_run=[Level.STATIC, Level.RUNTIME, Level.SEMANTIC], results=results,
                              verdict=apply_policy(results, POLICY, Lane.LOCAL))


def table(report: ValidationReportV2) -> str:
    """One line per check: status, check id, severity under the policy, and its first line of evidence."""
    severity = {e.check_id: e.severity.value for e in POLICY.entries}
    lines = [f"{'status':6}  {'check':40}  {'severity':8}  evidence"]
    for r in report.results:
        lines.append(f"{r.status.value.upper():6}  {r.check_id:40}  {severity.get(r.check_id, ''):8}  {(r.evidence or [''])[0][:160]}")
    lines.append(f"verdict: {report.verdict.value} (policy {report.policy_version}, "
                 f"{sum(r.status is CheckStatus.PASS for r in report.results)} pass, {sum(r.status is CheckStatus.FAIL for r in report.results)} fail, "
                 f"{sum(r.status is CheckStatus.SKIP for r in report.results)} skip, {sum(r.status is CheckStatus.ERROR for r in report.results)} error)")
    return "\n".join(lines)
