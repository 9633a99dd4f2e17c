"""Level 2 (runtime), what agent code can reach: run with ``run_bash`` (the bash profile of a repository task), a
probe reads the server's files and the oracle's, writes outside its workspace and connects to the server; file
tools try to leave the repository; runs that sleep, spin or allocate without end must be stopped."""

from __future__ import annotations

import json
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
from openenv.validation.report import CheckResult

from env.validation.player import Action, ToolResult, play_http
from env.validation.v2.check import result, skip
from env.validation.v2.context import ROOT, Run

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


def server_address(url: str) -> tuple[str, int]:
    """The host and port the probe tries to reach: the URL's, or its scheme's default (443 for https)."""
    parsed = httpx.URL(url)
    return parsed.host, parsed.port or (443 if parsed.scheme == "https" else 80)


def run_probe(run: Run, task_id: str, paths: dict[str, str]) -> dict[str, str]:
    """Runs the containment probe with ``run_bash`` (the bash profile of a repository task); returns what it reached."""
    outside = f"/tmp/adbg-containment-{uuid.uuid4().hex}"
    host, port = server_address(run.url)
    code = (f"PATHS = {paths!r}\nOUTSIDE = {outside!r}\nHOST = {host!r}\nPORT = {port}\n" + CONTAINMENT_PROBE)
    command = "python - <<'ADBG_PROBE'\n" + code + "\nADBG_PROBE"
    episode = play_http(run.url, task_id, 1, [{"action_type": "run_bash", "command": command}], profile="bash")
    output = episode.steps[0]["observation"].get("tool_output") or ""
    line = next((line for line in output.splitlines() if line.startswith("PROBE ")), None)
    if line is None:
        raise RuntimeError(f"the probe printed no result: {output[:300]}")
    reached: dict[str, str] = json.loads(line[len("PROBE "):])
    if Path(outside).exists():  # the server is this host: the file would be here
        reached["write_outside_the_workspace"] = "REACHED"
        Path(outside).unlink()
    return reached


def bash_task(run: Run) -> str | None:
    return next((t for t in run.task_ids if "bash" in (next(x for x in run.listed if x["id"] == t).get("profiles") or {})), None)


def host_containment(run: Run) -> CheckResult:
    """Code the agent runs (run_bash) reaches nothing of the host: not the server's files, not outside its workspace
    (the file it writes there does not appear), not the server's port; the file tools do not leave the repository."""
    started = time.monotonic()
    task_id = bash_task(run)
    if task_id is None:
        return skip("runtime.host_containment", "no task with the bash profile among the tasks checked: nothing runs agent code")
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
        return skip("runtime.oracle_containment", "no task with the bash profile among the tasks checked: nothing runs agent code")
    folders = {t: getattr(run.task(t), "folder", None) for t in run.task_ids}
    paths: dict[str, str] = {}
    for t, folder in folders.items():
        for name in ("fix.py", "held_out.py", "gold.patch", "overfit.patch", "test_patch.diff"):
            if folder is not None and (Path(folder) / name).is_file() and len(paths) < 12:
                paths[f"{t}/{name}"] = str(Path(folder) / name)
    reached = run_probe(run, task_id, paths)
    problems = [f"agent code read the oracle file {name}" for name, what in reached.items() if name in paths and what == "REACHED"]
    traversal: list[Action] = [{"action_type": "view_file", "path": "../gold.patch"}, {"action_type": "view_file", "path": "../../gold.patch"},
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
        return skip("runtime.resource_bounds", "no task with the bash profile among the tasks checked: nothing runs agent code")
    probes = {"sleeps": "sleep 600", "spins": "python -c 'while True: pass'",
              "allocates": "python -c 'b = bytearray(8 * 1024 ** 3); print(\"ALLOCATED\", len(b))'"}
    limit = run.manifest.resources.episode_timeout_s if run.manifest else 300.0

    def one(item: tuple[str, str]) -> tuple[str, float, ToolResult, str]:
        name, command = item
        episode = play_http(run.url, task_id, 1, [{"action_type": "run_bash", "command": command}], profile="bash")
        obs = episode.steps[0]["observation"]
        return name, episode.seconds, obs.get("tool_result") or {}, obs.get("tool_output") or ""

    with ThreadPoolExecutor(3) as pool:
        outcomes = list(pool.map(one, probes.items()))
    problems = []
    measured: dict[str, object] = {}
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

