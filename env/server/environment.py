"""The OpenEnv ``Environment``: reset / step / state, and nothing else.

    env = DebugEnvironment()                          # in-process, as NeMo-Gym uses it
    obs = env.reset(task_id="easy", seed=1)
    obs = env.step(DebugAction(action_type="give_up"))
    obs = env.step(DebugAction(type="call_tool", tool_name="give_up", arguments={}))   # OpenEnv's tool protocol: the same step

Over WebSocket each connection owns one instance and its episode. Over plain HTTP the library
builds a throw-away instance per request, so episodes live in the server's EpisodeStore and are
found by the ``episode_id`` the observation carries, else by the episode cookie ``/reset`` set
(``EpisodeStore.find``); a request naming neither reaches no episode. An OpenEnv MCP session holds its
episode as a WebSocket does (``env.server.mcp``).
Blocking work (sandbox runs) goes to the runtime's worker threads, never the event loop.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import secrets
import time
import uuid
from collections.abc import Callable
from typing import Any, TypeVar, TypeVarTuple

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.mcp_types import CallToolAction, CallToolObservation, ListToolsObservation
from openenv.core.env_server.types import EnvironmentMetadata
from pydantic import ValidationError

from env import timing
from env.contract import SPLITS, Playable, Split, Task
from env.families.catalog import TaskCatalog, UnknownTask
from env.families.registry import FAMILIES
from env.infra import InfraFailure, from_os_error
from env.models import DebugAction, DebugObservation, DebugState
from env.runtime import Runtime
from env.scratch import without_scratch_paths
from env.server.episodes import ClientShareFull, EpisodeIdInUse, EpisodeNotFound, EpisodeStore, NoEpisodeNamed, StoreFull
from env.server.journal import Journal, JournalDown, Record
from env.server.mcp import SessionTools, plan, tool_observation
from env.server.metrics import ServerMetrics
from env.server.replica import Replica
from env.server.task_api import TaskSplits, out_of_range, split_named
from env.server.transport import HTTP_REQUEST

R = TypeVar("R")
Ts = TypeVarTuple("Ts")

DEFAULT_TASK = "easy"
# reset(index=...) naming no split: the test split's index-th task (test was the only split, and listed every task).
DEFAULT_SPLIT: Split = "test"
SHOWN_IDS = 60  # an unknown task_id's error lists this many ids (a built catalog serves thousands)
ENV_NAME = "agentdebugger-env"  # the name in OpenEnv's Task API routes (/agentdebugger-env/splits ...)
NO_EPISODE_ON_CONNECTION = (
    "no episode is running on this connection; send a reset first. A client that reconnected by itself (its connection "
    "closed: the replica holding its episode stopped or was killed) starts with none: that episode is lost"
)
INTERFACE_OPTIONS = ("profile", "edit_gate", "aliases")  # the reset options an episode's record keeps  # the action types that submit (classic, repository and procedural tasks)


@functools.cache
def default_runtime() -> Runtime:
    """What ``DebugEnvironment()`` uses without a runtime: the built-in tasks and ENV_TASK_DIRS, built once."""
    return Runtime.from_env(TaskCatalog.from_env())


def _refusal_reason(exc: Exception) -> str:
    """The /metrics label of a refused HTTP reset."""
    if isinstance(exc, ClientShareFull):
        return "sessions_per_client"
    return "http_episodes_full" if isinstance(exc, StoreFull) else "episode_id_in_use"


def _error_observation(message: str) -> DebugObservation:
    return DebugObservation(done=True, reward=0.0, error=message, info={"error": message})


def _infra_observation(failure: InfraFailure) -> DebugObservation:
    """A reset the machine, not the client, made fail: no episode started; reset again (here or elsewhere)."""
    obs = _error_observation(f"reset: {failure.message}")
    obs.infra_failed, obs.infra_cause = True, failure.cause
    obs.metadata = {"infra_failed": True, "infra_cause": failure.cause}
    return obs


class DebugEnvironment(Environment[DebugAction, DebugObservation, DebugState]):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(
        self, runtime: Runtime | None = None, store: EpisodeStore | None = None, replica: Replica | None = None, metrics: ServerMetrics | None = None,
        journal: Journal | None = None,
    ):
        super().__init__()
        self._runtime = runtime or default_runtime()
        self._store = store
        self._replica = replica or Replica()
        self._metrics = metrics
        self._journal = journal  # ENV_STORE: every episode recorded, so that another replica can take it over
        self._episode: Playable | None = None
        # OpenEnv's JSON-RPC handler sends a session's tools/list and tools/call to an environment's mcp_client
        self.mcp_client = SessionTools(self, NO_EPISODE_ON_CONNECTION)

    @property
    def episode(self) -> Playable | None:
        """This environment's own episode (in process, over WebSocket)."""
        return self._episode

    # -- OpenEnv's task discovery API (GET /{env}/splits, POST /{env}/tasks ...; env.server.task_api serves it) -------

    def list_splits(self) -> list[dict[str, Any]]:
        return TaskSplits(self._runtime.catalog).list_splits()

    def list_tasks(self, split: str) -> list[dict[str, Any]]:
        return TaskSplits(self._runtime.catalog).list_tasks(split)

    def num_tasks(self, split: str) -> int:
        return TaskSplits(self._runtime.catalog).num_tasks(split)

    def get_task(self, split: str, index: int) -> dict[str, Any]:
        return TaskSplits(self._runtime.catalog).get_task(split, index)  # IndexError past the end

    def get_task_range(self, split: str, start: int | None = None, stop: int | None = None) -> list[dict[str, Any]]:
        return TaskSplits(self._runtime.catalog).get_task_range(split, start, stop)

    # -- sync API (in-process use) ---------------------------------------------------------

    def _new_episode(
        self, seed: int | None, episode_id: str | None, task_id: str | None, index: int | None = None, options: dict[str, Any] | None = None,
        exact_id: str | None = None,
    ) -> Playable | DebugObservation:
        """``options``: the reset's other fields; ``profile``, ``edit_gate`` and ``aliases`` choose the interface."""
        # Over /ws the reset's fields arrive as the client sent them, unvalidated.
        if task_id is not None and not isinstance(task_id, str):
            return _error_observation(f"reset: 'task_id' must be a string, not {type(task_id).__name__}")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            return _error_observation(f"reset: 'seed' must be an integer, not {type(seed).__name__}")
        if episode_id is not None and not isinstance(episode_id, str):
            return _error_observation(f"reset: 'episode_id' must be a string, not {type(episode_id).__name__}")
        options = options or {}
        task = self._chosen(task_id, index, options.pop("split", None))
        if isinstance(task, str):
            return _error_observation(task)
        name = task.id
        seed = secrets.randbits(31) if seed is None else seed
        family = FAMILIES[task.family]
        refused = family.refusal(task)
        if refused:
            return _error_observation(f"task {name!r} cannot be served here: {refused}")
        try:
            interface = family.interface(options.get("profile"), options.get("edit_gate"), options.get("aliases"))
        except (ValueError, ValidationError) as exc:
            return _error_observation(f"reset: {exc}")
        episode_id = exact_id or self._replica.tag(episode_id or str(uuid.uuid4()))  # exact: a lost replica's, rebuilt
        with self._runtime.cpu.owner(episode_id):  # the first runs (a baseline, a workspace's) share the CPU slots fairly
            try:
                return family.episode(self._runtime, task, seed, episode_id, interface)
            except InfraFailure as exc:
                return _infra_observation(exc)
            except MemoryError:  # the server's own: building an episode runs no code of the client's
                return _infra_observation(InfraFailure("trusted_memory", f"the server ran out of memory while it started task {name!r}"))
            except OSError as exc:  # the episode's workspace or scratch copies: the machine's when it is full
                failure = from_os_error(exc, f"starting task {name!r}")
                if failure is None:
                    raise
                return _infra_observation(failure)

    def _chosen(self, task_id: str | None, index: object, split: object) -> Task | str:
        """The task a reset names (by ``task_id``; by ``index`` within ``split``, the test split by default), or why none."""
        known = split_named(split)
        if split is not None and known is None:
            return f"reset: 'split' must be one of {', '.join(SPLITS)}, not {split!r}"[:300]
        if task_id is None and index is not None:  # reset(split=..., index=...) as the task API suggests
            ids = self._runtime.catalog.ids(known or DEFAULT_SPLIT)
            if isinstance(index, bool) or not (isinstance(index, int) and 0 <= index < len(ids)):
                return out_of_range(index, known or DEFAULT_SPLIT, len(ids))
            task_id = ids[index]
        elif known is not None and task_id is None:
            return f"reset: 'split' chooses a task with 'index' (the split's index-th task, as POST /{ENV_NAME}/task answers)"
        name = task_id or DEFAULT_TASK
        try:
            task = self._runtime.catalog.get(name)
        except UnknownTask:
            return self._unknown(name)
        if known is not None and known != (served := self._runtime.catalog.summary(task)["split"]):
            return f"reset: task {name!r} is in the {served} split, not {known}"
        return task

    def _unknown(self, name: str) -> str:
        ids = self._runtime.catalog.ids()
        listed = ", ".join(ids[:SHOWN_IDS]) + (f" and {len(ids) - SHOWN_IDS} more (GET /tasks lists them)" if len(ids) > SHOWN_IDS else "")
        made = "".join(f", or any {family.generated_ids}" for family in FAMILIES.values() if family.generated_ids)
        return f"unknown task_id {name!r}; available: {listed}{made}"

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, task_id: str | None = None, index: int | None = None, **options: Any
    ) -> DebugObservation:
        made = self._new_episode(seed, episode_id, task_id, index, options)
        if isinstance(made, DebugObservation):
            return made
        self._episode = made
        return self._first_observation(made)

    def _first_observation(self, episode: Playable) -> DebugObservation:
        obs = without_scratch_paths(episode.observe(0.0, {}), self._runtime.scratch_roots)
        # a run records it, so a resumed run or a replay on a server with another secret says so
        obs.info["secret_fingerprint"] = self._runtime.secret.fingerprint
        if self._replica.name:
            obs.info["replica"] = self._replica.name
        return obs

    def _refused(self, reason: str, message: str) -> DebugObservation:
        if self._metrics is not None:
            self._metrics.refused(reason)
        return _error_observation(message)

    def _stepped(self, episode: Playable, action: DebugAction, obs: DebugObservation) -> DebugObservation:
        if self._metrics is not None and obs.infra_failed:
            self._metrics.infra_failed(obs.infra_cause or "")
        elif self._metrics is not None:
            self._metrics.step(episode.family, episode.submits(action.action_type))
        if self._replica.draining and not obs.done:
            obs.info["replica_going_away"] = self._replica.going_away()
        return obs

    def step(  # type: ignore[override]  # a tool protocol step answers with OpenEnv's MCP observations (see step_async)
        self, action: DebugAction, timeout_s: float | None = None, **kwargs: Any
    ) -> DebugObservation | ListToolsObservation | CallToolObservation:
        if self._episode is None:
            return _error_observation("no episode is running; call reset first")
        planned = plan(self._episode, action)
        if not isinstance(planned, tuple):
            return planned
        stepped, tool = planned
        obs = self._episode.step(stepped)
        return obs if tool is None else tool_observation(tool, obs)

    def files(self) -> dict[str, str]:
        """The episode's files as they are now: a classic task's module, a repository's whole tree.
        In-process only (a trajectory replay shows each step's diff from it); agents never see it."""
        return self._episode.files() if self._episode is not None else {}

    @property
    def state(self) -> DebugState:
        """This environment's episode (in process, over WebSocket); over HTTP the server's /state route finds it."""
        return self._episode.state() if self._episode else DebugState()

    # -- async API (what the server calls) ----------------------------------------------------

    async def _offload(self, fn: Callable[[*Ts], R], *args: *Ts) -> R:
        # run in the caller's context (run_in_executor alone would drop it): a request's timing recorder sees the work
        queued = time.perf_counter()

        def run() -> R:
            timing.add("queue", time.perf_counter() - queued)
            return fn(*args)

        return await asyncio.get_running_loop().run_in_executor(self._runtime.executor, contextvars.copy_context().run, run)

    async def reset_async(
        self, seed: int | None = None, episode_id: str | None = None, task_id: str | None = None, index: int | None = None, **options: Any
    ) -> DebugObservation:
        if self._replica.draining:
            return self._refused("draining", self._replica.refusal())
        if options.pop("resume", False):  # a client whose replica is gone names its episode: taken over here
            return await self._resume(episode_id)
        interface = {k: options[k] for k in INTERFACE_OPTIONS if k in options}
        with timing.phase("reset"):
            made = await self._offload(self._new_episode, seed, episode_id, task_id, index, options)
        if isinstance(made, DebugObservation):
            if made.infra_failed and self._metrics is not None:
                self._metrics.infra_failed(made.infra_cause or "")
            return made
        if self._journal is not None:
            state = made.state()
            reset = {"task_id": state.task_id, "seed": state.seed, "options": interface, "secret_fingerprint": state.secret_fingerprint}
            try:
                await self._offload(self._journal.started, made.episode_id, reset)
            except JournalDown as exc:
                await self._offload(made.close)
                return self._refused("store_down", str(exc))
        request = HTTP_REQUEST.get()
        if request is not None and self._store is not None:
            try:
                self._store.add(made, request.client)
            except (StoreFull, EpisodeIdInUse) as exc:
                await self._offload(made.close)  # a repository episode removes its workspace
                return self._refused(_refusal_reason(exc), str(exc))
            request.started = made.episode_id
        else:
            self._replica.sessions.add(self)  # a WebSocket session: counted until it closes
        if self._episode is not None and self._episode is not made:
            await self._offload(self._episode.close)  # a second reset on one connection ends the first episode
        self._episode = made
        return self._first_observation(made)

    # A tool protocol step answers with OpenEnv's own MCP observations (the library serialises any Observation; its
    # MCP clients parse them by their fields), so the return type is wider than the Environment's observation type.
    async def step_async(  # type: ignore[override]
        self, action: DebugAction, timeout_s: float | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> DebugObservation | ListToolsObservation | CallToolObservation:
        episode = self._episode
        request = HTTP_REQUEST.get()
        if request is not None and self._store is not None:
            if episode_id is not None and not isinstance(episode_id, str):
                return _error_observation("'episode_id' must be a string")
            try:
                episode = self._store.find(episode_id, request.cookie_episode)
            except EpisodeNotFound as exc:
                named = episode_id or request.cookie_episode or ""
                taken = await self._take_over(named, request.client) if named and not isinstance(exc, NoEpisodeNamed) else None
                if isinstance(taken, DebugObservation):
                    return taken
                if taken is None:
                    reason = "no_episode_named" if isinstance(exc, NoEpisodeNamed) else "unknown_episode"
                    return self._refused(reason, self._replica.lost(named) or str(exc))
                answer = await self._step_episode(taken, action)
                if isinstance(answer, DebugObservation):  # the first answer after a take-over says so (a debugger restarted)
                    answer.info.update(resumed=True)
                return answer
        if episode is None:
            return _error_observation(NO_EPISODE_ON_CONNECTION)
        return await self._step_episode(episode, action)

    async def call_tool(self, episode: Playable, call: CallToolAction) -> CallToolObservation:
        """A tool call sent as JSON-RPC (``tools/call``): stepped as the same call sent through ``step``."""
        answer = await self._step_episode(episode, call)
        assert isinstance(answer, CallToolObservation)  # a call is answered as one, stepped or refused
        return answer

    async def _step_episode(
        self, episode: Playable, request: DebugAction | CallToolAction
    ) -> DebugObservation | ListToolsObservation | CallToolObservation:
        # An action, or OpenEnv's tool protocol ({"type": "list_tools" | "call_tool", ...}): a call is the DebugAction
        # the action wire takes for it, stepped as that wire steps it.
        planned = plan(episode, request)
        if not isinstance(planned, tuple):
            return planned
        action, tool = planned
        obs = self._stepped(episode, action, await self._offload(episode.step, action))
        if self._journal is not None and not obs.infra_failed:  # answered only once recorded: a replay takes it too
            try:
                await self._offload(self._journal.acted, episode.episode_id, action.model_dump(exclude_unset=True))
            except JournalDown as exc:
                obs.error = f"{obs.error}; {exc}" if obs.error else f"this step ran, but {exc}"
                obs.info["unrecorded"] = True
        return obs if tool is None else tool_observation(tool, obs)

    # -- taking over an episode whose replica is gone (ENV_STORE) --------------------------------------------------

    def _rebuilt(self, episode_id: str, record: Record) -> Playable | DebugObservation:
        """The episode as its lost replica held it: the same task, seed and id, its recorded actions replayed."""
        reset = record.reset
        if reset.get("secret_fingerprint") != self._runtime.secret.fingerprint:
            return _error_observation(
                f"episode {episode_id!r} was recorded by a replica with another secret ({reset.get('secret_fingerprint')}, this one's "
                f"{self._runtime.secret.fingerprint}): it cannot be rebuilt here; replicas that take over each other's episodes share ENV_SECRET"
            )
        made = self._new_episode(reset.get("seed"), None, reset.get("task_id"), None, dict(reset.get("options") or {}), exact_id=episode_id)
        if isinstance(made, DebugObservation):
            return made
        for action in record.actions:
            made.step(DebugAction.model_validate(action))
        return made

    async def _take_over(self, episode_id: str, client: str) -> Playable | DebugObservation | None:
        """An HTTP episode this replica does not hold, rebuilt from the store and kept (None: the store has none)."""
        if self._journal is None or self._store is None:
            return None
        try:
            record = await self._offload(self._journal.recorded, episode_id)
        except JournalDown as exc:
            return self._refused("store_down", str(exc))
        if record is None:
            return None
        made = await self._offload(self._rebuilt, episode_id, record)
        if isinstance(made, DebugObservation):
            return made
        try:
            self._store.add(made, client)
        except EpisodeIdInUse:  # another request rebuilt it first: that one is the episode
            await self._offload(made.close)
            return self._store.get(episode_id)
        except StoreFull as exc:
            await self._offload(made.close)
            return self._refused(_refusal_reason(exc), str(exc))
        return made

    async def _resume(self, episode_id: str | None) -> DebugObservation:
        """reset(episode_id=..., resume=True) on a WebSocket: this connection takes over a recorded episode."""
        if self._journal is None:
            return _error_observation("reset: resume needs an episode store: this server has none (ENV_STORE)")
        if not isinstance(episode_id, str) or not episode_id:
            return _error_observation("reset: resume names the episode to take over: episode_id")
        try:
            record = await self._offload(self._journal.recorded, episode_id)
        except JournalDown as exc:
            return self._refused("store_down", str(exc))
        if record is None:
            return _error_observation(f"reset: no episode {episode_id!r} is recorded in the episode store (finished long ago, or never started)")
        made = await self._offload(self._rebuilt, episode_id, record)
        if isinstance(made, DebugObservation):
            return made
        request = HTTP_REQUEST.get()
        if request is not None and self._store is not None:  # over HTTP the store holds it, as a /reset's episode
            try:
                self._store.add(made, request.client)
            except (StoreFull, EpisodeIdInUse) as exc:
                await self._offload(made.close)
                return self._refused(_refusal_reason(exc), str(exc))
            request.started = made.episode_id
        else:
            if self._episode is not None:
                await self._offload(self._episode.close)
            self._replica.sessions.add(self)
        self._episode = made
        obs = self._first_observation(made)
        obs.info.update(resumed=True, replayed_actions=len(record.actions))
        return obs

    def close(self) -> None:
        # A WebSocket session's own episode ends with it; HTTP episodes live in the store.
        if self._episode is not None and (self._store is None or self._store.get(self._episode.episode_id) is not self._episode):
            self._episode.close()
        self._episode = None
        self._replica.sessions.discard(self)

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name=ENV_NAME,
            description=(
                "Iterative debugging environment: read failing code and tests, form a hypothesis, submit fixes, "
                "and get a dense reward per step plus an episode grade whose verdict the agent's code cannot forge."
            ),
            version="1.0.0",
            author="AgentDebuggerEnv",
        )
