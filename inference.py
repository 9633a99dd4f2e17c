"""Baseline inference: an OpenAI-compatible model plays the environment's tasks over /ws.

    API_BASE_URL=https://router.huggingface.co/v1 MODEL_NAME=meta-llama/Llama-3.1-70B-Instruct HF_TOKEN=hf_... \\
    ENV_BASE_URL=http://localhost:8000 [PROFILE=pdb] python inference.py [TASK_ID ...]

Runs easy, medium and hard (and any task ids named), printing one [START] line per task, one [STEP]
line per action and one [END] line with the grade, and writes the results to inference_results.json
(or RESULTS_PATH). PROFILE chooses the tool interface (default, bash, pdb, pdb_shell, minimal); the
model is offered that profile's tools, as /tasks lists them.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from env.agents.llm import LLMAgent  # noqa: E402
from env.eval.drivers import WsDriver  # noqa: E402

DEFAULT_TASKS = ["easy", "medium", "hard"]


def main(argv: list[str]) -> int:
    api_base = os.environ.get("API_BASE_URL", "https://router.huggingface.co/v1")
    model = os.environ.get("MODEL_NAME", "meta-llama/Llama-3.1-70B-Instruct")
    token = os.environ.get("HF_TOKEN", "")
    env_url = os.environ.get("ENV_BASE_URL", "http://localhost:8000")
    out = Path(os.environ.get("RESULTS_PATH", "inference_results.json"))
    profile = os.environ.get("PROFILE", "default")
    task_ids = DEFAULT_TASKS + [t for t in argv if t not in DEFAULT_TASKS]
    results = []
    with WsDriver(env_url) as probe:
        known = {t["id"]: t for t in probe.tasks()}
    for task_id in task_ids:
        if task_id not in known:
            print(f"[END] task={task_id} error=unknown task", flush=True)
            results.append({"task_id": task_id, "error": "unknown task"})
            continue
        task = known[task_id]
        if profile != "default":
            if profile not in task.get("profiles", {}):
                print(f"[END] task={task_id} error=the task has no {profile!r} profile", flush=True)
                results.append({"task_id": task_id, "error": f"no {profile!r} profile"})
                continue
            task = {**task, "tools": task["profiles"][profile]["tools"]}
        agent = LLMAgent(base_url=api_base, model=model, api_key=token)
        started = time.monotonic()
        tokens = 0
        print(f"[START] task={task_id} model={model}" + (f" profile={profile}" if profile != "default" else ""), flush=True)
        with WsDriver(env_url) as env:
            obs = env.reset(task_id, seed=0, **({"profile": profile} if profile != "default" else {}))
            agent.begin(task, obs, random.Random(0))
            done, step = bool(obs.get("done")), 0
            while not done:
                action = agent.act(obs)
                obs, reward, done = env.step(action)
                step += 1
                used = agent.usage()
                tokens += used.get("prompt_tokens", 0) + used.get("completion_tokens", 0)
                error = f" error={json.dumps(obs['error'])}" if obs.get("error") else ""
                print(f"[STEP] task={task_id} step={step} action={action.get('action_type')} reward={reward:.4f} done={str(done).lower()}{error}", flush=True)
        score = obs.get("grader_score") or 0.0
        print(f"[END] task={task_id} score={score:.4f} steps={step} tokens={tokens}", flush=True)
        results.append({
            "task_id": task_id, "score": score, "steps": step, "tokens": tokens, "cumulative_reward": obs.get("cumulative_reward"),
            "aliases": agent.aliases_used, "seconds": round(time.monotonic() - started, 2),
        })
    out.write_text(json.dumps({"model": model, "api_base_url": api_base, "profile": profile, "results": results}, indent=2) + "\n")
    print(f"results written to {out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
