"""Baseline inference: an OpenAI-compatible model plays the environment's tasks over /ws.

    API_BASE_URL=https://router.huggingface.co/v1 MODEL_NAME=meta-llama/Llama-3.1-70B-Instruct HF_TOKEN=hf_... \\
    ENV_BASE_URL=http://localhost:8000 [PROFILE=pdb] python inference.py [TASK_ID ...]

Plays easy, medium and hard (and any task ids named, in order). stdout carries only the lines OpenEnv
environments' baseline scripts share (env.eval.baseline_log), one each:

    [START] task=<task> env=agentdebugger-env model=<model>
    [STEP] step=<n> action=<action> reward=<0.00> done=<true|false> error=<msg|null>
    [END] success=<true|false> steps=<n> score=<0.000> rewards=<r1,r2,...>

``success``: the task was solved (classic) or resolved (repository, procedural); ``score``: the episode's
grade in [0, 1]. Retries, errors, tokens and where the results went are written to stderr.

One episode's failure does not end the run. The model endpoint's transient errors (timeouts, lost
connections, HTTP 408, 429, 5xx) are retried with exponential backoff (env.agents.retry); when the
attempts are spent, or on another episode's own error (a bad request, the environment's connection
closing, an unknown task, a profile the task lacks), the episode ends with ``[END] success=false`` and the
steps and rewards so far, its error is recorded, and the next task starts. A model reply that cannot be
parsed, as many times as the agent asks again, is recorded as its step's error (and the episode's).

A permanent error stops the run, since every further episode would fail the same way: the model endpoint
answering HTTP 401, 403 or 404 (or naming the model unknown), or refusing connections until the attempts
are spent (exit status 3); the environment server not reachable at ENV_BASE_URL, checked before the first
episode and after any episode that could not reach it, with two retries (exit status 4). stderr names the
URL. The exit status is 0 when the run completed, failed episodes included, and 2 when a setting is
invalid.

After every episode RESULTS_PATH (default inference_results.json) is rewritten, atomically, with every
episode so far (success, score, steps, rewards, tokens, seconds, profile, aliases, error, infra_causes); ``complete``
turns true after the last, and ``stopped`` holds the message of a permanent error that ended the run. A step the
machine decided (``infra_failed`` in its observation: the server did not count it) is neither a step nor a reward
of the model's: its cause goes to ``infra_causes`` (after three, the episode ends), stderr says the rate at the
end, and an episode with any is the machine's, to leave out of every statistic.

Environment: API_BASE_URL, MODEL_NAME, HF_TOKEN, ENV_BASE_URL, RESULTS_PATH; PROFILE chooses the tool
interface (default, bash, pdb, pdb_shell, minimal, trace: the model is offered that profile's tools, as the
episode's tools/list gives them); LLM_TIMEOUT_S (120), LLM_MAX_ATTEMPTS (5), LLM_BACKOFF_BASE_S (1), LLM_BACKOFF_MAX_S (30)
set one model request's timeout and its retries.
"""

from __future__ import annotations

import json
import logging
import os
import random
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path

import httpx
from pydantic import ConfigDict, Field

sys.path.insert(0, str(Path(__file__).resolve().parent))

from env import settings  # noqa: E402
from env.agents.base import Observation  # noqa: E402
from env.agents.llm import Endpoint, LLMAgent  # noqa: E402
from env.agents.retry import ModelUnavailable, RetryPolicy, describe  # noqa: E402
from env.eval.baseline_log import BENCHMARK, end_line, start_line, step_line  # noqa: E402
from env.eval.drivers import WsDriver  # noqa: E402
from env.infra import RETRIES as INFRA_RETRIES  # noqa: E402
from env.settings import setting  # noqa: E402

DEFAULT_TASKS = ["easy", "medium", "hard"]
EXIT_INVALID_SETTING, EXIT_MODEL, EXIT_ENVIRONMENT = 2, 3, 4
ENV_RETRY_DELAYS_S = (0.5, 1.0)  # a server that is restarting gets 1.5 s; one that is down is reported soon
MODEL_UNKNOWN_CODES = frozenset({"model_not_found", "model_not_supported"})  # OpenAI's and Hugging Face's router's


class TaskUnavailable(LookupError):
    """The environment does not offer this task (or not with the chosen profile)."""


class RunStopped(Exception):
    """A permanent error: every further episode would fail the same way, so the run stops with ``status``."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


def causes(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not seen for seen in chain):
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def unreachable(exc: BaseException) -> bool:
    """Nothing answered at the address: refused, unknown host, no route (not a timeout or a dropped connection)."""
    return any(isinstance(e, httpx.ConnectError | ConnectionRefusedError) for e in causes(exc))


def environment_unreachable(exc: BaseException) -> bool:
    import openai  # on an error only: the SDK takes ~0.4 s to import (the agent loads it when it first asks the model)

    return unreachable(exc) and not isinstance(exc, ModelUnavailable | openai.APIError)  # those are the model endpoint's


def model_stop(exc: BaseException, settings: Settings) -> RunStopped | None:
    """The model endpoint's error as a reason to stop, if it is one that the next request would meet too."""
    where = f"the model endpoint {settings.api_base}"
    if isinstance(exc, ModelUnavailable):
        if not unreachable(exc):
            return None  # timeouts, 429 and 5xx until the attempts were spent: the next episode may fare better
        return RunStopped(f"{where} is not reachable ({exc}); check API_BASE_URL", EXIT_MODEL)
    import openai

    if not isinstance(exc, openai.APIStatusError):
        return None
    said = describe(exc)
    if exc.status_code in (401, 403):
        return RunStopped(f"{where} refused the credentials ({said}); check HF_TOKEN", EXIT_MODEL)
    if exc.status_code == 404 or exc.code in MODEL_UNKNOWN_CODES:
        return RunStopped(f"{where} does not know the model {settings.model!r} ({said}); check MODEL_NAME and API_BASE_URL", EXIT_MODEL)
    return None


def check_environment(url: str, delays: tuple[float, ...] = ENV_RETRY_DELAYS_S) -> None:
    """Raise RunStopped unless the environment server answers /health, trying again after each of ``delays``."""
    for attempt, wait in enumerate((*delays, None), start=1):
        try:
            httpx.get(f"{url.rstrip('/')}/health", timeout=30).raise_for_status()
            return
        except httpx.HTTPError as exc:
            last = describe(exc)
            if wait is None:
                break
            note(f"the environment server at {url} did not answer ({last}); retry {attempt}/{len(delays)} in {wait:.1f}s")
            time.sleep(wait)
    raise RunStopped(f"the environment server at {url} is not reachable ({last}, {len(delays) + 1} attempts); "
                     "start it (make serve) or set ENV_BASE_URL", EXIT_ENVIRONMENT)


class Settings(Endpoint):
    """The run's settings: the model endpoint's (``Endpoint``), the environment's, where results go, and the retries."""

    model_config = ConfigDict(frozen=True, validate_default=True)

    env_url: str = setting("ENV_BASE_URL")
    results_path: Path = setting("RESULTS_PATH")
    profile: str = setting("PROFILE")
    retry: RetryPolicy = Field(default_factory=RetryPolicy)

    @classmethod
    def from_env(cls) -> Settings:
        return settings.load(cls, retry=RetryPolicy.from_env())  # invalid values fail here, before any episode


@dataclass
class EpisodeOutcome:
    """One task's outcome, as the results file records it."""

    task_id: str
    profile: str
    success: bool = False
    score: float = 0.0
    steps: int = 0
    rewards: list[float] = field(default_factory=list)
    tokens: int = 0
    seconds: float = 0.0
    cumulative_reward: float | None = None
    aliases: list[tuple[str, str]] = field(default_factory=list)
    error: str | None = None
    infra_causes: list[str] = field(default_factory=list)  # steps the machine decided (not counted by the server)
    stop: RunStopped | None = field(default=None, repr=False, compare=False)  # not in the results file


def emit(line: str) -> None:
    print(line, flush=True)  # stdout: [START] / [STEP] / [END] only


def note(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def offered_task(driver: WsDriver, task_id: str, profile: str) -> dict[str, object]:
    """The task's /tasks entry, with the profile's tools (a procedural id is generated on request)."""
    task = driver.task(task_id)
    if task is None:
        raise TaskUnavailable(f"unknown task {task_id!r}")
    if profile == "default":
        return task
    profiles = task.get("profiles") or {}
    if profile not in profiles:
        raise TaskUnavailable(f"the task has no {profile!r} profile")
    return {**task, "tools": profiles[profile]["tools"]}


def solved(env: WsDriver, obs: Observation) -> bool:
    info = obs.get("info") or {}
    if "resolved" in info:  # repository and procedural episodes say so in their last observation
        return bool(info["resolved"])
    return bool(env.client.state().get("solved"))  # a classic episode's state records whether a fix passed every check


def play(task_id: str, settings: Settings, connect: Callable[[str], WsDriver], make_agent: Callable[[], LLMAgent]) -> EpisodeOutcome:
    """One episode, start to [END], whatever fails on the way (the failure is recorded in ``error``)."""
    episode = EpisodeOutcome(task_id=task_id, profile=settings.profile)
    emit(start_line(task_id, settings.model))
    started = time.monotonic()
    agent: LLMAgent | None = None
    try:
        driver = connect(settings.env_url)
        task = offered_task(driver, task_id, settings.profile)
        agent = make_agent()
        with driver as env:
            obs = env.reset(task_id, seed=0, **({"profile": settings.profile} if settings.profile != "default" else {}))
            if not obs.get("done"):
                task = {**task, "tools": env.tools()}  # the model is offered the episode's tools: its tools/list
            agent.begin(task, obs, random.Random(0))
            done = bool(obs.get("done"))
            while not done:
                try:
                    action = agent.act(obs)
                finally:  # a turn that failed has spent tokens too
                    used = agent.usage()
                    episode.tokens += used.get("prompt_tokens", 0) + used.get("completion_tokens", 0)
                unparsed = getattr(agent, "unparsed", None)  # the action is the agent's own, not the model's
                if unparsed:
                    episode.error = unparsed
                    note(f"{task_id}: {unparsed}")
                obs, reward, done = env.step(action)
                if obs.get("infra_failed"):  # the machine's failure: not a step of the agent's, nor its reward
                    episode.infra_causes.append(str(obs.get("infra_cause")))
                    note(f"{task_id}: infrastructure failure ({obs.get('infra_cause')}), not counted: {obs.get('error')}")
                    if len(episode.infra_causes) >= INFRA_RETRIES:  # the machine keeps failing
                        break
                    continue
                episode.steps += 1
                episode.rewards.append(reward)
                error = "; ".join(e for e in (unparsed, obs.get("error")) if e)
                emit(step_line(episode.steps, action, reward, done, error or None))
            episode.score = float(obs.get("grader_score") or 0.0)
            episode.cumulative_reward = obs.get("cumulative_reward")
            episode.success = solved(env, obs)
    except Exception as exc:  # noqa: BLE001 (the model, the environment or the task: the run goes on, unless it cannot)
        episode.error = str(exc) if isinstance(exc, TaskUnavailable | ModelUnavailable) else describe(exc)  # those two say what failed
        if environment_unreachable(exc):
            episode.error = f"the environment server at {settings.env_url} did not answer: {episode.error}"  # httpx names no URL
        note(f"{task_id}: episode failed after {episode.steps} step(s): {episode.error}")
        episode.stop = model_stop(exc, settings)
        if episode.stop is None and environment_unreachable(exc):
            try:
                check_environment(settings.env_url)
            except RunStopped as stop:
                episode.stop = stop
    finally:
        episode.seconds = round(time.monotonic() - started, 2)
        episode.aliases = list(getattr(agent, "aliases_used", []))
        emit(end_line(episode.success, episode.steps, episode.score, episode.rewards))
    return episode


def write_results(path: Path, payload: Mapping[str, object]) -> None:
    """Write to a temporary file, then rename: a run cut at any moment leaves the last complete file, never a torn one."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(json.dumps(payload, indent=2) + "\n")
    os.replace(temporary, path)


def main(argv: list[str]) -> int:
    try:
        settings = Settings.from_env()
    except ValueError as exc:
        note(f"inference.py: {exc}")
        return EXIT_INVALID_SETTING
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(message)s")  # the retries' warnings
    task_ids = list(dict.fromkeys(DEFAULT_TASKS + argv))

    def make_agent() -> LLMAgent:
        return LLMAgent(base_url=settings.api_base, model=settings.model, api_key=settings.key or "", retry=settings.retry)

    header = {"model": settings.model, "api_base_url": settings.api_base, "env": BENCHMARK, "profile": settings.profile}
    results: list[dict[str, object]] = []
    write_results(settings.results_path, {**header, "complete": False, "results": results})
    try:
        check_environment(settings.env_url)  # before any episode: a server that is down would fail every one
    except RunStopped as stop:
        return stopped(stop, settings.results_path, {**header, "complete": False, "results": results})
    for task_id in task_ids:
        episode = play(task_id, settings, WsDriver, make_agent)
        results.append({f.name: getattr(episode, f.name) for f in fields(episode) if f.name != "stop"})
        payload = {**header, "complete": len(results) == len(task_ids), "results": results}
        write_results(settings.results_path, payload)
        note(f"{task_id}: success={str(episode.success).lower()} score={episode.score:.3f} steps={episode.steps} "
             f"tokens={episode.tokens} seconds={episode.seconds} profile={settings.profile}")
        if episode.stop is not None:
            return stopped(episode.stop, settings.results_path, {**payload, "complete": False})
    hit = [r for r in results if r["infra_causes"]]
    note(f"infrastructure failures: {len(hit)} of {len(results)} episodes ({100 * len(hit) / max(1, len(results)):.0f} %); "
         "their results are not the model's (leave them out of every statistic: `infra_causes` is not empty)")
    note(f"results written to {settings.results_path}")
    return 0  # failed episodes are results (success=false, their error recorded), not a failed run


def stopped(stop: RunStopped, path: Path, payload: Mapping[str, object]) -> int:
    write_results(path, {**payload, "stopped": str(stop)})
    note(f"results so far written to {path}")
    note(f"inference.py: stopped: {stop}")
    return stop.status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
