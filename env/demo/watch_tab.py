"""The Watch tab: a baseline agent plays a task while the page follows each step.

    tab = build_watch_tab(listing, first)          # inside the Blocks, in the tab
    WatchHandlers(tab, state, listing, new_session).wire()
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import gradio as gr

from env.agents import AGENTS
from env.demo import view
from env.demo.parts import HISTORY_HEADERS, Listing, history, parse_seed, picker, plot, save, status_rows
from env.demo.session import DemoError, DemoSession, describe

WATCH_AGENTS = ("oracle", "heuristic", "random")


@dataclass(frozen=True)
class WatchTab:
    """The Watch tab's components, in the order they appear."""

    task: gr.Dropdown
    profile: gr.Dropdown
    seed: gr.Number
    agent: gr.Dropdown
    play_btn: gr.Button
    error: gr.Markdown
    status: gr.Markdown
    score: gr.Markdown
    history: gr.Dataframe
    plot: gr.LinePlot
    breakdown: gr.Dataframe
    output: gr.Textbox
    download: gr.DownloadButton


def build_watch_tab(listing: Listing, first: str) -> WatchTab:
    gr.Markdown("A baseline plays the task over the same API an RL trainer uses. **oracle** plays the known fix "
                "(it proves the task solvable); **heuristic** tries small edits where the failures point; **random** acts at random.")
    with gr.Row():
        w_task, w_profile, w_seed = picker(listing, first, "watch-")
        w_agent = gr.Dropdown(list(WATCH_AGENTS), value="oracle", label="Agent", scale=1, elem_id="watch-agent")
        w_btn = gr.Button("Play", variant="primary", scale=1, elem_id="watch-play")
    w_error, w_status, w_score = status_rows("watch-", "")
    w_history = gr.Dataframe([], headers=HISTORY_HEADERS, label="Steps", elem_id="watch-history", interactive=False, wrap=True)
    with gr.Row():
        w_plot = gr.LinePlot(plot([]), x="step", y="reward", color="series", title="Reward over steps", elem_id="watch-plot", height=260)
        w_breakdown = gr.Dataframe([], headers=["component", "value"], label="Breakdown", interactive=False)
    w_output = gr.Textbox("", label="Output of the last step", lines=8, max_lines=20, elem_id="watch-output")
    w_download = gr.DownloadButton("Download trajectory", value=None, visible=False, elem_id="watch-download")
    return WatchTab(w_task, w_profile, w_seed, w_agent, w_btn, w_error, w_status, w_score, w_history, w_plot, w_breakdown, w_output, w_download)


class WatchHandlers:
    """The Watch tab's events; ``watch`` is a generator, so the page shows each step as the agent takes it."""

    def __init__(self, tab: WatchTab, state: gr.State, listing: Listing, new_session: Callable[[], DemoSession]):
        self.tab, self.state, self.listing, self.new_session = tab, state, listing, new_session
        t = tab
        self.outputs = [state, t.error, t.status, t.score, t.history, t.plot, t.breakdown, t.output, t.download]

    def wire(self) -> None:
        t = self.tab
        t.task.change(self.listing.on_task_change, t.task, t.profile, api_name=False)
        t.play_btn.click(self.watch, [t.task, t.profile, t.agent, t.seed, self.state], self.outputs)

    def watch_view(self, session: DemoSession, error: str | None = None) -> dict[Any, Any]:
        t, obs = self.tab, session.obs
        return {
            self.state: session,
            t.error: view.error_line(error),
            t.status: view.status_line(obs),
            t.score: view.score_line(obs),
            t.history: history(session),
            t.plot: plot(session.rewards),
            t.breakdown: view.breakdown_rows(obs.get("breakdown") or {}),
            t.output: view.output_text(obs),
            t.download: gr.update(value=save(session), visible=True),
        }

    def watch(self, task_id: str, profile: str, agent_name: str, seed: Any, session: DemoSession | None) -> Iterator[dict[Any, Any]]:
        session = session or self.new_session()
        try:
            if agent_name not in WATCH_AGENTS:
                raise DemoError(f"choose an agent: {', '.join(WATCH_AGENTS)}")
            task = self.listing.get(task_id)
            seed_value = parse_seed(seed)
            gated = ((task.get("profiles") or {}).get(profile or "default") or {}).get("edit_gate")
            if gated and agent_name == "heuristic":
                raise DemoError(f"the heuristic never uses the debugger, so the {profile} interface's edit gate would keep it "
                                "from editing; watch the oracle, or choose another interface")
            obs = session.start(task, profile or "default", seed_value, agent=agent_name)
            agent = AGENTS[agent_name]()
            tools = (task.get("profiles") or {}).get(session.profile, {}).get("tools")
            agent.begin({**task, "tools": tools} if tools else task, obs, random.Random(seed_value))
        except Exception as exc:  # noqa: BLE001 (shown on the page)
            yield {self.state: session, self.tab.error: view.error_line(describe(exc))}
            return
        yield self.watch_view(session)
        limit = int(task.get("max_steps", 50)) + 5  # an episode is cut off at max_steps; this only guards the loop
        while not session.obs.get("done") and len(session.steps) < limit:
            try:
                session.act(agent.act(session.obs))
            except Exception as exc:  # noqa: BLE001 (shown on the page)
                yield self.watch_view(session, describe(exc))
                return
            yield self.watch_view(session)
