"""Latency and throughput of the server over real HTTP, measured in one run (prints figures).

    python bench/bench_server.py [--rounds 3] [--episodes 20] [--seconds 8] [--against REF | --write docs/performance.md]
    python bench/bench_server.py --phases [--episodes 20] [--write docs/performance.md]

Starts ``python -m env.server`` on a free local port, then measures:
  * easy and hard ``submit_fix`` latency (one session; hard includes the race check and its repeat at grading),
  * ``/health`` latency while 8 sessions submit hard fixes,
  * clean episodes per second with 1 and with 8 concurrent sessions (every episode checked for
    cross-talk: its own id, task, step count and score).
Each figure is the median over ``--rounds`` repeats. Reference figures (lessons.md, same kind of
machine): easy submit p50 70 ms, hard 1261 ms, /health 318-1568 ms under load.

``--phases``: where a step's time goes instead. The server runs with ENV_SERVER_TIMING=1 and answers each request
with a Server-Timing header (``env.timing``: each phase counts its own time, so a column adds up to its total); per
kind of step (easy, medium and hard ``submit_fix`` of the gold fix, a repository ``submit``, a cheap ``query_context``
and ``view_file``) the median of each phase over ``--episodes`` steps is printed, in milliseconds. ``--write FILE``
also puts the table, with the commit, date and load it was measured at, between FILE's markers (``PHASES_BEGIN`` and
``PHASES_END``): the docs' figures come from this script, never typed.

``--against REF``: the same figures for the commit REF (a branch, tag or sha), measured in the same sitting: REF is
checked out into a temporary git worktree, its server started from there with this interpreter, and the rounds
alternate between the two servers (this tree first in odd rounds, REF first in even ones) so that a machine that
gets busier part-way weighs on both. Printed: both medians and their ratio, per figure. The worktree is removed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from env.families.catalog import TaskCatalog  # noqa: E402
from env.server.local import start_local_server  # noqa: E402
from env.timing import PHASES  # noqa: E402

REFERENCE = {"easy_p50_ms": 70.0, "hard_p50_ms": 1261.0, "health_under_load_ms": (318.0, 1568.0)}
HYPOTHESIS = {
    "easy": "off-by-one: the while loop must be left <= right to check the last element",
    "hard": "race condition: increment reads and writes under separate lock acquisitions, not atomic",
}


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def episode(client: httpx.Client, url: str, task_id: str, code: str, seed: int) -> tuple[float, bool]:
    """One reset + one gold submission; returns the submit latency (ms) and whether it was clean."""
    obs = client.post(f"{url}/reset", json={"task_id": task_id, "seed": seed}).json()["observation"]
    episode_id = obs["episode_id"]
    started = time.perf_counter()
    body = client.post(f"{url}/step", json={"action": {"action_type": "submit_fix", "fixed_code": code, "hypothesis": HYPOTHESIS[task_id]}, "episode_id": episode_id}).json()
    elapsed = (time.perf_counter() - started) * 1000
    out = body["observation"]
    clean = out["episode_id"] == episode_id and out["task_id"] == task_id and out["step_number"] == 1 and body["done"] and out["grader_score"] >= 0.96
    if not clean:
        print(f"  dirty episode {episode_id}: {out['task_id']} step {out['step_number']} done {body['done']} "
              f"score {out['grader_score']} error {out['error']!r}\n    {out['current_error_output'][:600]!r}")
    return elapsed, clean


def submit_latency(url: str, task_id: str, code: str, n: int) -> tuple[float, float]:
    with httpx.Client(timeout=60) as client:
        episode(client, url, task_id, code, 0)  # warm-up
        times = [episode(client, url, task_id, code, i)[0] for i in range(n)]
    return statistics.median(times), pct(times, 99)


def throughput(url: str, code: str, sessions: int, seconds: float) -> tuple[float, int, int]:
    done, dirty = [0], [0]
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def worker(k: int) -> None:
        with httpx.Client(timeout=60) as client:
            i = 0
            while time.monotonic() < stop:
                _, clean = episode(client, url, "easy", code, k * 100000 + i)
                i += 1
                with lock:
                    done[0] += 1
                    dirty[0] += not clean

    started = time.monotonic()
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(sessions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return done[0] / (time.monotonic() - started), done[0], dirty[0]


def health_under_load(url: str, code: str, sessions: int, seconds: float, task_id: str = "hard") -> float:
    stop = time.monotonic() + seconds

    def worker(k: int) -> None:
        with httpx.Client(timeout=60) as client:
            i = 0
            while time.monotonic() < stop:
                episode(client, url, task_id, code, k * 1000 + i)
                i += 1

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(sessions)]
    for t in threads:
        t.start()
    # The sampler is its own process, so the load generator's threads do not delay it.
    time.sleep(0.5)
    command = [sys.executable, __file__, "--sample-health", url, str(max(1.0, stop - time.monotonic()))]
    if os.environ.get("BENCH_SAMPLER_NICE"):  # diagnostic: separate the sampler's own scheduling delay
        command = ["nice", "-n", os.environ["BENCH_SAMPLER_NICE"], *command]
    sampler = subprocess.run(command, capture_output=True, text=True, check=True)
    samples = json.loads(sampler.stdout)
    for t in threads:
        t.join()
    return pct(samples, 99)


def sample_health(url: str, seconds: float) -> None:
    samples = []
    stop = time.monotonic() + seconds
    with httpx.Client(timeout=30) as client:
        while time.monotonic() < stop:
            started = time.perf_counter()
            client.get(f"{url}/health")
            samples.append((time.perf_counter() - started) * 1000)
            time.sleep(0.02)
    print(json.dumps(samples))


FIGURES = ("easy_p50", "easy_p99", "hard_p50", "hard_p99", "health_p99", "health_easy_p99", "rate_1", "rate_8", "dirty")
LABELS = {
    "easy_p50": ("easy submit_fix p50", "ms", False), "easy_p99": ("easy submit_fix p99", "ms", False),
    "hard_p50": ("hard submit_fix p50", "ms", False), "hard_p99": ("hard submit_fix p99", "ms", False),
    "health_p99": ("/health p99, 8 sessions submit hard", "ms", False), "health_easy_p99": ("/health p99, 8 sessions submit easy", "ms", False),
    "rate_1": ("clean episodes/s, 1 session", "/s", True), "rate_8": ("clean episodes/s, 8 sessions", "/s", True),
}  # fmt: skip


def measure(url: str, easy: str, hard: str, args: argparse.Namespace) -> dict[str, float]:
    """One round of every figure against the server at ``url``."""
    e50, e99 = submit_latency(url, "easy", easy, args.episodes)
    h50, h99 = submit_latency(url, "hard", hard, max(5, args.episodes // 2))
    health = health_under_load(url, hard, 8, args.seconds)
    health_easy = health_under_load(url, easy, 8, args.seconds, "easy")
    rate1, _, dirty1 = throughput(url, easy, 1, args.seconds)
    rate8, _, dirty8 = throughput(url, easy, 8, args.seconds)
    return dict(zip(FIGURES, (e50, e99, h50, h99, health, health_easy, rate1, rate8, dirty1 + dirty8), strict=True))


def summary(r: dict[str, float]) -> str:
    return (f"easy p50 {r['easy_p50']:.1f} ms, hard p50 {r['hard_p50']:.1f} ms, /health p99 under load {r['health_p99']:.1f} ms, "
            f"{r['rate_1']:.1f} -> {r['rate_8']:.1f} episodes/s (1 -> 8 sessions, {int(r['dirty'])} dirty)")  # fmt: skip


@contextlib.contextmanager
def worktree(ref: str) -> Iterator[tuple[Path, str]]:
    """REF checked out (detached) in a temporary worktree of this repository, and its short sha; removed after."""
    sha = subprocess.run(["git", "rev-parse", "--short", f"{ref}^{{commit}}"], cwd=ROOT, capture_output=True, text=True)
    if sha.returncode != 0:
        raise SystemExit(f"--against {ref}: not a commit of this repository ({sha.stderr.strip()})")
    path = Path(tempfile.mkdtemp(prefix="bench-against-")) / "tree"
    subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(path), sha.stdout.strip()], cwd=ROOT, check=True)
    try:
        yield path, sha.stdout.strip()
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=ROOT, check=False)
        subprocess.run(["git", "worktree", "prune"], cwd=ROOT, check=False)
        path.parent.rmdir()


# A kind of step: the task it is taken in, and the action (the gold fix of a classic task, filled in by ``phases``).
KINDS: dict[str, tuple[str, dict[str, str]]] = {
    "easy submit_fix": ("easy", {"action_type": "submit_fix"}),
    "medium submit_fix": ("medium", {"action_type": "submit_fix"}),
    "hard submit_fix": ("hard", {"action_type": "submit_fix"}),
    "repo submit": ("repo-slice-window", {"action_type": "submit"}),
    "query_context": ("easy", {"action_type": "query_context", "query_type": "function_signature", "query_target": "binary_search"}),
    "view_file": ("repo-slice-window", {"action_type": "view_file", "path": "src/sensorkit/stats.py"}),
}


def server_timing(header: str) -> dict[str, float]:
    """A Server-Timing header's phases: name -> milliseconds."""
    found = {}
    for entry in header.split(","):
        name, _, rest = entry.strip().partition(";dur=")
        if name and rest:
            found[name] = float(rest)
    return found


def phases(url: str, catalog: TaskCatalog, n: int) -> dict[str, dict[str, float]]:
    """Per kind of step, the median milliseconds of each phase over ``n`` steps (each in a new episode, after one
    warm-up step of the same kind)."""
    table: dict[str, dict[str, float]] = {}
    with httpx.Client(timeout=120) as client:
        for kind, (task_id, action) in KINDS.items():
            if action["action_type"] == "submit_fix":
                action = {**action, "fixed_code": catalog.get(task_id).gold_source, "hypothesis": HYPOTHESIS.get(task_id, "the bug is in the loop")}
            samples: list[dict[str, float]] = []
            for i in range(n + 1):
                obs = client.post(f"{url}/reset", json={"task_id": task_id, "seed": i}).json()["observation"]
                answer = client.post(f"{url}/step", json={"action": action, "episode_id": obs["episode_id"]})
                error = answer.json()["observation"].get("error")
                if error:
                    raise SystemExit(f"{kind}: the step failed: {error}")
                if "server-timing" not in answer.headers:
                    raise SystemExit("the server sent no Server-Timing header: is ENV_SERVER_TIMING on?")
                if i:
                    samples.append(server_timing(answer.headers["server-timing"]))
            table[kind] = {name: statistics.median(s.get(name, 0.0) for s in samples) for name in PHASES}
    return table


def print_phases(table: dict[str, dict[str, float]], n: int) -> None:
    kinds = list(table)
    print(f"median milliseconds per phase over {n} steps (each phase its own time; a column adds up to its total)")
    print("  " + f"{'phase':<10}" + "".join(f"{k:>19}" for k in kinds))
    for name in PHASES:
        if any(table[k][name] for k in kinds):
            print("  " + f"{name:<10}" + "".join(f"{table[k][name]:>19.2f}" for k in kinds))


PHASES_BEGIN = "<!-- phases: written by bench/bench_server.py --phases --write; not by hand -->"
PHASES_END = "<!-- /phases -->"
FIGURES_BEGIN = "<!-- figures: written by bench/bench_server.py --write; not by hand -->"
FIGURES_END = "<!-- /figures -->"
KIND_HEADINGS = {"easy submit_fix": "easy `submit_fix`", "medium submit_fix": "medium `submit_fix`", "hard submit_fix": "hard `submit_fix`",
                 "repo submit": "repository `submit`", "query_context": "`query_context`", "view_file": "`view_file`"}  # fmt: skip


def phases_markdown(table: dict[str, dict[str, float]], n: int, commit: str, when: str, load: tuple[float, float]) -> str:
    """The phase table as the docs show it, with what it was measured at."""
    kinds = list(table)
    lines = [
        f"Measured {when} at {commit} (load average {load[0]:.1f} before, {load[1]:.1f} after), {n} steps of each kind, each in a new episode:",
        "",
        "| phase | " + " | ".join(KIND_HEADINGS.get(k, k) for k in kinds) + " |",
        "|---|" + "---|" * len(kinds),
    ]
    for name in PHASES:
        if any(table[k][name] for k in kinds):
            lines.append(f"| `{name}` | " + " | ".join(f"{table[k][name]:.2f}" for k in kinds) + " |")
    return "\n".join(lines)


def between_markers(text: str, block: str, where: str, markers: tuple[str, str] = (PHASES_BEGIN, PHASES_END)) -> str:
    """``text`` with what lies between its ``markers`` replaced by ``block``; SystemExit naming what is missing."""
    first, last = markers
    head, begin, rest = text.partition(first)
    body, end, tail = rest.partition(last)
    if not begin or not end or first in tail or first in body:
        raise SystemExit(f"{where} has no single pair of markers to write the table between: {first} ... {last}")
    return f"{head}{first}\n{block}\n{last}{tail}"


def figures_markdown(m: dict[str, float], rounds: int, commit: str, when: str, load: tuple[float, float]) -> str:
    """``make bench``'s figures as the docs show them, the original's in brackets, with what they were measured at."""
    ref_rate = 1000.0 / REFERENCE["easy_p50_ms"]
    low, high = REFERENCE["health_under_load_ms"]
    return "\n".join([
        f"Measured {when} at {commit} (load average {load[0]:.1f} before, {load[1]:.1f} after), the median of {rounds} round(s):",
        "",
        "| figure | measured |",
        "|---|---|",
        f"| easy `submit_fix` p50 / p99 | {m['easy_p50']:.1f} / {m['easy_p99']:.1f} ms ({REFERENCE['easy_p50_ms']:g} ms) |",
        f"| hard `submit_fix` p50 / p99, grading included (the concurrency check at submission and again at grading) | "
        f"{m['hard_p50']:.1f} / {m['hard_p99']:.1f} ms ({REFERENCE['hard_p50_ms']:g} ms) |",
        f"| `/health` p99 while 8 sessions submit hard fixes (sampled from a separate process) | {m['health_p99']:.1f} ms ({low:g}–{high:g} ms) |",
        f"| `/health` p99 while 8 sessions submit easy fixes | {m['health_easy_p99']:.1f} ms |",
        f"| clean easy episodes per second, 1 → 8 sessions | {m['rate_1']:.1f} → {m['rate_8']:.1f}, {int(m['dirty'])} with cross-talk "
        f"(≈ {ref_rate:.0f}/s for one session of the original) |",
    ])  # fmt: skip


def _stamp() -> str:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip() or "an unknown commit"
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return commit + (" with uncommitted changes" if dirty else "")


def write_phases(path: Path, table: dict[str, dict[str, float]], n: int, load: tuple[float, float]) -> None:
    block = phases_markdown(table, n, _stamp(), time.strftime("%Y-%m-%d"), load)
    path.write_text(between_markers(path.read_text(), block, str(path)))
    print(f"wrote the table into {path}")


def write_figures(path: Path, m: dict[str, float], rounds: int, load: tuple[float, float]) -> None:
    block = figures_markdown(m, rounds, _stamp(), time.strftime("%Y-%m-%d"), load)
    path.write_text(between_markers(path.read_text(), block, str(path), (FIGURES_BEGIN, FIGURES_END)))
    print(f"wrote the figures into {path}")


@contextlib.contextmanager
def server(root: Path = ROOT, env: dict[str, str] | None = None) -> Iterator[str]:
    proc, url = start_local_server(os.environ.get("BENCH_SERVER_LOG"), root=root, env=env)
    try:
        yield url
    finally:
        proc.terminate()  # a replica drains what it holds (repository episodes' test processes) before it stops
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def main() -> None:
    if sys.argv[1:2] == ["--sample-health"]:
        sample_health(sys.argv[2], float(sys.argv[3]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--against", metavar="REF", help="also measure commit REF, in the same sitting, and print the ratios")
    parser.add_argument("--phases", action="store_true", help="print where each kind of step's time goes instead (a table of medians)")
    parser.add_argument("--write", metavar="FILE", type=Path, help="also write the table measured between FILE's markers (not with --against)")
    args = parser.parse_args()
    if args.write and args.against:
        parser.error("--write writes this tree's figures alone: not with --against")
    if args.write:  # refuse before measuring anything
        between_markers(args.write.read_text(), "", str(args.write), (PHASES_BEGIN, PHASES_END) if args.phases else (FIGURES_BEGIN, FIGURES_END))
    catalog = TaskCatalog.builtin()
    if args.phases:
        before = os.getloadavg()[0]
        with server(env={"ENV_SERVER_TIMING": "1"}) as url:
            table = phases(url, catalog, args.episodes)
        print_phases(table, args.episodes)
        if args.write:
            write_phases(args.write, table, args.episodes, (before, os.getloadavg()[0]))
        return
    easy, hard = catalog.get("easy").gold_source, catalog.get("hard").gold_source
    before = os.getloadavg()[0]
    with contextlib.ExitStack() as stack:
        urls = {"here": stack.enter_context(server())}
        if args.against:
            tree, sha = stack.enter_context(worktree(args.against))
            urls[sha] = stack.enter_context(server(tree))
        print("  ".join(f"{name}: {url}, isolation {httpx.get(f'{url}/health').json()['isolation']['tier']}" for name, url in urls.items()))
        rows: dict[str, list[dict[str, float]]] = {name: [] for name in urls}
        for r in range(args.rounds):
            for name in list(urls) if r % 2 == 0 else list(urls)[::-1]:
                rows[name].append(measure(urls[name], easy, hard, args))
                print(f"round {r + 1} {name}: {summary(rows[name][-1])}")
    med = {name: {k: statistics.median(row[k] for row in rounds) for k in FIGURES} for name, rounds in rows.items()}
    if args.against:
        print(f"\nmedian over {args.rounds} round(s), this tree against {sha} ({args.against}), same sitting")
        print(f"  {'figure':<38} {'here':>10} {sha:>10}   ratio (here / {sha})")
        for key, (label, unit, higher) in LABELS.items():
            here, there = med["here"][key], med[sha][key]
            better = "better" if (here > there) == higher and here != there else "worse" if here != there else "same"
            print(f"  {label:<38} {here:>8.1f}{unit:<2} {there:>8.1f}{unit:<2}   x{here / there:.2f} ({better})")
        print(f"  dirty episodes (cross-talk or wrong score): here {int(sum(r['dirty'] for r in rows['here']))}, {sha} {int(sum(r['dirty'] for r in rows[sha]))}")
        return
    m = med["here"]
    ref_rate = 1000.0 / REFERENCE["easy_p50_ms"]
    print("\nmedian over rounds")
    print(f"  easy submit_fix   p50 {m['easy_p50']:7.1f} ms  p99 {m['easy_p99']:7.1f} ms   (reference p50 70 ms: {REFERENCE['easy_p50_ms'] / m['easy_p50']:.1f}x faster)")
    print(f"  hard submit_fix   p50 {m['hard_p50']:7.1f} ms  p99 {m['hard_p99']:7.1f} ms   (reference p50 1261 ms: {REFERENCE['hard_p50_ms'] / m['hard_p50']:.1f}x faster)")
    print(f"  /health p99 while 8 sessions submit hard fixes: {m['health_p99']:.1f} ms   (reference 318-1568 ms)")
    print(f"  /health p99 while 8 sessions submit easy fixes: {m['health_easy_p99']:.1f} ms")
    print(f"  clean episodes/s: 1 session {m['rate_1']:.1f}, 8 sessions {m['rate_8']:.1f} "
          f"(x{m['rate_8'] / m['rate_1']:.2f} over 1 session here; x{m['rate_8'] / ref_rate:.1f} over the reference's 1-session rate of {ref_rate:.1f}/s)")
    print(f"  dirty episodes (cross-talk or wrong score): {int(sum(r['dirty'] for r in rows['here']))}")
    if args.write:
        write_figures(args.write, {**m, "dirty": sum(r["dirty"] for r in rows["here"])}, args.rounds, (before, os.getloadavg()[0]))


if __name__ == "__main__":
    main()
