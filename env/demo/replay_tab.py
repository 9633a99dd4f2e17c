"""The Replay tab: a saved trajectory replayed from its seed, one step at a time with its code diff.

    tab = build_replay_tab()                         # inside the Blocks, in the tab
    ReplayHandlers(tab, frames_state, replay_env, tabs).wire(play_state, replay_mine_btn)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr

from env.demo import view
from env.demo.session import DemoSession, describe
from env.demo.trajectory import Frame, TrajectoryError, load, replay


@dataclass(frozen=True)
class ReplayTab:
    """The Replay tab's components, in the order they appear."""

    file: gr.File
    error: gr.Markdown
    summary: gr.Markdown
    prev: gr.Button
    slider: gr.Slider
    next: gr.Button
    step_md: gr.Markdown
    diff: gr.HTML
    output: gr.Textbox
    breakdown: gr.Dataframe


def build_replay_tab() -> ReplayTab:
    gr.Markdown("Load a trajectory saved here (**Download trajectory**) or a steps file of `python -m env.eval run` "
                "(`steps/<agent>/<task>/run<N>.jsonl`). It is replayed from its seed, so each step shows the real code diff.")
    r_file = gr.File(label="Trajectory (.json or .jsonl)", file_types=[".json", ".jsonl"], type="filepath", elem_id="replay-file")
    r_error = gr.Markdown("", elem_id="replay-error")
    r_summary = gr.Markdown("", elem_id="replay-summary")
    with gr.Row():
        r_prev = gr.Button("◀ Previous", elem_id="replay-prev")
        r_slider = gr.Slider(0, 1, value=0, step=1, label="Step (0: before the first)", elem_id="replay-step", interactive=True)
        r_next = gr.Button("Next ▶", elem_id="replay-next")
    r_step_md = gr.Markdown("", elem_id="replay-action")
    r_diff = gr.HTML("", elem_id="replay-diff")
    r_output = gr.Textbox("", label="Output of this step", lines=8, max_lines=20, elem_id="replay-output")
    r_breakdown = gr.Dataframe([], headers=["component", "value"], label="Breakdown", interactive=False)
    return ReplayTab(r_file, r_error, r_summary, r_prev, r_slider, r_next, r_step_md, r_diff, r_output, r_breakdown)


class ReplayHandlers:
    """The Replay tab's events, and Play's "Replay this episode" button, which lands here."""

    def __init__(self, tab: ReplayTab, frames_state: gr.State, replay_env: Callable[[], Any], tabs: gr.Tabs):
        self.tab, self.frames_state, self.replay_env, self.tabs = tab, frames_state, replay_env, tabs
        t = tab
        self.outputs = [frames_state, t.error, t.summary, t.slider, t.step_md, t.diff, t.output, t.breakdown]

    def wire(self, play_state: gr.State, replay_mine_btn: gr.Button) -> None:
        t, frames_state = self.tab, self.frames_state
        step_outputs = [t.step_md, t.diff, t.output, t.breakdown]
        t.file.change(self.load_file, t.file, self.outputs)
        t.slider.change(self.frame_view, [frames_state, t.slider], step_outputs, api_name="replay_step")
        t.prev.click(lambda frames, i: self.move(frames, i, -1), [frames_state, t.slider], [t.slider, *step_outputs], api_name="replay_previous")
        t.next.click(lambda frames, i: self.move(frames, i, +1), [frames_state, t.slider], [t.slider, *step_outputs], api_name="replay_next")
        replay_mine_btn.click(self.replay_mine, play_state, [*self.outputs, self.tabs])

    def frame_view(self, frames: list[Frame], index: Any) -> dict[Any, Any]:
        t = self.tab
        i = min(max(int(index or 0), 0), len(frames))
        if i == 0:
            start = "Before the first step: move the slider or press Next." if frames else ""
            return {t.step_md: start, t.diff: "", t.output: "", t.breakdown: []}
        f = frames[i - 1]
        same = "" if abs(f.reward - f.recorded_reward) < 1e-9 else f" (recorded {f.recorded_reward:+.3f})"
        lines = [
            f"**Step {f.step}** · `{view.action_summary(f.action, 200)}`",
            f"reward {f.reward:+.3f}{same} · tests {f.tests_passed} / {f.tests_total} passed",
        ]
        if f.grader_score is not None:
            lines.append(f"**Score: {f.grader_score:.3f}**")
        if f.error:
            lines.append(view.error_line(f.error))
        return {t.step_md: "\n\n".join(lines), t.diff: view.diff_html(f.diff), t.output: f.output, t.breakdown: view.breakdown_rows(f.breakdown)}

    def run_replay(self, text: str, source: str, progress: Any = None) -> dict[Any, Any]:
        t = self.tab
        env = None
        try:
            trajectory = load(text)
            env = self.replay_env()
            report = (lambda done, total: progress((done, total), desc="replaying", unit="steps")) if progress else None
            result = replay(trajectory, env, progress=report)
            frames = result.frames
        except Exception as exc:  # noqa: BLE001 (shown on the page)
            message = str(exc) if isinstance(exc, TrajectoryError) else describe(exc)
            return {self.frames_state: [], t.error: view.error_line(message), t.summary: "", t.slider: gr.update(maximum=1, value=0), **self.frame_view([], 0)}
        finally:
            if env is not None:
                env.close()
        if not frames:
            summary = f"`{trajectory.task_id}` (seed {trajectory.seed}): the trajectory has no steps"
        else:
            changed = sum(1 for f in frames if abs(f.reward - f.recorded_reward) >= 1e-9)
            agreement = "every replayed reward matches the recording" if not changed else f"{changed} replayed reward(s) differ from the recording"
            summary = f"{source}: `{trajectory.task_id}`, seed {trajectory.seed}, interface `{trajectory.profile}`, agent `{trajectory.agent}`, {len(frames)} steps; {agreement}."
            if result.cut:
                summary += f" The replay {result.cut}."
            if result.secret_note:
                summary += f" Note: {result.secret_note}."
        return {
            self.frames_state: frames,
            t.error: "",
            t.summary: summary,
            t.slider: gr.update(maximum=max(len(frames), 1), value=1 if frames else 0),
            **self.frame_view(frames, 1),
        }

    def load_file(self, path: str | None, progress: gr.Progress = gr.Progress()) -> dict[Any, Any]:  # noqa: B008 (Gradio's way)
        if not path:
            return {self.frames_state: [], self.tab.error: "", self.tab.summary: "", **self.frame_view([], 0)}
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            return {self.tab.error: view.error_line(f"cannot read the file: {type(exc).__name__}")}
        return self.run_replay(text, "Loaded", progress)

    def replay_mine(self, session: DemoSession | None, progress: gr.Progress = gr.Progress()) -> dict[Any, Any]:  # noqa: B008
        if session is None or not session.task:
            return {self.tab.error: view.error_line("play an episode first")}
        return {**self.run_replay(session.trajectory().dumps(), "Your episode", progress), self.tabs: gr.update(selected="replay")}

    def move(self, frames: list[Frame], index: Any, delta: int) -> dict[Any, Any]:
        value = min(max(int(index or 0) + delta, 0), len(frames))
        return {self.tab.slider: gr.update(value=value), **self.frame_view(frames, value)}
