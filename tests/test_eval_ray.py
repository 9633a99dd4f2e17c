"""Distributed evaluation on Ray (`python -m env.eval run ... --ray`), on a local Ray instance started by the run.

Ray runs in the command's own process, never in pytest's: a local instance is started for the run and stopped after it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
from ray.exceptions import ActorDiedError, RayTaskError

# Ray is the [ray] extra, which make test installs (requirements-ray.txt): without it this module fails to import.
from env.eval.ray_pool import ROOT as SHIPPED_ROOT
from env.eval.ray_pool import SHIPPED_EXCLUDES, RayPool, forwarded_environment, shipped_excludes, worker_failure
from env.eval.run import seed_for
from tests.conftest import refusing_port

ROOT = Path(__file__).resolve().parents[1]
SECRET = "ray-test-secret-0123456789abcdef"
TASKS = ["easy", "medium", "proc-easy-train-0", "repo-slice-window"]  # every family


def evaluate(out: Path, *extra: str, agent: str = "oracle", tasks: list[str] = TASKS, runs: int = 2, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "env.eval", "run", "--agent", agent, "--tasks", *tasks, "--runs", str(runs), "--out", str(out), *extra]
    environ = {**os.environ, "ENV_SECRET": SECRET, "RAY_USAGE_STATS_ENABLED": "0", **(env or {})}
    return subprocess.run(command, cwd=ROOT, env=environ, capture_output=True, text=True, timeout=600)


def recorded(out: Path) -> tuple[dict[tuple[str, int], dict], dict[str, list[dict]]]:
    """Results and steps, less what differs between two runs on one machine: wall times, and the digest of output
    text that holds pytest's timings and the sandbox's temporary paths (the same in length and meaning)."""
    results = {}
    for line in (out / "results.jsonl").read_text().splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue  # the line a crash cut, as the harness reads it
        r.pop("seconds")
        results[(r["task_id"], r["run"])] = r
    steps = {}
    for path in sorted((out / "steps").rglob("*.jsonl")):
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        for row in rows:
            row.pop("ms")
            row["observation"].pop("text_sha1")
        steps[str(path.relative_to(out))] = rows
    return results, steps


def test_a_ray_run_plays_the_same_episodes_as_a_local_run_and_resumes(tmp_path):
    local = evaluate(tmp_path / "local")
    assert local.returncode == 0, local.stderr[-3000:]
    expected_results, expected_steps = recorded(tmp_path / "local")
    assert len(expected_results) == 8 and {r["seed"] for r in expected_results.values()} == {seed_for(t, n) for t in TASKS for n in (0, 1)}
    assert all(r["solved"] for r in expected_results.values())  # the gold fix, in every family
    # A cut run on Ray: three episodes already played (the lines a rerun keeps), one steps file of an unfinished one left over.
    ray_out = tmp_path / "ray"
    lines = (tmp_path / "local" / "results.jsonl").read_text().splitlines(keepends=True)
    kept = lines[:3]
    (ray_out / "steps").mkdir(parents=True)
    (ray_out / "results.jsonl").write_text("".join(kept) + lines[3][:25])
    for line in kept:
        r = json.loads(line)
        source = tmp_path / "local" / "steps" / "oracle" / r["task_id"] / f"run{r['run']}.jsonl"
        (ray_out / "steps" / "oracle" / r["task_id"]).mkdir(parents=True, exist_ok=True)
        shutil.copy(source, ray_out / "steps" / "oracle" / r["task_id"] / source.name)
    on_ray = evaluate(ray_out, "--ray", "--concurrency", "2")
    assert on_ray.returncode == 0, on_ray.stderr[-3000:]
    assert "5 episode(s) played" in on_ray.stderr
    assert "5/5 [" in on_ray.stderr  # the progress bar moved to the end as episodes came back
    results, steps = recorded(ray_out)
    assert results == expected_results
    assert steps == expected_steps
    assert {r["secret_fingerprint"] for r in results.values()} == {json.loads(lines[0])["secret_fingerprint"]}
    again = evaluate(ray_out, "--ray")
    assert again.returncode == 0 and "0 episode(s) played" in again.stderr  # nothing left: nothing replayed


def run_against_a_refusing_endpoint(url: str, endpoint: str, out: Path) -> subprocess.CompletedProcess[str]:
    """The workers read the model endpoint from the run's environment."""
    command = [sys.executable, "-m", "env.eval", "procedural", "--agents", "oracle", "llm", "--seeds", "1", "--levels", "easy",
               "--splits", "train", "--url", url, "--out", str(out), "--ray"]
    environ = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "API_BASE_URL": endpoint, "LLM_MAX_ATTEMPTS": "1"}
    environ.pop("ENV_SECRET", None)  # the server's secret decides its episodes
    for name in ("HF_TOKEN", "OPENAI_API_KEY", "MODEL_NAME"):
        environ.pop(name, None)  # the message names the settings the workers were given
    return subprocess.run(command, cwd=ROOT, env=environ, capture_output=True, text=True, timeout=600)



def test_ray_workers_drive_a_server_and_a_failing_model_endpoint_stops_the_run_saying_so(live_server, tmp_path):
    with refusing_port() as port:
        stopped = run_against_a_refusing_endpoint(live_server.url, f"http://127.0.0.1:{port}/v1", tmp_path)
    assert stopped.returncode == 1, stopped.stderr[-3000:]
    assert stopped.stderr.strip().splitlines()[-1] == (
        "stopped: the model endpoint failed (the model endpoint failed 1 time(s); last: APIConnectionError: Connection error.; "
        f"API_BASE_URL=http://127.0.0.1:{port}/v1, MODEL_NAME=meta-llama/Llama-3.1-70B-Instruct, no key (HF_TOKEN unset)); "
        f"0 of 1 episode(s) played, their results are in {tmp_path / 'results.jsonl'}; run the same command again to play the rest"
    )
    # The oracle's episode, played by a Ray worker on the server before the llm arm started, is kept.
    [played] = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert (played["agent"], played["task_id"], played["solved"]) == ("oracle", "proc-easy-train-0", True)
    assert played["secret_fingerprint"] == httpx.get(f"{live_server.url}/health").json()["secret_fingerprint"]


def test_workers_get_the_secret_and_the_settings_that_decide_an_episode_and_nothing_else(tmp_path, monkeypatch):
    environ = {"ENV_SECRET": "the-driver's-own-secret-value", "ENV_TASK_DIRS": "/tasks", "SANDBOX_WALL_SECONDS": "30",
               "DEBUG_MAX_SESSIONS": "4", "LLM_MAX_ATTEMPTS": "2", "API_BASE_URL": "http://models/v1", "MODEL_NAME": "m",
               "HF_TOKEN": "hf", "OPENAI_API_KEY": "sk", "HOME": "/root", "PATH": "/bin", "AWS_SECRET_ACCESS_KEY": "no",
               "SHELL_TIMEOUT_SECONDS": "20"}  # run_bash's limit decides a bash episode too
    settings = {"ENV_TASK_DIRS": "/tasks", "SANDBOX_WALL_SECONDS": "30", "DEBUG_MAX_SESSIONS": "4", "LLM_MAX_ATTEMPTS": "2",
                "SHELL_TIMEOUT_SECONDS": "20",
                "API_BASE_URL": "http://models/v1", "MODEL_NAME": "m", "HF_TOKEN": "hf", "OPENAI_API_KEY": "sk"}
    assert forwarded_environment("the-run's-secret-0123456789", environ) == {**settings, "ENV_SECRET": "the-run's-secret-0123456789"}
    assert forwarded_environment(None, environ) == settings  # driving a server: no secret of this process leaves it
    monkeypatch.setenv("ENV_SECRET", "x" * 32)
    assert "ENV_SECRET" not in RayPool(None, "http://server:8000", None, 2, tmp_path).environment
    assert RayPool(None, None, "s" * 32, 2, tmp_path).environment["ENV_SECRET"] == "s" * 32


def test_a_cluster_gets_the_code_but_never_this_checkout_s_results_or_their_secret(tmp_path):
    assert shipped_excludes(tmp_path) == SHIPPED_EXCLUDES  # outside the checkout: nothing to leave out
    assert shipped_excludes(SHIPPED_ROOT / "runs" / "llm") == [*SHIPPED_EXCLUDES, "/runs/llm"]
    assert {".git", ".venv", "tests", "results"} <= set(SHIPPED_EXCLUDES) and not {"env", "tasks"} & set(SHIPPED_EXCLUDES)


def test_a_run_stopped_by_a_worker_names_the_cause_not_ray_s_wrapper():
    raised = RayTaskError("EpisodeWorker.play", "Traceback ...", ConnectionResetError(104, "Connection reset by peer"), proctitle="ray::EpisodeWorker.play()")
    assert worker_failure(raised) == "an episode raised on a Ray worker (ConnectionResetError: [Errno 104] Connection reset by peer)"
    assert worker_failure(ActorDiedError()) == "a Ray worker was lost, with its node or process (ActorDiedError)"


def test_without_ray_installed_the_run_says_how_to_get_it(tmp_path):
    script = "import sys; sys.modules['ray'] = None; from env.eval.__main__ import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run([sys.executable, "-c", script, "run", "--agent", "oracle", "--tasks", "easy", "--out", str(tmp_path), "--ray"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env={**os.environ, "ENV_SECRET": SECRET})
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == "--ray needs Ray, which is not installed here (import of ray halted; None in sys.modules): pip install -e '.[ray]'"
    assert not (tmp_path / "results.jsonl").exists()


def test_an_address_nothing_answers_on_is_refused_at_once_naming_it(tmp_path):
    with refusing_port() as port:
        done = evaluate(tmp_path, "--ray", f"127.0.0.1:{port}", tasks=["easy"], runs=1)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].startswith(f"could not reach Ray at 127.0.0.1:{port} ([Errno 111] Connection refused); an ADDRESS is")
    assert not (tmp_path / "results.jsonl").exists() or (tmp_path / "results.jsonl").read_text() == ""
