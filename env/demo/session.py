"""One browser session's episode: its own driver (in-process environment or server), history and files seen.

    session = DemoSession(lambda: InProcessDriver(runtime))
    obs = session.start("easy", profile="default", seed=1)
    obs = session.act({"action_type": "submit_fix", "fixed_code": "...", "hypothesis": "..."})
    session.trajectory()      # what was done and earned, to save and replay

Nothing here is shared between sessions: every ``start`` opens a fresh driver, so two browser tabs
play two episodes. A failure of the driver itself (the server went away) becomes ``error``, the
observation is kept, and the episode can go on or be restarted.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from env.demo import scratch, view
from env.demo.trajectory import Trajectory, TrajectoryStep

log = logging.getLogger("adbg.demo")

Driver = Any  # InProcessDriver | HttpDriver: reset(task_id, seed, **options), step(action), tasks(), task(id), __exit__


class DemoError(Exception):
    """Something the person using the demo should read (never a stack trace)."""


def describe(exc: BaseException) -> str:
    """An unexpected failure as one sentence; the traceback goes to the log, not the page."""
    log.warning("demo action failed", exc_info=exc)
    if isinstance(exc, DemoError):
        return str(exc)
    text = str(exc).splitlines()[0][:300] if str(exc) else ""
    return f"the environment did not answer ({type(exc).__name__}{': ' + text if text else ''})"


class DemoSession:
    def __init__(self, driver_factory: Callable[[], Driver]):
        self._factory = driver_factory
        self._lock = threading.Lock()  # two clicks of one tab may arrive together
        self.driver: Driver | None = None
        self.task: dict[str, Any] | None = None
        self.profile = "default"
        self.seed = 0
        self.fingerprint = ""
        self.agent = "human"
        self.obs: dict[str, Any] = {}
        self.steps: list[TrajectoryStep] = []
        self.files: dict[str, str] = {}  # repository files the agent was shown whole, by path
        self.edited: set[str] = set()  # ... and changed since
        self.shown: str | None = None  # the file on screen
        self.folder: str | None = None  # where the download button's trajectory file lives

    # -- episode ---------------------------------------------------------------------------------

    def start(self, task: dict[str, Any], profile: str, seed: int, agent: str = "human") -> dict[str, Any]:
        if profile not in (task.get("profiles") or {"default": {}}):
            raise DemoError(f"task {task['id']!r} has no {profile!r} interface; it offers {', '.join(task.get('profiles') or ['default'])}")
        with self._lock:
            # The new episode replaces the old one only once it has started: a failed start leaves the old one playable.
            driver = self._factory()
            try:
                options = {} if profile == "default" else {"profile": profile}
                obs = driver.reset(task["id"], seed, **options)
                if obs.get("error") and not obs.get("task_id"):
                    raise DemoError(obs["error"])
            except BaseException:
                _close(driver)
                raise
            self._close_driver()
            self.driver = driver
            self.task, self.profile, self.seed, self.agent = task, profile, seed, agent
            self.fingerprint = str((obs.get("info") or {}).get("secret_fingerprint", ""))
            self.obs, self.steps, self.files, self.edited, self.shown = obs, [], {}, set(), None
            self._learn({}, obs)
            return obs

    def act(self, action: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            if self.driver is None or not self.obs:
                raise DemoError("start an episode first")
            if self.obs.get("done"):
                raise DemoError("this episode is over; start a new one")
            obs, reward, _ = self.driver.step(action)
            if not obs.get("task_id"):  # not this episode's observation: the server no longer has it
                raise DemoError("this episode is no longer on the server (it expired or the server restarted); start a new one")
            self.obs = obs
            self.steps.append(
                TrajectoryStep(
                    step=len(self.steps) + 1,
                    action=action,
                    reward=reward,
                    breakdown=obs.get("breakdown") or {},
                    observation={k: obs.get(k) for k in ("step_number", "done", "error", "tests_passed", "tests_total", "grader_score", "cumulative_reward")},
                )
            )
            self._learn(action, obs)
            return obs

    def _learn(self, action: dict[str, Any], obs: dict[str, Any]) -> None:
        if obs.get("visible_files"):  # procedural tasks show the opened files as they are now
            self.files.update(obs["visible_files"])
            path = action.get("path")
            if action.get("action_type") in view.FILE_VIEW_TOOLS and path in self.files:
                self.shown = path
            return
        seen = view.seen_file(action, obs)
        if seen:
            self.files[seen[0]] = seen[1]
            self.edited.discard(seen[0])
            self.shown = seen[0]
        elif action.get("action_type") in view.EDIT_TOOLS and not obs.get("error"):
            self.edited.add(str(action.get("path")))

    # -- what the UI shows -----------------------------------------------------------------------

    @property
    def rewards(self) -> list[float]:
        return [s.reward for s in self.steps]

    def tools(self) -> list[dict[str, Any]]:
        """The OpenAI tool schemas of this episode's interface (classic actions included)."""
        if not self.task:
            return []
        profiles = self.task.get("profiles") or {}
        return (profiles.get(self.profile) or {}).get("tools") or self.task.get("tools") or []

    def trajectory(self) -> Trajectory:
        if not self.task:
            raise DemoError("no episode to save yet")
        score = self.obs.get("grader_score") if self.obs.get("done") else None
        return Trajectory(
            task_id=self.task["id"], seed=self.seed, profile=self.profile, agent=self.agent, score=score, steps=list(self.steps),
            secret_fingerprint=self.fingerprint,
        )

    def close(self) -> None:
        with self._lock:
            self._close_driver()
            if self.folder is not None:
                scratch.remove(self.folder)
                self.folder = None

    def _close_driver(self) -> None:
        if self.driver is not None:
            _close(self.driver)
            self.driver = None


def _close(driver: Driver) -> None:
    try:
        driver.__exit__(None, None, None)
    except Exception:  # noqa: BLE001 (a dead server must not stop a new episode)
        log.debug("closing a demo driver failed", exc_info=True)
