"""What a task family is, and the step loop every family's episodes share.

    class MyFamily(Family[MyTask]):         # env/families/<name>/family.py
        name = "mine"
        def load(self, folder, data): ...   # a task folder's task.json -> a task
        def interface(self, profile, edit_gate, aliases): ...
        def episode(self, runtime, task, seed, episode_id, interface): ...

and one line in ``env/families/registry.py``. A family's episodes subclass :class:`Episode` and write
only what differs: what an action does (``act``), how the episode ends (``finish``), what the agent
sees (``observe``) and what ``state()`` adds.

A family also owns what the commands around the server ask of its tasks: the oracle's actions, the recorded
overfit, the degenerate policies and the smoke trajectory (the validator, the oracle agent), validation
(``python -m env.authoring validate``), its part of an evaluation report, and whether its tasks are repositories
(the authoring commands and SWE-bench predictions). The base raises NotImplementedError for each: no family
falls through to another's behaviour.
"""

from __future__ import annotations

import json
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, TypedDict, TypeVar

from env import rewards, timing
from env.contract import Split, Task
from env.families.folders import FolderError, check_links
from env.families.policies import HypothesisKind
from env.families.validation import TaskValidation
from env.infra import InfraCause, InfraFailure, from_os_error
from env.interface import PROFILES, Interface
from env.models import DebugAction, DebugObservation, DebugState
from env.project import RepoTask
from env.runtime import Runtime
from env.scratch import without_scratch_paths
from env.timing import phase
from env.tools import TOOLS, ToolError
from env.tools.base import UnknownTool

TaskT = TypeVar("TaskT", bound=Task)
# One action as a client sends it to /step: {"action_type": ..., its fields}.
Action = dict[str, Any]
# One episode's line of an evaluation's results.jsonl (env.eval.run): agent, task_id, family, score, solved ...
ResultRow = dict[str, Any]

# Task data lives beside the package, not in it: tasks/<family>/<id>/ (its grading assets stay unreadable to runs).
TASKS_DIR = Path(__file__).resolve().parents[2] / "tasks"


class TaskLoadError(ValueError):
    pass


def read_task(folder: Path) -> dict[str, Any]:
    """A task folder's task.json, read once the folder's links are checked (``env.families.folders``): whatever loads
    a folder reads it here first, so no file it serves lies outside it."""
    try:
        check_links(folder)
    except FolderError as exc:
        raise TaskLoadError(f"{folder}: {exc}") from None
    try:
        data = json.loads((folder / "task.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise TaskLoadError(f"{folder}: cannot read task.json: {exc}") from None
    if not isinstance(data, dict):
        raise TaskLoadError(f"{folder}: task.json must hold an object, not {type(data).__name__}")
    return data


def task_folders(path: Path) -> list[Path]:
    """``path`` itself if it is a task folder, else the task folders directly inside it (sorted)."""
    if (path / "task.json").is_file():
        return [path]
    if not path.is_dir():
        raise TaskLoadError(f"{path}: no such task folder or directory")
    return sorted(p for p in path.iterdir() if (p / "task.json").is_file())


class Family(ABC, Generic[TaskT]):
    """One kind of task (``TaskT``, its task model): how its tasks load, which profiles serve it, what its episodes
    are, how it grades."""

    name: ClassVar[str]
    description: ClassVar[str]
    # Called with the episode's recorded facts (each family its own); named here so a reader finds a family's grade
    # from its family, never called through Family.
    grader: ClassVar[Callable[..., object]]
    # The agent sees only the files it has opened: a scripted solver opens a file before editing it.
    partial_view: ClassVar[bool] = False
    # What the agent does: submit a whole corrected module ("code"), or use tools on a workspace ("tools").
    interaction: ClassVar[str] = "tools"
    # The ids ``generate`` makes on request, as a pattern for people ("" when it makes none): what an unknown id's
    # error offers besides the listed ones.
    generated_ids: ClassVar[str] = ""

    @abstractmethod
    def load(self, folder: Path, data: dict[str, Any]) -> TaskT:
        """A task folder whose task.json names this family (``data`` is that file); ValueError if it is not valid."""

    def builtin(self) -> list[TaskT]:
        """The tasks every server lists: by default every folder under tasks/<family name>/."""
        folder = TASKS_DIR / self.name
        return [self.load_folder(f) for f in task_folders(folder)] if folder.is_dir() else []

    def listed(self) -> list[tuple[str, Split]]:
        """Ids every server lists beside ``builtin()`` but that ``generate`` makes only when first asked for (a listing
        naming them, a reset), each with its split: none by default."""
        return []

    def spot_checked(self, ids: list[str]) -> list[str]:
        """Which of this family's listed ``ids`` a whole-server check plays when asked for none (validator.py, policy v2):
        all by default; a family listing many seeds of one generated task plays fewer (its validity is proven task by
        task with ``python -m env.authoring validate``)."""
        return ids

    def split(self, task: TaskT) -> Split:
        """The split ``task`` is served in when no built catalog places it (``ENV_CATALOG`` does): by default ``test``,
        since the bundled tasks and task folders are the evaluation set."""
        return "test"

    def load_folder(self, folder: Path, data: dict[str, Any] | None = None) -> TaskT:
        """The task in ``folder`` (``data``: its task.json when already read), or TaskLoadError naming the folder."""
        if data is None:
            data = read_task(folder)
        try:
            return self.load(folder, data)
        except ValueError as exc:
            raise TaskLoadError(f"{folder}: {exc}") from None

    def generate(self, task_id: str) -> TaskT | None:
        """A task made on request from its id (not listed; ``generated_ids`` says which), or None when the id is not
        this family's."""
        return None

    def generated_id(self, *parts: str | int) -> str:
        """The id of the task ``generate`` makes from ``parts`` (a family whose tasks are made from ids says how)."""
        raise NotImplementedError(f"the {self.name} family makes no task from the parts of an id")

    def refusal(self, task: TaskT) -> str:
        """Why this server cannot serve ``task`` faithfully ("" when it can): reset answers it as an error."""
        return ""

    @abstractmethod
    def interface(self, profile: str | None = None, edit_gate: bool | None = None, aliases: object = None) -> Interface:
        """The episode's tools under ``profile``; ValueError naming the profiles this family serves when it does not serve it."""

    @abstractmethod
    def episode(self, runtime: Runtime, task: TaskT, seed: int, episode_id: str, interface: Interface | None = None) -> Episode:
        """A new episode of ``task`` (a task this family loaded), under ``interface`` (the default profile's when None)."""

    def actions(self) -> dict[str, dict[str, Any]]:
        """The family's action types as GET / describes them (their fields and what they do), for a family whose
        agents act with a fixed set of actions rather than a profile's tools."""
        return {}

    def own_tools(self) -> list[dict[str, Any]]:
        """Function definitions of the actions the episode answers itself (not registered tools)."""
        return []

    def tools(self, interface: Interface) -> list[dict[str, Any]]:
        """The tools an episode under ``interface`` offers, as OpenAI function definitions: what /tasks publishes for its
        profile and what the tool protocol lists (``tools/list``)."""
        return self.own_tools() + interface.schemas()

    def profiles(self) -> dict[str, dict[str, Any]]:
        """Every profile this family serves: its description, edit gate, action names and tool definitions."""
        served = {}
        for name in PROFILES:
            try:
                interface = self.interface(name)
            except ValueError:
                continue  # not offered for this family
            served[name] = {
                "description": interface.profile.description, "edit_gate": interface.edit_gate, "actions": list(interface.tools),
                "tools": self.tools(interface),
            }
        return served

    def listing(self) -> dict[str, Any]:
        """What /tasks adds to each of this family's tasks: how agents act, its tools, each profile's tools."""
        profiles = self.profiles()
        return {"interaction": self.interaction, "partial_view": self.partial_view, "tools": profiles["default"]["tools"], "profiles": profiles}

    # -- the task's lifecycle around the server: scripted plays, validation, reports, exports -------------

    def oracle_actions(self, task: TaskT) -> list[Action]:
        """The gold fix played through the API (it reads the task's folder): the last action submits, grade >= 0.9."""
        raise self._unwritten("oracle_actions")

    def overfit_actions(self, task: TaskT) -> list[Action] | None:
        """The task's recorded overfit played through the API (a fix that fits only the visible tests: the held-out
        tests must keep it unresolved), or None if the task has none."""
        raise self._unwritten("overfit_actions")

    def overfit_ceiling(self, oracle_grade: float) -> float:
        """The highest grade the recorded overfit may earn, given the oracle's on the same task."""
        raise self._unwritten("overfit_ceiling")

    def degenerate_policies(self, task: TaskT, hypothesis: HypothesisKind = "wrong") -> dict[str, list[Action]]:
        """Action lists that fix nothing, by name (``env.families.policies``): each must grade exactly 0.0 and its step
        rewards sum to <= 0, with any hypothesis (``hypothesis`` says which, where the family's actions claim one)."""
        raise self._unwritten("degenerate_policies")

    def smoke_actions(self, task: TaskT) -> list[Action]:
        """A mixed trajectory (looking around, a wrong try) ending in the gold fix: the validator plays it twice under
        one seed, and the rewards must be identical."""
        raise self._unwritten("smoke_actions")

    def read_only_actions(self, task: TaskT) -> list[Action]:
        """Steps that show the most an agent can see before it fixes anything (no edit, no submission)."""
        raise self._unwritten("read_only_actions")

    def seeded_actions(self, task: TaskT) -> list[Action]:
        """Steps whose observation is drawn from the episode's seed, so that another seed shows another start
        (the validator's seed check); [] when nothing an episode shows depends on the seed."""
        raise self._unwritten("seeded_actions")

    def solution_lines(self, task: TaskT) -> list[str]:
        """The lines only the gold fix has (``env.families.policies.gold_only_lines``): no observation before a fix
        may show one."""
        raise self._unwritten("solution_lines")

    def attack_actions(self, task: TaskT) -> dict[str, list[Action]]:
        """The integrity reviews' attack classes played against ``task``, by name (each keeps the bug and tries to
        look fixed): canaries that must grade at or below the floor."""
        raise self._unwritten("attack_actions")

    def a_visible_test(self, task: TaskT) -> str:
        """A test the agent can see, to start the debugger on (one debugger command opens an edit gate)."""
        raise self._unwritten("a_visible_test")

    def validate(self, runtime: Runtime, task: TaskT, runs: int, tasks_dir: Path = TASKS_DIR) -> TaskValidation:
        """Proof that ``task`` is valid, measured over ``runs`` runs of its buggy and gold states
        (``env.families.validation`` holds the checks every family shares). A task bundled under ``tasks_dir``
        (``tasks/<family>/``) may have more to prove: the family says what."""
        raise self._unwritten("validate")

    def repository(self, task: TaskT) -> RepoTask | None:
        """The task as a repository (its files, tests, test requirements and SWE-bench instance id), for the
        authoring commands and predictions; None when this family's tasks are not repositories."""
        raise self._unwritten("repository")

    def report_table(self, rows: list[ResultRow]) -> str:
        """This family's own section of an evaluation report, from its episodes' result rows ("" for none)."""
        raise self._unwritten("report_table")

    def _unwritten(self, method: str) -> NotImplementedError:
        return NotImplementedError(f"the {self.name!r} family does not define {method}: write {type(self).__name__}.{method}")

    def __repr__(self) -> str:
        return f"<family {self.name}>"


@dataclass
class Turn:
    """What one step produced besides the episode's own changes."""

    parts: rewards.Breakdown = field(default_factory=dict)
    error: str | None = None
    query_result: str | None = None
    tool_output: str | None = None


class StateParts(TypedDict, total=False):
    """A family's own part of ``state()``: fields of :class:`~env.models.DebugState`."""

    attempts_used: int
    max_attempts: int
    tests_passed: int
    queries_used: int
    grader_score: float | None


class Episode(ABC):
    """The step loop: one step at a time (a lock), the step budget, truncation and the reward bookkeeping.

    Rewards come from the pure functions in ``env.rewards``; grades from the family's grader, from facts the
    subclass records. An agent's mistake (one of ``mistakes``) costs the step and nothing else.
    """

    mistakes: ClassVar[tuple[type[Exception], ...]] = (ToolError,)

    # A family's episode narrows it to its own task model (``task: RepoTask``).
    task: Task

    def __init__(self, runtime: Runtime, task: Task, seed: int, episode_id: str, interface: Interface):
        self.runtime, self.task, self.seed, self.episode_id, self.interface = runtime, task, seed, episode_id, interface
        self.lock = threading.Lock()
        self.last_active = time.monotonic()
        self.last_call: dict[str, str] = {}
        self.last_data: dict[str, Any] = {}
        self.step_number = 0
        self.cumulative_reward = 0.0
        self.done = self.solved = self.gave_up = self.truncated = False
        self.infra_failures: list[InfraCause] = []  # the causes of the steps the machine decided (not counted)

    # -- what a family writes -----------------------------------------------------------------

    @abstractmethod
    def act(self, action: DebugAction, turn: Turn) -> None:
        """Apply one action: record facts, put the step's reward parts and outputs in ``turn``; raise a mistake."""

    @abstractmethod
    def finish(self) -> None:
        """End the episode now (the step budget ran out): grade it and release what only steps need."""

    @abstractmethod
    def observe(
        self, reward: float, parts: rewards.Breakdown, error: str | None = None, query_result: str | None = None, tool_output: str | None = None,
    ) -> DebugObservation:
        """What the agent sees after a step (and the step's outputs: a query's answer, a tool's output)."""

    @abstractmethod
    def state_fields(self) -> StateParts:
        """The family's own part of ``state()``: attempts, tests passed, the grade."""

    @abstractmethod
    def files(self) -> dict[str, str]:
        """The episode's files as they are now: in process only (a replay shows each step's diff from it)."""

    @abstractmethod
    def close(self) -> None:
        """Release what the episode holds (a workspace, a debugging session); safe to call twice."""

    # -- the shared loop ----------------------------------------------------------------------

    def step(self, action: DebugAction) -> DebugObservation:
        with phase("step"):
            return self._step(action)

    def _step(self, action: DebugAction) -> DebugObservation:
        waiting = time.perf_counter()
        with self.lock:
            timing.add("lock", time.perf_counter() - waiting)
            self.last_active = time.monotonic()
            if self.done:
                return self.observe(0.0, {}, error="the episode is over; call reset to start a new one")
            self.step_number += 1
            self.last_call, self.last_data = {}, {}
            turn = Turn()
            mistake: type[Exception] | None = None
            with self.runtime.cpu.owner(self.episode_id):  # the step's runs share the CPU slots fairly with other episodes
                try:
                    self.act(action, turn)
                except self.mistakes as exc:
                    turn.error, mistake = str(exc), type(exc)
                except InfraFailure as exc:
                    return self._infra_failed(exc)
                except MemoryError:  # the trusted side's (the code runs in its own process; a submission is at most 64 KiB)
                    return self._infra_failed(InfraFailure("trusted_memory", f"the server ran out of memory while the step {action.action_type!r} ran"))
                except OSError as exc:  # the trusted side's own files (a workspace, a scratch copy): the machine's when full
                    failure = from_os_error(exc, f"the step {action.action_type!r} ran")
                    if failure is None:
                        raise
                    return self._infra_failed(failure)
                if not self.done and self.step_number >= self.task.max_steps:
                    self.truncated = True
                    turn.parts.update(rewards.truncation_reward())
                    self.finish()
            if self.unpaid() and turn.parts:  # kept in the breakdown under their names, paid nothing
                turn.parts = {f"unpaid.{name}": value for name, value in turn.parts.items()}
            reward = 0.0 if self.unpaid() else rewards.total(turn.parts)
            self.cumulative_reward = round(self.cumulative_reward + reward, 6)
            with phase("observe"):
                obs = self.observe(reward, turn.parts, error=turn.error, query_result=turn.query_result, tool_output=turn.tool_output)
                return without_scratch_paths(obs, self.runtime.scratch_roots).with_mistake(mistake)

    def _infra_failed(self, failure: InfraFailure) -> DebugObservation:
        """The machine, not the agent, decided this step: it pays nothing and is not counted (the agent may take it
        again); the observation says so, and the episode records the cause."""
        self.step_number -= 1
        self.infra_failures.append(failure.cause)
        obs = self.observe(0.0, {}, error=failure.message)
        obs.infra_failed, obs.infra_cause = True, failure.cause
        obs.metadata = {**obs.metadata, "infra_failed": True, "infra_cause": failure.cause}
        return without_scratch_paths(obs, self.runtime.scratch_roots)

    def unpaid(self) -> str:
        """Why this episode's step rewards are not paid ("" when they are): a family whose results can be untrusted says so."""
        return ""

    def submits(self, action_type: str) -> bool:
        """Whether a step of ``action_type`` submits: the tool it resolves to (an alias as the interface resolves it)
        says so (``Tool.submits``)."""
        try:
            tool = self.interface.resolve(action_type, {}).tool
        except UnknownTool:
            return False
        try:
            return TOOLS[tool].submits
        except KeyError:  # a family's own action, not a registered tool
            return False

    def arguments(self, action: DebugAction) -> dict[str, Any]:
        """The action's fields other than its type: a tool's arguments."""
        return {k: v for k, v in action.model_dump(exclude_unset=True).items() if k not in ("action_type", "metadata")}

    def info(self, error: str | None) -> dict[str, Any]:
        """The observation's ``info``: the error, a non-default interface, the tool that ran under an alias, the end."""
        info: dict[str, Any] = {"error": error} if error else {}
        if self.interface.profile.name != "default":
            info["interface"] = self.interface.info()
        if self.last_call:
            info["call"] = self.last_call  # the tool that ran, and the alias the agent used, if any
        if self.unpaid():
            info["rewards_paid"] = False
            info["rewards_note"] = self.unpaid()
        return info

    @property
    def family(self) -> str:
        return self.task.family

    def state(self) -> DebugState:
        return DebugState(
            episode_id=self.episode_id,
            step_count=self.step_number,
            task_id=self.task.id,
            seed=self.seed,
            done=self.done,
            solved=self.solved,
            gave_up=self.gave_up,
            truncated=self.truncated,
            max_steps=self.task.max_steps,
            tests_total=self.task.tests_total,
            cumulative_reward=self.cumulative_reward,
            secret_fingerprint=self.runtime.secret.fingerprint,
            infra_failures=list(self.infra_failures),
            **self.state_fields(),
        )
