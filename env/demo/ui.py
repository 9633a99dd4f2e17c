"""The demo's Gradio blocks: Play (you are the agent), Watch (a baseline plays), Replay (a saved episode).

    demo = build_demo(lambda: InProcessDriver(runtime), replay_env=lambda: DebugEnvironment(runtime))
    demo.launch()

Each tab has a module of its own (``play_tab``, ``watch_tab``, ``replay_tab``): a builder that lays it out and a
class of handlers for its events; what they share is in ``parts``. This module puts them on one page.

Every handler catches its own failures and shows them in the error line; nothing reaches the page
as a stack trace. Each browser session keeps its own ``DemoSession`` in a ``gr.State``, so two tabs
never share an episode; a session's episode is closed when the state expires or the tab goes away.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradio as gr

from env.demo import scratch, view
from env.demo.parts import Listing
from env.demo.play_tab import PlayHandlers, build_play_tab
from env.demo.replay_tab import ReplayHandlers, build_replay_tab
from env.demo.session import DemoSession, Driver
from env.demo.watch_tab import WatchHandlers, build_watch_tab

TITLE = "AgentDebuggerEnv"
INTRO = (
    "# AgentDebuggerEnv\n"
    "An environment where AI agents learn to **debug**: read failing code and tests, form a hypothesis, inspect, edit, "
    "run the tests and submit. Every step earns a reward; every episode ends with a grade that the agent's code cannot forge. "
    "**Play** an episode yourself, **watch** a baseline agent play one, or **replay** a saved episode step by step."
)
STATE_TTL_S = 3600


def build_demo(driver_factory: Callable[[], Driver], replay_env: Callable[[], Any], default_task: str = "easy") -> gr.Blocks:
    """``driver_factory`` opens one episode's connection (in-process or to a server); ``replay_env`` gives an
    in-process ``DebugEnvironment`` that replays saved trajectories."""
    scratch.sweep()  # what demos killed before they could exit left behind
    listing = Listing(driver_factory)
    choices = listing.choices()
    first = default_task if default_task in listing.listed else choices[0][1]

    def new_session() -> DemoSession:
        return DemoSession(driver_factory)

    def close_session(session: DemoSession | None) -> None:
        if session is not None:
            session.close()

    # Gradio copies every file it serves into its cache: drop copies older than an hour, hourly.
    with gr.Blocks(title=TITLE, delete_cache=(3600, 3600)) as demo:
        gr.HTML(f"<style>{view.CSS}</style>", padding=False)
        gr.Markdown(INTRO)
        play_state = gr.State(None, time_to_live=STATE_TTL_S, delete_callback=close_session)
        watch_state = gr.State(None, time_to_live=STATE_TTL_S, delete_callback=close_session)
        frames_state = gr.State([])

        with gr.Tabs() as tabs:
            with gr.Tab("Play", id="play"):
                play = build_play_tab(listing, first)
            with gr.Tab("Watch an agent", id="watch"):
                watch = build_watch_tab(listing, first)
            with gr.Tab("Replay a trajectory", id="replay"):
                replay = build_replay_tab()

        # Wired in this order (Play, Watch, Replay): the order numbers the page's API endpoints.
        PlayHandlers(play, play_state, listing, new_session).wire()
        WatchHandlers(watch, watch_state, listing, new_session).wire()
        ReplayHandlers(replay, frames_state, replay_env, tabs).wire(play_state, play.replay_mine_btn)

    # Sessions are independent episodes: let several events run at once (Gradio's default is one at a time),
    # whether the blocks are launched on their own or mounted on the server.
    demo.queue(default_concurrency_limit=8)
    return demo
