"""Sizing replicas from measurements: memory per session and CPU per step for each family on one replica, and the
throughput of one against two replicas behind HAProxy, measured in the same run (prints figures and a sizing table).

    python bench/bench_replicas.py [--sessions 16] [--steps 20] [--seconds 20] [--clients 16]

1. One replica (``python -m env.server``): ``--sessions`` WebSocket sessions of one family are opened and reset; the
   growth of the replica's resident memory (and of its scratch directory, where repository workspaces live) divided
   by the sessions is the memory per session. Then ``--steps`` typical steps per family (a classic gold submission,
   a repository ``run_tests``, a procedural ``run_tests``): the CPU time of the replica and everything it started,
   divided by the steps.
2. Behind HAProxy (``deploy/haproxy/haproxy.cfg``): ``--clients`` WebSocket clients play easy episodes (reset, gold
   submission) for ``--seconds``, first with one replica up, then with two. Every episode is checked: its own id,
   task and score.
The sizing table turns these into replicas, cores and memory for 1,000 and 10,000 concurrent sessions, for a stated
step rate per session (``--step-every``, seconds between one session's steps: an RL rollout waits for the model).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from openenv.core.generic_client import GenericEnvClient  # noqa: E402

from env.authoring.oracle import oracle_actions  # noqa: E402
from env.families.catalog import TaskCatalog  # noqa: E402
from env.server.local import ROOT, start_balancer, start_local_server  # noqa: E402

CATALOG = TaskCatalog.builtin()

FAMILIES = {"classic": "easy", "repo": "repo-slice-window", "procedural": "proc-easy-test-0"}
CLK = os.sysconf("SC_CLK_TCK")


def _tree(pid: int) -> list[int]:
    """The process and its live descendants."""
    found, frontier = [pid], [pid]
    while frontier:
        parent = frontier.pop()
        for child in Path(f"/proc/{parent}/task/{parent}/children").read_text().split() if Path(f"/proc/{parent}/task/{parent}/children").exists() else []:
            found.append(int(child))
            frontier.append(int(child))
    return found


def cpu_seconds(pid: int) -> float:
    """User and system time of a process tree, reaped children included."""
    total = 0
    for p in _tree(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    return total / CLK


def rss_mb(pid: int) -> float:
    total = 0
    for p in _tree(pid):
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def disk_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink()) / 2**20 if path.exists() else 0.0


def typical_step(family: str, task_id: str) -> list[dict[str, Any]]:
    """A step that does a family's real work: a classic gold submission (the episode goes on: a submission may be
    repeated), a repository or procedural test run."""
    if family == "classic":
        return oracle_actions(CATALOG.get(task_id))[-1:]
    return [{"action_type": "run_tests"}]


def one_replica(sessions: int, steps: int) -> tuple[dict[str, dict[str, float]], float]:
    """Per family: memory and scratch per session, CPU and wall per step; and an idle replica's resident memory."""
    scratch = Path(tempfile.mkdtemp(prefix="adbg-bench-scratch-"))
    proc, url = start_local_server(env={"ENV_REPLICA": "r1", "SANDBOX_TMPDIR": str(scratch), "ENV_SECRET": "bench replicas secret"})
    figures: dict[str, dict[str, float]] = {}
    time.sleep(2)
    idle = rss_mb(proc.pid)
    try:
        for family, task_id in FAMILIES.items():
            time.sleep(1)
            before, disk_before = rss_mb(proc.pid), disk_mb(scratch)
            clients = [GenericEnvClient(base_url=url).__enter__() for _ in range(sessions)]
            for i, client in enumerate(clients):
                client.reset(task_id=task_id, seed=i)
            time.sleep(1)
            grown, disk_grown = rss_mb(proc.pid) - before, disk_mb(scratch) - disk_before
            cpu_before, started = cpu_seconds(proc.pid), time.monotonic()
            for i in range(steps):
                for action in typical_step(family, task_id):
                    clients[i % sessions].step(action)
            cpu = cpu_seconds(proc.pid) - cpu_before
            wall = time.monotonic() - started
            for client in clients:
                client.__exit__(None, None, None)
            figures[family] = {"mb_per_session": grown / sessions, "disk_mb_per_session": disk_grown / sessions,
                               "cpu_ms_per_step": cpu / steps * 1000, "wall_ms_per_step": wall / steps * 1000}  # fmt: skip
            print(f"{family:10} ({task_id}): {grown / sessions:6.1f} MiB memory and {disk_grown / sessions:5.2f} MiB scratch per session, "
                  f"{cpu / steps * 1000:7.1f} ms CPU per step ({wall / steps * 1000:.0f} ms wall, one at a time)", flush=True)  # fmt: skip
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
        shutil.rmtree(scratch, ignore_errors=True)
    return figures, idle


def play(url: str, seconds: float, clients: int) -> tuple[float, int, int]:
    """Easy episodes per second over ``clients`` WebSocket connections; (rate, clean, dirty)."""
    task = CATALOG.get("easy")
    actions = oracle_actions(task)
    clean = dirty = 0
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def client_loop(index: int) -> None:
        nonlocal clean, dirty
        with GenericEnvClient(base_url=url) as client:
            seed = index * 10_000
            while time.monotonic() < deadline:
                first = client.reset(task_id="easy", seed=seed)
                episode = first.observation["episode_id"]
                result = client.step(actions[-1])
                ok = result.done and result.observation["episode_id"] == episode and result.observation["grader_score"] >= 0.9
                with lock:
                    clean += ok
                    dirty += not ok
                seed += 1

    started = time.monotonic()
    threads = [threading.Thread(target=client_loop, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return clean / (time.monotonic() - started), clean, dirty


def behind_haproxy(seconds: float, clients: int) -> dict[int, float]:
    if shutil.which("haproxy") is None:
        print("haproxy is not installed (make test installs Debian's): the 1 vs 2 replica comparison is skipped")
        return {}
    secret = {"ENV_SECRET": "bench replicas secret"}
    replicas = [start_local_server(env={"ENV_REPLICA": name, **secret}) for name in ("r1", "r2")]
    rates: dict[int, float] = {}
    try:
        for count in (1, 2):
            addresses = {name: url.removeprefix("http://") for name, (_, url) in zip(("r1", "r2"), replicas, strict=True)}
            if count == 1:
                addresses["r2"] = "127.0.0.1:9"  # nothing listens there: r2 is down, every session goes to r1
            balancer, url = start_balancer(addresses)
            try:
                rate, clean, dirty = play(url, seconds, clients)
            finally:
                balancer.terminate()
                balancer.wait(timeout=10)
            rates[count] = rate
            print(f"{count} replica(s) behind HAProxy, {clients} clients: {rate:.1f} clean easy episodes/s ({clean} clean, {dirty} dirty)", flush=True)
    finally:
        for proc, _ in replicas:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=30)
    return rates


def sizing(figures: dict[str, dict[str, float]], idle_mb: float, step_every: float, cores_per_replica: int, max_sessions: int) -> None:
    print(f"\nSizing, from these figures: every session steps once every {step_every:g} s; a replica has {cores_per_replica} cores and "
          f"holds at most {max_sessions} sessions (ENV_MAX_SESSIONS); CPU planned at 70 % use.")  # fmt: skip
    print("| family | sessions | steps/s | CPU cores needed | replicas | memory (GiB) | scratch (GiB) |")
    print("|---|---|---|---|---|---|---|")
    for family, f in figures.items():
        for sessions in (1_000, 10_000):
            rate = sessions / step_every
            cores = rate * f["cpu_ms_per_step"] / 1000 / 0.7
            replicas = max(-(-sessions // max_sessions), -(-int(cores + 0.999) // cores_per_replica))  # the session cap or the CPU
            memory = (sessions * f["mb_per_session"] + replicas * idle_mb) / 1024
            print(f"| {family} | {sessions:,} | {rate:,.0f} | {cores:.1f} | {replicas} | {memory:.1f} | {sessions * f['disk_mb_per_session'] / 1024:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=16)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--step-every", type=float, default=10.0, help="seconds between one session's steps, for the sizing table")
    parser.add_argument("--cores-per-replica", type=int, default=4)
    parser.add_argument("--max-sessions", type=int, default=256)
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores; repo root {ROOT}")
    figures, idle = one_replica(args.sessions, args.steps)
    print(f"an idle replica: {idle:.0f} MiB resident (its server, fork server and warm pool, before any session)")
    behind_haproxy(args.seconds, args.clients)
    sizing(figures, idle, args.step_every, args.cores_per_replica, args.max_sessions)


if __name__ == "__main__":
    main()
