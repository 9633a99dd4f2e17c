"""Pre-submission check of a running AgentDebuggerEnv server (or one it starts), printing every check.

    python validator.py                       # starts the server on a free local port
    python validator.py --url http://localhost:8000

Checks: every endpoint answers as documented and openenv.yaml lists the server's tasks; on every task the
oracle (the gold fix with its hypothesis, read from the local task folders) scores >= 0.9 and a do-nothing
agent (give_up at once) exactly 0.0; every degenerate policy (env.authoring.degenerate: the bug resubmitted or
with a no-op edit, a stuffed hypothesis, query or test-run spam, alternating, an edit next to the bug), played
with the gold hypothesis, scores exactly 0.0 and its step rewards sum to <= 0; each task's recorded overfit
(env.authoring.oracle.overfit_actions: a table of the visible tests' answers on classic tasks, which must score 0.0,
overfit.patch elsewhere) is not resolved; every score lies in [0, 1]; the same seed and actions
twice give identical rewards; concurrent episodes stay isolated. Exits 1 and lists the failures if any check fails.
The last line counts the checks and gives the time taken, in both modes: "94 passed, 0 failed in 41.3 s".

    python validator.py --v2 [--json report.json]   # OpenEnv's validation policy v2 instead (env/eval/v2/)

With --v2 (or --json) it runs every check of OpenEnv's policy v2 that applies to a running server, prints the check
table and exits 1 if the policy's verdict is FAIL; --json writes the report (valid against OpenEnv's
report-v2.schema.json); --tasks and --checks narrow a run (what is left out is reported as skipped).
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import yaml

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from env.authoring.degenerate import degenerate_policies  # noqa: E402
from env.authoring.oracle import oracle_actions, overfit_actions  # noqa: E402
from env.families.catalog import TaskCatalog  # noqa: E402
from env.families.registry import FAMILIES  # noqa: E402
from env.sandbox.lifetime import adopt, command, parent_env  # noqa: E402
from env.server.local import start_local_server  # noqa: E402

TASK_WORKERS = 4  # tasks checked at once: their episodes are independent, and the server serves many


class Check:
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

    def absorb(self, other: Check) -> None:
        for line in other.lines:
            print(line)
        self.lines += other.lines
        self.failures += other.failures


def play(http: httpx.Client, task_id: str, seed: int, actions: list[dict]) -> list[dict]:
    """Reset, then send the actions until the episode ends; returns every step's response body."""
    episode = http.post("/reset", json={"task_id": task_id, "seed": seed}).json()["observation"]["episode_id"]
    bodies = []
    for action in actions:
        body = http.post("/step", json={"action": action, "episode_id": episode}).json()
        bodies.append(body)
        if body["done"]:
            break
    return bodies


def check_endpoints(http: httpx.Client, check: Check) -> list[str]:
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


def check_task(url: str, catalog: TaskCatalog, task_id: str) -> Check:
    check = Check(echo=False)
    task = catalog.get(task_id)
    family = FAMILIES[task.family]
    with httpx.Client(base_url=url, timeout=120) as http:
        gold = oracle_actions(task)
        oracle = play(http, task_id, 1, gold)
        score = oracle[-1]["observation"]["grader_score"]
        check(f"{task_id}: the oracle scores >= 0.9", score is not None and score >= 0.9, f"score {score}")
        idle = play(http, task_id, 1, [{"action_type": "give_up"}])
        check(f"{task_id}: a do-nothing agent scores exactly 0.0", idle[-1]["observation"]["grader_score"] == 0.0, f"{idle[-1]['observation']['grader_score']}")
        cheats = []
        # with the gold hypothesis: a diagnosis pays only with a fix, so the one that would pay is the one to play
        for name, actions in degenerate_policies(task, "correct").items():
            bodies = play(http, task_id, 1, actions + [{"action_type": "give_up"}])
            grade, total = bodies[-1]["observation"]["grader_score"], round(sum(b["reward"] for b in bodies), 6)
            if grade != 0.0 or total > 0.0:
                cheats.append(f"{name}: grade {grade}, rewards {total}")
        check(f"{task_id}: every degenerate policy scores exactly 0.0 and earns no reward", not cheats, "; ".join(cheats))
        overfit = overfit_actions(task)
        if overfit is not None:
            last = play(http, task_id, 1, overfit + [{"action_type": "give_up"}])[-1]["observation"]
            ceiling = family.overfit_ceiling(score or 0.0)  # classic: 0.0; a repository's overfit may fix a held-out test
            check(
                f"{task_id}: the recorded overfit (it fits only the visible tests) is not resolved",
                last["info"].get("resolved") is False and (last["grader_score"] or 0.0) <= ceiling,
                f"resolved {last['info'].get('resolved')}, grade {last['grader_score']}",
            )
        mixed = family.smoke_actions(task)
        first, second = play(http, task_id, 7, mixed), play(http, task_id, 7, mixed)
    rewards = [[b["reward"] for b in run] + [run[-1]["observation"]["grader_score"]] for run in (first, second)]
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


def run_checks(url: str, tasks: list[str] | None = None) -> Check:
    """Every check; ``tasks``: play only these tasks (the endpoints and openenv.yaml are checked whole either way)."""
    check = Check()
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

        def isolated(i: int) -> bool:
            task_id = ids[i % len(ids)]
            with httpx.Client(base_url=url, timeout=120) as own:
                start = own.post("/reset", json={"task_id": task_id, "seed": i}).json()["observation"]
                step = own.post("/step", json={"action": {"action_type": "give_up"}, "episode_id": start["episode_id"]}).json()["observation"]
            return step["episode_id"] == start["episode_id"] and step["task_id"] == task_id and step["step_number"] == 1

        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(isolated, range(16)))
        check("16 concurrent episodes stay isolated", all(results), f"{results.count(False)} crossed")
    return check


def run_v2(url: str, args: argparse.Namespace, server_pid: int | None, started: float) -> int:
    from openenv.validation.types import CheckStatus

    from env.eval.v2.report import UnknownSelection, table, validate

    split = lambda text: [x.strip() for x in text.split(",") if x.strip()] if text else None  # noqa: E731
    checks = split(args.checks)
    try:
        report = validate(url, tasks=split(args.tasks), only=set(checks) if checks else None, server_pid=server_pid)
    except UnknownSelection as exc:  # a typo in --tasks or --checks would otherwise check nothing and pass
        print(f"validator.py --v2: {exc}", file=sys.stderr)
        return 2
    print(table(report))
    if args.json:
        Path(args.json).write_text(report.model_dump_json(indent=2) + "\n")
        print(f"report written to {args.json}")
    count = lambda status: sum(r.status is status for r in report.results)  # noqa: E731
    print(summary(count(CheckStatus.PASS), count(CheckStatus.FAIL), time.monotonic() - started, count(CheckStatus.SKIP), count(CheckStatus.ERROR)))
    return 1 if report.verdict.value == "fail" else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running server; without it, one is started")
    parser.add_argument("--v2", action="store_true", help="run OpenEnv's validation policy v2 instead (env/eval/v2/)")
    parser.add_argument("--json", metavar="PATH", help="with --v2 (implied): write the report (report-v2.schema.json) here")
    parser.add_argument("--tasks", help="comma-separated task ids to play (default: every task)")
    parser.add_argument("--checks", help="with --v2: comma-separated check ids to run (default: all)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    proc = None
    url = args.url
    if url is None:
        # The server dies with this process (PR_SET_PDEATHSIG, tied to the thread that starts it: only the main one
        # is sure to live as long as the process).
        proc, url = start_local_server(env=parent_env() if threading.current_thread() is threading.main_thread() else {})
        adopt(proc)  # on SIGTERM it goes first, so that the checks in flight fail at once instead of holding the exit up
    try:
        if args.v2 or args.json:
            return run_v2(url, args, proc.pid if proc is not None else None, started)
        tasks = [t.strip() for t in args.tasks.split(",") if t.strip()] if args.tasks else None
        try:
            check = run_checks(url.rstrip("/"), tasks)
        except UnknownTasks as exc:
            print(f"validator.py: {exc}", file=sys.stderr)
            return 2
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=10)
    if check.failures:
        print(f"\n{len(check.failures)} check(s) failed:")
        for failure in check.failures:
            print(f"  - {failure}")
    else:
        print("\nall checks passed")
    print(summary(check.passed, len(check.failures), time.monotonic() - started))
    return 1 if check.failures else 0


if __name__ == "__main__":
    sys.exit(command(main))  # nothing it starts outlives it; a SIGTERM exits 143 (env.sandbox.lifetime)
