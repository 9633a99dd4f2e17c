"""The Play tab: you are the agent. ``build_play_tab`` lays it out; ``PlayHandlers`` answers its events.

    tab = build_play_tab(listing, first)           # inside the Blocks, in the tab
    PlayHandlers(tab, state, listing, new_session).wire()
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr

from env.demo import commands, view
from env.demo.parts import HISTORY_HEADERS, Listing, history, parse_seed, picker, plot, save, status_rows
from env.demo.session import DemoError, DemoSession, describe
from env.models import MAX_TEXT_FIELD
from env.tool_schemas import arguments_of, submits_a_module


@dataclass(frozen=True)
class PlayTab:
    """The Play tab's components, in the order they appear."""

    task_dd: gr.Dropdown
    profile_dd: gr.Dropdown
    seed_in: gr.Number
    start_btn: gr.Button
    error_md: gr.Markdown
    status_md: gr.Markdown
    score_md: gr.Markdown
    header_md: gr.Markdown
    issue_md: gr.Markdown
    file_dd: gr.Dropdown
    code_view: gr.Code
    tests_view: gr.Code
    fix_panel: gr.Group
    fix_code: gr.Code
    hypothesis_tb: gr.Textbox
    submit_fix_btn: gr.Button
    query_panel: gr.Group
    query_type_dd: gr.Dropdown
    query_target_tb: gr.Textbox
    query_btn: gr.Button
    tool_panel: gr.Group
    tool_dd: gr.Dropdown
    tool_args: gr.Code
    tool_btn: gr.Button
    debug_panel: gr.Group
    debug_cmd: gr.Textbox
    debug_btn: gr.Button
    diagnosis_tb: gr.Textbox
    submit_btn: gr.Button
    give_up_btn: gr.Button
    output_tb: gr.Textbox
    plot: gr.LinePlot
    breakdown_df: gr.Dataframe
    history_df: gr.Dataframe
    download_btn: gr.DownloadButton
    replay_mine_btn: gr.Button


def build_play_tab(listing: Listing, first: str) -> PlayTab:
    with gr.Row():
        task_dd, profile_dd, seed_in = picker(listing, first, "")
        start_btn = gr.Button("Start episode", variant="primary", scale=1, elem_id="start")
    error_md, status_md, score_md = status_rows("", "Choose a task and start an episode.")
    with gr.Row():
        with gr.Column(scale=3):
            header_md = gr.Markdown("")
            with gr.Accordion("The task (issue text)", open=True):
                issue_md = gr.Markdown("", elem_id="issue")
            file_dd = gr.Dropdown([], label="File", visible=False, elem_id="file", info="files you have viewed or opened")
            code_view = gr.Code("", language="python", label="Buggy code", interactive=False, elem_id="code", max_lines=40)
            tests_view = gr.Code("", language="python", label="Tests", interactive=False, elem_id="tests", max_lines=25)
        with gr.Column(scale=2):
            with gr.Group(visible=True) as fix_panel:
                gr.Markdown("**Submit a fix**: the complete corrected module and your theory of the bug")
                fix_code = gr.Code("", language="python", label="Your fixed module", interactive=True, elem_id="fix-code", max_lines=30)
                hypothesis_tb = gr.Textbox(label="Hypothesis", placeholder="what is wrong, where, and why", elem_id="hypothesis", max_length=MAX_TEXT_FIELD)
                submit_fix_btn = gr.Button("Submit fix", variant="primary", elem_id="submit-fix")
            with gr.Group(visible=True) as query_panel:
                with gr.Row():
                    query_type_dd = gr.Dropdown([], label="Query context", elem_id="query-type")  # the episode's query_context tool names them
                    query_target_tb = gr.Textbox(label="About", placeholder="a function, class or test name", elem_id="query-target", max_length=MAX_TEXT_FIELD)
                query_btn = gr.Button("Ask (the first query is free)", elem_id="query")
            with gr.Group(visible=False) as tool_panel:
                tool_dd = gr.Dropdown([], label="Tool", elem_id="tool")
                tool_args = gr.Code("{}", language="json", label="Arguments (JSON)", interactive=True, elem_id="tool-args", lines=3)
                tool_btn = gr.Button("Run tool", variant="primary", elem_id="run-tool")
            with gr.Group(visible=False) as debug_panel:
                debug_cmd = gr.Textbox(label="Debugger command", placeholder="start test_x.py::test_y · b src/x.py:12 · c · n · s · p expr · w", elem_id="debug-command", max_length=2000,
                                       info=commands.USAGE)
                debug_btn = gr.Button("Send", elem_id="debug-send")
            with gr.Group():
                with gr.Row():
                    diagnosis_tb = gr.Textbox(label="Final diagnosis (optional, with Give up)", scale=3, elem_id="diagnosis", max_length=MAX_TEXT_FIELD)
                    submit_btn = gr.Button("Submit", variant="primary", visible=False, scale=1, elem_id="submit")
                    give_up_btn = gr.Button("Give up", variant="stop", scale=1, elem_id="give-up")
    output_tb = gr.Textbox("", label="Output of the last step", lines=10, max_lines=30, elem_id="output")
    with gr.Row():
        plot_ = gr.LinePlot(plot([]), x="step", y="reward", color="series", title="Reward over steps", elem_id="plot", height=260)
        breakdown_df = gr.Dataframe([], headers=["component", "value"], label="Reward and grade breakdown", elem_id="breakdown", interactive=False)
    history_df = gr.Dataframe([], headers=HISTORY_HEADERS, label="Steps", elem_id="history", interactive=False, wrap=True)
    with gr.Row():
        download_btn = gr.DownloadButton("Download trajectory", value=None, elem_id="download", visible=False)
        replay_mine_btn = gr.Button("Replay this episode", elem_id="replay-mine", visible=False)
    return PlayTab(
        task_dd, profile_dd, seed_in, start_btn, error_md, status_md, score_md, header_md, issue_md, file_dd, code_view, tests_view,
        fix_panel, fix_code, hypothesis_tb, submit_fix_btn, query_panel, query_type_dd, query_target_tb, query_btn,
        tool_panel, tool_dd, tool_args, tool_btn, debug_panel, debug_cmd, debug_btn, diagnosis_tb, submit_btn, give_up_btn,
        output_tb, plot_, breakdown_df, history_df, download_btn, replay_mine_btn,
    )


def _template(session: DemoSession, name: str | None) -> str:
    tool = next((t for t in session.tools() if t["function"]["name"] == name), None)
    return view.tool_template(tool) if tool else "{}"


class PlayHandlers:
    """The Play tab's events. Each handler returns updates keyed by component; the method names are the API's."""

    def __init__(self, tab: PlayTab, state: gr.State, listing: Listing, new_session: Callable[[], DemoSession]):
        self.tab, self.state, self.listing, self.new_session = tab, state, listing, new_session
        t = tab
        self.outputs = [
            state, t.error_md, t.status_md, t.score_md, t.header_md, t.issue_md, t.file_dd, t.code_view, t.tests_view, t.fix_code,
            t.fix_panel, t.query_panel, t.query_type_dd, t.tool_panel, t.debug_panel, t.submit_btn, t.give_up_btn, t.diagnosis_tb, t.tool_dd, t.tool_args,
            t.output_tb, t.plot, t.breakdown_df, t.history_df, t.download_btn, t.replay_mine_btn,
        ]

    def wire(self) -> None:
        t, state, outputs = self.tab, self.state, self.outputs
        t.task_dd.change(self.listing.on_task_change, t.task_dd, t.profile_dd)
        t.start_btn.click(self.start, [t.task_dd, t.profile_dd, t.seed_in, state], outputs)
        t.submit_fix_btn.click(self.submit_fix, [t.fix_code, t.hypothesis_tb, state], outputs)
        t.query_btn.click(self.query, [t.query_type_dd, t.query_target_tb, state], outputs)
        t.tool_btn.click(self.run_tool, [t.tool_dd, t.tool_args, state], outputs)
        t.debug_btn.click(self.debug, [t.debug_cmd, state], outputs)
        t.debug_cmd.submit(self.debug, [t.debug_cmd, state], outputs, api_name=False)
        t.submit_btn.click(self.finish("submit"), [t.diagnosis_tb, state], outputs, api_name="submit")
        t.give_up_btn.click(self.finish("give_up"), [t.diagnosis_tb, state], outputs, api_name="give_up")
        t.file_dd.input(self.show_file, [t.file_dd, state], t.code_view)
        t.tool_dd.input(self.on_tool_change, [t.tool_dd, state], t.tool_args)

    def render(self, session: DemoSession, error: str | None = None, refresh_fix: bool = False, file: str | None = None) -> dict[Any, Any]:
        t = self.tab
        obs, task = session.obs, session.task or {}
        whole_module = submits_a_module(session.tools())  # the agent submits the module: show it, not a file list
        tools = [x["function"]["name"] for x in session.tools()]
        available = obs.get("available_actions") or tools
        out: dict[Any, Any] = {
            self.state: session,
            t.error_md: view.error_line(error or obs.get("error")),
            t.status_md: view.status_line(obs),
            t.score_md: view.score_line(obs),
            t.header_md: view.task_header(task, session.profile),
            t.issue_md: obs.get("task_description") or "",
            t.tests_view: view.tests_text(obs),
            t.output_tb: view.output_text(obs),
            t.plot: plot(session.rewards),
            t.breakdown_df: view.breakdown_rows(obs.get("breakdown") or {}),
            t.history_df: history(session),
            t.download_btn: gr.update(value=save(session), visible=True),
            t.replay_mine_btn: gr.update(visible=bool(session.steps)),
        }
        if whole_module:
            label = "Buggy code" if not session.steps else "Current code (your last submission)"
            out[t.code_view] = gr.update(value=obs.get("current_code") or obs.get("buggy_code") or "", label=label)
            out[t.file_dd] = gr.update(visible=False)
        else:
            paths = sorted(session.files)
            if file in session.files:
                session.shown = file
            shown = session.shown if session.shown in session.files else (paths[0] if paths else None)
            label = "Open a file (view_file or open_file) to see it here"
            if shown:
                label = shown + (" (edited since it was shown: view it again)" if shown in session.edited else "")
            out[t.code_view] = gr.update(value=session.files.get(shown, "") if shown else "", label=label)
            out[t.file_dd] = gr.update(choices=paths, value=shown, visible=True)
        if refresh_fix:
            out[t.fix_code] = obs.get("current_code") or obs.get("buggy_code") or ""
        other = [x for x in tools if x not in ("submit_fix", "query_context", "give_up", *view.SUBMIT_TOOLS)]
        debug = any(x.startswith("debug_") for x in available)
        out[t.fix_panel] = gr.update(visible="submit_fix" in tools)
        out[t.query_panel] = gr.update(visible="query_context" in tools)
        out[t.tool_panel] = gr.update(visible=bool(other))
        out[t.debug_panel] = gr.update(visible=debug)
        out[t.submit_btn] = gr.update(visible=any(x in tools for x in view.SUBMIT_TOOLS))
        out[t.give_up_btn] = gr.update(visible="give_up" in tools)
        out[t.diagnosis_tb] = gr.update(visible=whole_module and "give_up" in tools)
        if refresh_fix:
            kinds = arguments_of(session.tools(), "query_context").get("query_type", {}).get("enum", [])
            out[t.query_type_dd] = gr.update(choices=kinds, value=kinds[0] if kinds else None)
            # Reading a file is the usual first move; elsewhere the first tool of the interface.
            first_tool = next((x for x in (*view.FILE_VIEW_TOOLS, *other) if x in other), None)
            out[t.tool_dd] = gr.update(choices=other, value=first_tool)
            out[t.tool_args] = _template(session, first_tool) if first_tool else "{}"
        return out

    def failed(self, session: DemoSession | None, exc: BaseException) -> dict[Any, Any]:
        message = describe(exc)
        if session is not None and session.obs:
            return self.render(session, error=message)
        return {self.tab.error_md: view.error_line(message)}

    def start(self, task_id: str, profile: str, seed: Any, session: DemoSession | None) -> dict[Any, Any]:
        session = session or self.new_session()
        try:
            session.start(self.listing.get(task_id), profile or "default", parse_seed(seed))
        except Exception as exc:  # noqa: BLE001 (shown on the page)
            return {**self.failed(session, exc), self.state: session}
        return self.render(session, refresh_fix=True)

    def act(self, session: DemoSession | None, make: Callable[[], dict[str, Any]], file: str | None = None) -> dict[Any, Any]:
        try:
            if session is None:
                raise DemoError("start an episode first")
            session.act(make())
        except Exception as exc:  # noqa: BLE001 (shown on the page)
            return self.failed(session, exc)
        return self.render(session, file=file)

    def submit_fix(self, code: str, hypothesis: str, session: DemoSession | None) -> dict[Any, Any]:
        return self.act(session, lambda: {"action_type": "submit_fix", "fixed_code": code or "", "hypothesis": hypothesis or ""})

    def query(self, kind: str, target: str, session: DemoSession | None) -> dict[Any, Any]:
        action = {"action_type": "query_context", "query_type": kind}
        if target and target.strip():
            action["query_target"] = target.strip()
        return self.act(session, lambda: action)

    def run_tool(self, name: str, args: str, session: DemoSession | None) -> dict[Any, Any]:
        def make() -> dict[str, Any]:
            if not name:
                raise DemoError("choose a tool")
            try:
                parsed = json.loads(args or "{}")
            except ValueError as exc:
                raise DemoError(f"the arguments are not valid JSON: {exc}") from None
            if not isinstance(parsed, dict):
                raise DemoError("the arguments must be a JSON object, such as {\"path\": \"src/app.py\"}")
            return {**parsed, "action_type": name}

        path = None
        try:
            path = json.loads(args or "{}").get("path") if name in view.FILE_VIEW_TOOLS else None
        except (ValueError, AttributeError):
            pass
        return self.act(session, make, file=path if isinstance(path, str) else None)

    def debug(self, command: str, session: DemoSession | None) -> dict[Any, Any]:
        def make() -> dict[str, Any]:
            try:
                return commands.parse(command or "")
            except commands.CommandError as exc:
                raise DemoError(str(exc)) from None

        return self.act(session, make)

    def finish(self, kind: str) -> Callable[..., dict[Any, Any]]:
        def handler(diagnosis: str, session: DemoSession | None) -> dict[Any, Any]:
            names = [x["function"]["name"] for x in session.tools()] if session else []
            if kind == "submit":  # the minimal profile calls it finish
                kind_now = next((x for x in view.SUBMIT_TOOLS if x in names), "submit")
            else:
                kind_now = kind
            action: dict[str, Any] = {"action_type": kind_now}
            if kind == "give_up" and session and "final_diagnosis" in arguments_of(session.tools(), "give_up") and diagnosis:
                action["final_diagnosis"] = diagnosis
            return self.act(session, lambda: action)

        return handler

    def show_file(self, path: str, session: DemoSession | None) -> Any:
        if session is None or path not in session.files:
            return gr.update()
        session.shown = path
        label = path + (" (edited since it was shown: view it again)" if path in session.edited else "")
        return gr.update(value=session.files[path], label=label)

    def on_tool_change(self, name: str, session: DemoSession | None) -> str:
        return _template(session, name) if session else "{}"
