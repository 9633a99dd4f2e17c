"""An LLM agent for any OpenAI-compatible endpoint, using function calling (JSON actions as a fallback).

    agent = LLMAgent(base_url="https://router.huggingface.co/v1", model="meta-llama/Llama-3.1-70B-Instruct", api_key=token)
    agent.begin(task_summary, first_observation, rng)
    action = agent.act(observation)          # one model turn (or a few, if its reply was malformed)

- Tools come from the server: the episode's ``tools/list`` (the harness lists them after reset and
  hands them over as ``task["tools"]``; a classic task's are its three action types). A model that
  answers in text may write one JSON action instead.
- A malformed reply (no tool call and no JSON action, arguments that are not a JSON object, an
  unknown tool) is answered with the exact error and retried, up to ``retries`` times; then the
  agent gives up the episode rather than crash, and ``unparsed`` says why (what the last reply
  lacked and what was expected), for the harness to record as the step's error.
- Names models reach for (``str_replace``, ``cat``, ``bash``, ``finish`` ...) are mapped onto the
  episode's tools, with their arguments renamed, by the server's own table (``env.interface.ALIASES``), so
  that both sides read a name alike, and ``fix``/``query`` ... onto a classic task's actions
  (``env.interface.ACTION_ALIASES``); every aliased call is recorded in ``aliases_used``.
- Relays: after ``relay_turns`` turns the model writes a summary that starts a fresh context (and the
  agent sends ``new_relay`` where the profile has it, which re-locks the edit gate);
  ``max_relays`` and ``max_turns`` bound the episode (then it submits).
- Interface profiles: an episode's tools/list is its profile's tools.
- ``usage()`` reports the tokens of the last action (prompt and completion), for the trajectory.
- Transient endpoint failures (timeouts, lost connections, HTTP 408, 429, 5xx) are retried with
  exponential backoff (``env.agents.retry``: ``LLM_TIMEOUT_S``, ``LLM_MAX_ATTEMPTS``,
  ``LLM_BACKOFF_BASE_S``, ``LLM_BACKOFF_MAX_S``); when the attempts are spent ``act`` raises
  ``ModelUnavailable``. Other errors (bad auth, a bad request) are raised at once.
"""

from __future__ import annotations

import json
import random
from typing import Any

from pydantic import BaseModel, ConfigDict

from env import settings
from env.agents.base import Action, Agent, Observation, register
from env.agents.retry import RetryPolicy
from env.interface import ACTION_ALIASES, ALIASES
from env.settings import setting
from env.tool_schemas import submits_a_module

SYSTEM = (
    "You are debugging code. Read the task, investigate, and fix the bug. Act only by calling exactly one tool per turn "
    "(or, if you cannot call tools, reply with one JSON object such as {\"action_type\": \"run_tests\"})."
)
MAX_TEXT = 12000


def observation_text(obs: Observation) -> str:
    parts = []
    if obs.get("error"):
        parts.append(f"ERROR: {obs['error']}")
    for key in ("tool_output", "query_result"):
        if obs.get(key):
            parts.append(str(obs[key]))
    if obs.get("current_error_output"):
        parts.append("Test output:\n" + obs["current_error_output"])
    parts.append(f"(step {obs.get('step_number')}/{obs.get('max_steps')}, reward {obs.get('reward')}, tests passed {obs.get('tests_passed')}/{obs.get('tests_total')})")
    text = "\n".join(parts)
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "\n[... cut]"


def task_text(tools: list[dict[str, Any]], obs: Observation) -> str:
    if not submits_a_module(tools):
        return f"Issue:\n{obs.get('task_description')}\n\nThe repository is your workspace; use the tools to explore it, edit it, run the tests, then submit."
    return (f"Task: {obs.get('task_description')}\n\nBuggy module:\n```python\n{obs.get('buggy_code')}\n```\n\nTests:\n```python\n"
            f"{obs.get('test_suite')}\n```\n\nCurrent test output:\n{obs.get('current_error_output')}")


def default_tools(task: dict[str, Any]) -> list[dict[str, Any]]:
    """A task summary without its tools (one written by hand): its family's default profile's, as /tasks lists them.
    Asked only then: the family registry loads OpenEnv, which an agent process otherwise never imports."""
    from env.families.registry import FAMILIES

    tools: list[dict[str, Any]] = FAMILIES[task.get("family") or "classic"].listing()["tools"]
    return tools


class Malformed(ValueError):
    pass


class Endpoint(BaseModel):
    """The model endpoint the agent calls, as the settings choose it (``Endpoint.from_env()``, read when it is needed)."""

    model_config = ConfigDict(frozen=True)

    api_base: str = setting("API_BASE_URL")
    model: str = setting("MODEL_NAME")
    token: str | None = setting("HF_TOKEN")
    openai_key: str | None = setting("OPENAI_API_KEY")

    @classmethod
    def from_env(cls) -> Endpoint:
        return settings.load(cls)

    @property
    def key(self) -> str | None:
        """HF_TOKEN, else OPENAI_API_KEY."""
        return self.token or self.openai_key


def endpoint() -> str:
    """The model endpoint the agent calls, by the settings that choose it: what a message about it must name."""
    chosen = Endpoint.from_env()
    key = "HF_TOKEN" if chosen.token else "OPENAI_API_KEY" if chosen.openai_key else "no key (HF_TOKEN unset)"
    return f"API_BASE_URL={chosen.api_base}, MODEL_NAME={chosen.model}, {key}"


def missing_endpoint() -> str:
    """Why the agent has no endpoint to call, or "": the default endpoint, a hosted router, answers nobody without a key
    (an endpoint of one's own, API_BASE_URL, may need none)."""
    chosen = Endpoint.from_env()
    if chosen.key or "api_base" in chosen.model_fields_set:  # set: read from the environment
        return ""
    return (
        f"the llm agent has no model endpoint: set HF_TOKEN (or OPENAI_API_KEY) to call API_BASE_URL={chosen.api_base} "
        f"with MODEL_NAME={chosen.model}, or set API_BASE_URL to an OpenAI-compatible endpoint of your own"
    )


@register("llm")
class LLMAgent(Agent):
    def __init__(self, base_url: str = "", model: str = "", api_key: str = "", retries: int = 3, relay_turns: int = 20,
                 max_relays: int = 2, max_turns: int = 60, client: Any = None, retry: RetryPolicy | None = None):

        from openai import OpenAI

        chosen = Endpoint.from_env()
        self.model = model or chosen.model
        self.retry = retry or RetryPolicy.from_env()
        self.client = client or OpenAI(
            base_url=base_url or chosen.api_base,
            api_key=api_key or chosen.key or "none",
            max_retries=0,  # self.retry owns retries: the client's own would multiply its attempts
            timeout=self.retry.timeout_s,
        )
        self.retries, self.relay_turns, self.max_relays, self.max_turns = retries, relay_turns, max_relays, max_turns

    @classmethod
    def unready(cls) -> str:
        return missing_endpoint()

    def begin(self, task: dict[str, Any], observation: Observation, rng: random.Random) -> None:
        super().begin(task, observation, rng)
        self.tools = task.get("tools") or default_tools(task)
        self.names = [t["function"]["name"] for t in self.tools]
        self.intro = task_text(self.tools, observation)
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": self.intro}]
        self.pending_call: str | None = None
        self.turns = self.relays = self.turns_in_relay = 0
        self.aliases_used: list[tuple[str, str]] = []
        self.unparsed: str | None = None  # why the last action was not the model's (its replies could not be parsed)
        self._usage = {"prompt_tokens": 0, "completion_tokens": 0}

    def usage(self) -> dict[str, int]:
        return dict(self._usage)

    # -- one action --------------------------------------------------------------------------

    def act(self, observation: Observation) -> Action:
        self._usage = {"prompt_tokens": 0, "completion_tokens": 0}
        self.unparsed = None
        if self.turns > 0:
            self._answer(observation_text(observation))
        self.turns += 1
        self.turns_in_relay += 1
        if self.turns > self.max_turns:
            return {"action_type": "submit" if "submit" in self.names else "give_up"}
        if self.turns_in_relay > self.relay_turns:
            if self.relays >= self.max_relays:
                return {"action_type": "submit" if "submit" in self.names else "give_up"}
            self._relay()
            if "new_relay" in self.names:  # tell the server, so its edit gate locks again for the new context
                self.turns_in_relay = 0  # the marker is not one of the new relay's model turns
                return {"action_type": "new_relay"}
        reason = ""
        for _ in range(self.retries + 1):
            message = self._complete(tools=True)
            try:
                return self._action(message)
            except Malformed as exc:
                self._answer(f"Your reply could not be used: {exc}. Call exactly one of these tools: {', '.join(self.names)}.")
                reason = str(exc)
        # The step that follows is the agent's, not the model's: the harness must record why (``unparsed``).
        self.unparsed = (f"the model's reply could not be parsed ({self.retries + 1} replies; the last: {reason}); expected one call of "
                         f"one of these tools: {', '.join(self.names)}, or a JSON object with an \"action_type\"")
        return {"action_type": "give_up", "final_diagnosis": "the model's replies could not be parsed"} if "give_up" in self.names else {"action_type": "submit"}

    def _complete(self, tools: bool) -> Any:
        kwargs: dict[str, Any] = {"model": self.model, "messages": self.messages}
        if tools:
            kwargs["tools"] = self.tools
        response = self.retry.call(lambda: self.client.chat.completions.create(**kwargs))
        usage = getattr(response, "usage", None)
        if usage is not None:
            self._usage["prompt_tokens"] += int(getattr(usage, "prompt_tokens", 0) or 0)
            self._usage["completion_tokens"] += int(getattr(usage, "completion_tokens", 0) or 0)
        message = response.choices[0].message
        entry: dict[str, Any] = {"role": "assistant", "content": message.content or ""}
        if getattr(message, "tool_calls", None):
            call = message.tool_calls[0]  # one action per turn: extra calls are dropped
            entry["tool_calls"] = [{"id": call.id, "type": "function", "function": {"name": call.function.name, "arguments": call.function.arguments}}]
            self.pending_call = call.id
        else:
            self.pending_call = None
        self.messages.append(entry)
        return message

    def _answer(self, text: str) -> None:
        if self.pending_call is not None:
            self.messages.append({"role": "tool", "tool_call_id": self.pending_call, "content": text})
            self.pending_call = None
        else:
            self.messages.append({"role": "user", "content": text})

    def _action(self, message: Any) -> Action:
        calls = getattr(message, "tool_calls", None)
        if calls:
            name, raw = calls[0].function.name, calls[0].function.arguments or "{}"
        else:
            name, raw = "", _json_in(message.content or "")
        try:
            args = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError as exc:
            raise Malformed(f"the arguments are not valid JSON ({exc.msg} at position {exc.pos})") from None
        if not isinstance(args, dict):
            raise Malformed("the arguments must be a JSON object")
        if not name:
            name = str(args.pop("action_type", ""))
            if not name:
                raise Malformed("no tool call and no JSON object with an \"action_type\"")
        alias = (ALIASES.get(name) or ACTION_ALIASES.get(name)) if name not in self.names else None
        target = alias.pick(self.names) if alias is not None else None
        if alias is not None and target is not None:
            self.aliases_used.append((name, target))
            name, args = target, alias.renamed(args)
        if name not in self.names:
            raise Malformed(f"unknown tool {name!r}")
        return {"action_type": name, **args}

    def _relay(self) -> None:
        """Hand off to a fresh context: the model summarises what it knows, the summary starts the next one."""
        self._answer("Summarise what you have learned and tried so far, and what to do next, in under 300 words. Do not call a tool.")
        summary = self._complete(tools=False).content or ""
        self.relays += 1
        self.turns_in_relay = 1
        self.messages = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": self.intro + "\n\nNotes from your previous context:\n" + summary},
        ]
        self.pending_call = None


def _json_in(text: str) -> str:
    """The first {...} block of a text reply (models often wrap JSON in prose or fences)."""
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if 0 <= start < end else "{}"
