"""What the demo's tabs share: the task listing, the task picker, the status rows, the reward plot, the
step table and the trajectory file.

    listing = Listing(driver_factory)
    task, profile, seed = picker(listing, first, "watch-")
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd

from env.demo import scratch, view
from env.demo.session import DemoError, DemoSession, Driver, describe
from env.families.registry import FAMILIES

MAX_SEED = 2**31 - 1
HISTORY_HEADERS = ["step", "action", "reward", "tests", "error"]


class Listing:
    """The tasks the backend offers, listed once; any other procedural id is generated when asked for."""

    def __init__(self, driver_factory: Callable[[], Driver]):
        self._factory = driver_factory
        with driver_factory() as driver:
            self.listed = {t["id"]: t for t in driver.tasks()}
        self._extra: dict[str, dict[str, Any]] = {}

    def choices(self) -> list[tuple[str, str]]:
        return [(view.task_label(t), t["id"]) for t in self.listed.values()]

    def get(self, task_id: str | None) -> dict[str, Any]:
        task_id = (task_id or "").strip()
        if not task_id:
            raise DemoError("choose a task")
        if task_id in self.listed:
            return self.listed[task_id]
        if task_id not in self._extra:
            with self._factory() as driver:
                found = driver.task(task_id)
            if found is None:
                shown = task_id if len(task_id) <= 60 else task_id[:60] + "…"
                made = "".join(f", or type {family.generated_ids}" for family in FAMILIES.values() if family.generated_ids)
                raise DemoError(f"unknown task {shown!r}: choose one from the list{made}")
            self._extra[task_id] = found
        return self._extra[task_id]

    def profiles(self, task_id: str | None) -> list[str]:
        try:
            return list(self.get(task_id).get("profiles") or ["default"])
        except DemoError:
            return ["default"]

    def on_task_change(self, task_id: str) -> Any:
        """The interface dropdown follows the task (both Play and Watch wire it; the name is the API's)."""
        try:
            profiles = self.profiles(task_id)
        except Exception as exc:  # noqa: BLE001 (the server went away: keep what is there)
            describe(exc)
            profiles = ["default"]
        return gr.update(choices=profiles, value="default" if "default" in profiles else profiles[0])


def picker(listing: Listing, first: str, prefix: str) -> tuple[gr.Dropdown, gr.Dropdown, gr.Number]:
    """Task, interface and seed (element ids ``task``, ``profile``, ``seed`` after ``prefix``)."""
    task = gr.Dropdown(listing.choices(), value=first, label="Task", allow_custom_value=True, scale=4, elem_id=f"{prefix}task",
                       info="or type a procedural id such as proc-easy-train-7")
    profile = gr.Dropdown(listing.profiles(first), value="default", label="Interface", scale=1, elem_id=f"{prefix}profile")
    seed = gr.Number(1, label="Seed", precision=0, scale=1, elem_id=f"{prefix}seed")
    return task, profile, seed


def status_rows(prefix: str, status: str) -> tuple[gr.Markdown, gr.Markdown, gr.Markdown]:
    """The error line, then the status and the score side by side."""
    error = gr.Markdown("", elem_id=f"{prefix}error")
    with gr.Row():
        return error, gr.Markdown(status, elem_id=f"{prefix}status"), gr.Markdown("", elem_id=f"{prefix}score")


def parse_seed(value: Any) -> int:
    try:
        seed = int(value)
    except (TypeError, ValueError):
        raise DemoError("the seed must be a whole number") from None
    if not 0 <= seed <= MAX_SEED:
        raise DemoError(f"the seed must be between 0 and {MAX_SEED}")
    return seed


def plot(rewards: list[float]) -> pd.DataFrame:
    """Each step's reward and the running total, from an origin at step 0 so the first step already draws
    a line. Gradio's LinePlot draws it in the browser (a server-side matplotlib PNG cost ~200 ms a step)."""
    table = view.reward_table(rewards)
    return pd.DataFrame({
        "step": [0, 0, *table["step"]],
        "reward": [0.0, 0.0, *table["reward"]],
        "series": ["step reward", "cumulative", *table["series"]],
    })


def history(session: DemoSession) -> list[list[Any]]:
    rows = []
    for s in session.steps:
        o = s.observation
        rows.append([s.step, view.action_summary(s.action), round(s.reward, 6), f"{o.get('tests_passed', 0)}/{o.get('tests_total', 0)}", o.get("error") or ""])
    return rows


def save(session: DemoSession) -> str | None:
    """The episode so far, as the download button's file: one file per session, rewritten at each step and
    removed with the session, or at exit (Gradio serves a copy from its cache, which ``delete_cache`` empties)."""
    if not session.task:
        return None
    if session.folder is None:
        session.folder = scratch.new_folder()
    path = Path(session.folder) / f"trajectory-{session.task['id']}-seed{session.seed}.json"
    for old in Path(session.folder).iterdir():
        if old != path:
            old.unlink(missing_ok=True)
    path.write_text(session.trajectory().dumps(), encoding="utf-8")
    return str(path)
