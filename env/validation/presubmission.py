"""The pre-submission check (``python validator.py``): this project's own policy, one PASS or FAIL line per check.

    check = run_checks("http://localhost:8000")     # printed as it goes; check.failures lists what failed
    print(summary(check.passed, len(check.failures), seconds))

Every endpoint answers as documented and openenv.yaml lists the server's tasks; on every task the oracle scores
>= 0.9, a do-nothing agent exactly 0.0, every degenerate policy (with the gold hypothesis) 0.0 with step rewards
summing to <= 0, the recorded overfit is not resolved, every score lies in [0, 1] and the same seed and actions give
identical rewards; concurrent episodes stay isolated. Its episodes are played by ``env.validation.player``.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import yaml

from env.authoring.degenerate import degenerate_policies
from env.authoring.oracle import oracle_actions, overfit_actions
from env.eval.drivers import HttpDriver
from env.families.catalog import TaskCatalog
from env.families.registry import FAMILIES
from env.validation.player import Action, Body, play, plays_alone

ROOT = Path(__file__).resolve().parents[2]  # the checkout (or the image's WORKDIR): openenv.yaml is there
TASK_WORKERS = 4  # tasks checked at once: their episodes are independent, and the server serves many


class Checklist:
    """Records every check; prints each as it is made, or (``echo=False``, a task checked in a worker) when absorbed."""

    def __init__(self, echo: bool = True) -> None:
        self.echo = echo
        self.lines: list[str] = []
        self.failures: list[str] = []

    def __call__(self, name: str, ok: bool, detail: str = "") -> None:
        line = f"{'PASS' if ok else 'FAIL'}  {name}" + (f"  ({detail})" if detail and not ok else "")
        self.lines.append(line)
        if self.echo:
            print(line)
        if not ok:
            self.failures.append(f"{name}: {detail}" if detail else name)

    @property
    def passed(self) -> int:
        return len(self.lines) - len(self.failures)  # one line per check; one failure per failed check

    def absorb(self, other: Checklist) -> None:
        for line in other.lines:
            print(line)
        self.lines += other.lines
        self.failures += other.failures


def check_endpoints(http: httpx.Client, check: Checklist) -> list[str]:
    """The endpoints answer as documented and openenv.yaml lists the tasks the server serves (their ids, returned)."""
    health = http.get("/health")
    check("GET /health is healthy", health.status_code == 200 and health.json().get("status") == "healthy", health.text[:200])
    isolation = health.json().get("isolation", {})
    check("GET /health reports the isolation tier", bool(isolation.get("tier")))
    check("the sandbox holds every guarantee a run needs", isolation.get("can_execute") is True and isolation.get("tier") != "unsafe",
          isolation.get("reason", ""))
    tasks = http.get("/tasks").json()
    ids = [t["id"] for t in tasks]
    check("GET /tasks lists tasks with limits", bool(ids) and all({"max_attempts", "max_steps", "tests_total"} <= set(t) for t in tasks))
    overview = http.get("/").json()
    check("GET / lists endpoints and action types", "endpoints" in overview and "action_types" in overview)
    schema = http.get("/schema").json()
    check("GET /schema has action, observation and state", {"action", "observation", "state"} <= set(schema))
    check("GET /metadata has a name and description", all(http.get("/metadata").json().get(k) for k in ("name", "description")))
    mcp = http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).json()
    check("POST /mcp answers JSON-RPC", mcp.get("jsonrpc") == "2.0")
    check("GET /openapi.json declares a version", bool(http.get("/openapi.json").json().get("info", {}).get("version")))
    manifest = yaml.safe_load((ROOT / "openenv.yaml").read_text())
    check("openenv.yaml lists the server's tasks", sorted(t["id"] for t in manifest.get("tasks", [])) == sorted(ids), f"{ids}")
    return ids


def check_task(url: str, catalog: TaskCatalog, task_id: str) -> Checklist:
    """One task's checks, recorded without printing (``run_checks`` prints each task's lines in task order)."""
    check = Checklist(echo=False)
    task = catalog.get(task_id)
    family = FAMILIES[task.family]

    def played(seed: int, actions: list[Action]) -> list[Body]:
        # the bodies of the steps, until the episode ends; no give_up added: the plays end as their actions say
        return play(driver, task_id, seed, actions, give_up=False).steps

    with HttpDriver(url, timeout_s=120) as driver:
        gold = oracle_actions(task)
        oracle = played(1, gold)
        score = oracle[-1]["observation"]["grader_score"]
        check(f"{task_id}: the oracle scores >= 0.9", score is not None and score >= 0.9, f"score {score}")
        idle = played(1, [{"action_type": "give_up"}])
        check(f"{task_id}: a do-nothing agent scores exactly 0.0", idle[-1]["observation"]["grader_score"] == 0.0, f"{idle[-1]['observation']['grader_score']}")
        cheats = []
        # with the gold hypothesis: a diagnosis pays only with a fix, so the one that would pay is the one to play
        for name, actions in degenerate_policies(task, "correct").items():
            bodies = played(1, actions + [{"action_type": "give_up"}])
            grade, total = bodies[-1]["observation"]["grader_score"], round(sum(b["reward"] for b in bodies), 6)
            if grade != 0.0 or total > 0.0:
                cheats.append(f"{name}: grade {grade}, rewards {total}")
        check(f"{task_id}: every degenerate policy scores exactly 0.0 and earns no reward", not cheats, "; ".join(cheats))
        overfit = overfit_actions(task)
        if overfit is not None:
            last = played(1, overfit + [{"action_type": "give_up"}])[-1]["observation"]
            ceiling = family.overfit_ceiling(score or 0.0)  # classic: 0.0; a repository's overfit may fix a held-out test
            check(
                f"{task_id}: the recorded overfit (it fits only the visible tests) is not resolved",
                last["info"].get("resolved") is False and (last["grader_score"] or 0.0) <= ceiling,
                f"resolved {last['info'].get('resolved')}, grade {last['grader_score']}",
            )
        mixed = family.smoke_actions(task)
        first, second = played(7, mixed), played(7, mixed)
    rewards: list[list[float | None]] = [[*(b["reward"] for b in run), run[-1]["observation"]["grader_score"]] for run in (first, second)]
    check(f"{task_id}: the same seed and actions give identical rewards", rewards[0] == rewards[1], f"{rewards}")
    scores = [b["observation"]["score_estimate"] for b in oracle + idle + first] + [score, idle[-1]["observation"]["grader_score"]]
    check(f"{task_id}: every score lies in [0, 1]", all(s is not None and 0.0 <= s <= 1.0 for s in scores), f"{scores}")
    return check


def summary(passed: int, failed: int, seconds: float, skipped: int = 0, errors: int = 0) -> str:
    """The validator's last line, in both modes: how many checks passed and failed (with --v2, skipped and errored
    too, when any) and the time taken, server start included: what a CI log or a reader scrolling up wants first."""
    counts = [f"{passed} passed", f"{failed} failed"] + [f"{n} {what}" for n, what in ((skipped, "skipped"), (errors, "errored")) if n]
    return f"{', '.join(counts)} in {seconds:.1f} s"


def spot_checked(catalog: TaskCatalog, ids: list[str]) -> list[str]:
    """The listed ids a run that names none plays: each family's own choice (``Family.spot_checked``: the race family one
    seed per pattern and domain), in listing order; what is left out is said."""
    by_family: dict[str, list[str]] = {}
    for task_id in ids:
        by_family.setdefault(catalog.get(task_id).family, []).append(task_id)
    kept = {t for family, listed in by_family.items() for t in FAMILIES[family].spot_checked(listed)}
    for family, listed in by_family.items():
        played = sum(1 for t in listed if t in kept)
        if played < len(listed):
            print(f"note  {family}: {played} of its {len(listed)} listed tasks played (--tasks plays any of them)")
    return [t for t in ids if t in kept]


class UnknownTasks(ValueError):
    """``--tasks`` names a task the server does not serve (a typo would otherwise check less and pass)."""


def run_checks(url: str, tasks: list[str] | None = None) -> Checklist:
    """Every check; ``tasks``: play only these tasks (the endpoints and openenv.yaml are checked whole either way)."""
    check = Checklist()
    catalog = TaskCatalog.from_env()  # the tasks a local server serves (ENV_TASK_DIRS included)
    with httpx.Client(base_url=url, timeout=120) as http:
        ids = check_endpoints(http, check)
        if tasks is not None:
            unknown = [t for t in tasks if t not in ids]
            if unknown:
                raise UnknownTasks(f"--tasks names tasks the server does not serve: {', '.join(unknown)} (it serves {', '.join(ids)})")
            ids = [t for t in ids if t in tasks]
        else:
            ids = spot_checked(catalog, ids)
        with ThreadPoolExecutor(TASK_WORKERS) as pool:
            for done in pool.map(lambda task_id: check_task(url, catalog, task_id), ids):  # printed in task order
                check.absorb(done)

        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(lambda i: plays_alone(url, ids[i % len(ids)], i), range(16)))
        check("16 concurrent episodes stay isolated", all(results), f"{results.count(False)} crossed")
    return check


