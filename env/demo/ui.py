"""The demo's Gradio blocks: Play (you are the agent), Watch (a baseline plays), Replay (a saved episode).

    demo = build_demo(lambda: InProcessDriver(runtime), replay_env=lambda: DebugEnvironment(runtime))
    demo.launch()

Every handler catches its own failures and shows them in the error line; nothing reaches the page
as a stack trace. Each browser session keeps its own ``DemoSession`` in a ``gr.State``, so two tabs
never share an episode; a session's episode is closed when the state expires or the tab goes away.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd

from env.agents import AGENTS
from env.demo import commands, scratch, view
from env.demo.session import DemoError, DemoSession, Driver, describe
from env.demo.trajectory import Frame, TrajectoryError, load, replay
from env.families.registry import FAMILIES
from env.models import MAX_TEXT_FIELD, QUERY_TYPES

TITLE = "AgentDebuggerEnv"
INTRO = (
    "# AgentDebuggerEnv\n"
    "An environment where AI agents learn to **debug**: read failing code and tests, form a hypothesis, inspect, edit, "
    "run the tests and submit. Every step earns a reward; every episode ends with a grade that the agent's code cannot forge. "
    "**Play** an episode yourself, **watch** a baseline agent play one, or **replay** a saved episode step by step."
)
STATE_TTL_S = 3600
MAX_SEED = 2**31 - 1
WATCH_AGENTS = ("oracle", "heuristic", "random")


class Catalogue:
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


def _seed(value: Any) -> int:
    try:
        seed = int(value)
    except (TypeError, ValueError):
        raise DemoError("the seed must be a whole number") from None
    if not 0 <= seed <= MAX_SEED:
        raise DemoError(f"the seed must be between 0 and {MAX_SEED}")
    return seed


def _plot(rewards: list[float]) -> pd.DataFrame:
    """Each step's reward and the running total, from an origin at step 0 so the first step already draws
    a line. Gradio's LinePlot draws it in the browser (a server-side matplotlib PNG cost ~200 ms a step)."""
    table = view.reward_table(rewards)
    return pd.DataFrame({
        "step": [0, 0, *table["step"]],
        "reward": [0.0, 0.0, *table["reward"]],
        "series": ["step reward", "cumulative", *table["series"]],
    })


def _history(session: DemoSession) -> list[list[Any]]:
    rows = []
    for s in session.steps:
        o = s.observation
        rows.append([s.step, view.action_summary(s.action), round(s.reward, 6), f"{o.get('tests_passed', 0)}/{o.get('tests_total', 0)}", o.get("error") or ""])
    return rows


HISTORY_HEADERS = ["step", "action", "reward", "tests", "error"]


def _save(session: DemoSession) -> str | None:
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


def build_demo(driver_factory: Callable[[], Driver], replay_env: Callable[[], Any], default_task: str = "easy") -> gr.Blocks:
    """``driver_factory`` opens one episode's connection (in-process or to a server); ``replay_env`` gives an
    in-process ``DebugEnvironment`` that replays saved trajectories."""
    scratch.sweep()  # what demos killed before they could exit left behind
    catalogue = Catalogue(driver_factory)
    choices = catalogue.choices()
    first = default_task if default_task in catalogue.listed else choices[0][1]

    def new_session() -> DemoSession:
        return DemoSession(driver_factory)

    def close_session(session: DemoSession | None) -> None:
        if session is not None:
            session.close()

    def picker(prefix: str) -> tuple[gr.Dropdown, gr.Dropdown, gr.Number]:
        """Task, interface and seed (element ids ``task``, ``profile``, ``seed`` after ``prefix``)."""
        task = gr.Dropdown(choices, value=first, label="Task", allow_custom_value=True, scale=4, elem_id=f"{prefix}task",
                           info="or type a procedural id such as proc-easy-train-7")
        profile = gr.Dropdown(catalogue.profiles(first), value="default", label="Interface", scale=1, elem_id=f"{prefix}profile")
        seed = gr.Number(1, label="Seed", precision=0, scale=1, elem_id=f"{prefix}seed")
        return task, profile, seed

    def status_rows(prefix: str, status: str) -> tuple[gr.Markdown, gr.Markdown, gr.Markdown]:
        """The error line, then the status and the score side by side."""
        error = gr.Markdown("", elem_id=f"{prefix}error")
        with gr.Row():
            return error, gr.Markdown(status, elem_id=f"{prefix}status"), gr.Markdown("", elem_id=f"{prefix}score")

    # Gradio copies every file it serves into its cache: drop copies older than an hour, hourly.
    with gr.Blocks(title=TITLE, delete_cache=(3600, 3600)) as demo:
        gr.HTML(f"<style>{view.CSS}</style>", padding=False)
        gr.Markdown(INTRO)
        play_state = gr.State(None, time_to_live=STATE_TTL_S, delete_callback=close_session)
        watch_state = gr.State(None, time_to_live=STATE_TTL_S, delete_callback=close_session)
        frames_state = gr.State([])

        with gr.Tabs() as tabs:
            # ---------------------------------------------------------------- Play
            with gr.Tab("Play", id="play"):
                with gr.Row():
                    task_dd, profile_dd, seed_in = picker("")
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
                                query_type_dd = gr.Dropdown(list(QUERY_TYPES), value=QUERY_TYPES[0], label="Query context", elem_id="query-type")
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
                    plot = gr.LinePlot(_plot([]), x="step", y="reward", color="series", title="Reward over steps", elem_id="plot", height=260)
                    breakdown_df = gr.Dataframe([], headers=["component", "value"], label="Reward and grade breakdown", elem_id="breakdown", interactive=False)
                history_df = gr.Dataframe([], headers=HISTORY_HEADERS, label="Steps", elem_id="history", interactive=False, wrap=True)
                with gr.Row():
                    download_btn = gr.DownloadButton("Download trajectory", value=None, elem_id="download", visible=False)
                    replay_mine_btn = gr.Button("Replay this episode", elem_id="replay-mine", visible=False)

            # ---------------------------------------------------------------- Watch
            with gr.Tab("Watch an agent", id="watch"):
                gr.Markdown("A baseline plays the task over the same API an RL trainer uses. **oracle** plays the known fix "
                            "(it proves the task solvable); **heuristic** tries small edits where the failures point; **random** acts at random.")
                with gr.Row():
                    w_task, w_profile, w_seed = picker("watch-")
                    w_agent = gr.Dropdown(list(WATCH_AGENTS), value="oracle", label="Agent", scale=1, elem_id="watch-agent")
                    w_btn = gr.Button("Play", variant="primary", scale=1, elem_id="watch-play")
                w_error, w_status, w_score = status_rows("watch-", "")
                w_history = gr.Dataframe([], headers=HISTORY_HEADERS, label="Steps", elem_id="watch-history", interactive=False, wrap=True)
                with gr.Row():
                    w_plot = gr.LinePlot(_plot([]), x="step", y="reward", color="series", title="Reward over steps", elem_id="watch-plot", height=260)
                    w_breakdown = gr.Dataframe([], headers=["component", "value"], label="Breakdown", interactive=False)
                w_output = gr.Textbox("", label="Output of the last step", lines=8, max_lines=20, elem_id="watch-output")
                w_download = gr.DownloadButton("Download trajectory", value=None, visible=False, elem_id="watch-download")

            # ---------------------------------------------------------------- Replay
            with gr.Tab("Replay a trajectory", id="replay"):
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

        # ================================================================ Play handlers
        play_outputs = [
            play_state, error_md, status_md, score_md, header_md, issue_md, file_dd, code_view, tests_view, fix_code,
            fix_panel, query_panel, tool_panel, debug_panel, submit_btn, give_up_btn, diagnosis_tb, tool_dd, tool_args, output_tb, plot, breakdown_df,
            history_df, download_btn, replay_mine_btn,
        ]

        def render(session: DemoSession, error: str | None = None, refresh_fix: bool = False, file: str | None = None) -> dict[Any, Any]:
            obs, task = session.obs, session.task or {}
            whole_module = task.get("interaction") == "code"  # the agent submits the module: show it, not a file list
            tools = [t["function"]["name"] for t in session.tools()]
            available = obs.get("available_actions") or tools
            out: dict[Any, Any] = {
                play_state: session,
                error_md: view.error_line(error or obs.get("error")),
                status_md: view.status_line(obs),
                score_md: view.score_line(obs),
                header_md: view.task_header(task, session.profile),
                issue_md: obs.get("task_description") or "",
                tests_view: view.tests_text(obs),
                output_tb: view.output_text(obs),
                plot: _plot(session.rewards),
                breakdown_df: view.breakdown_rows(obs.get("breakdown") or {}),
                history_df: _history(session),
                download_btn: gr.update(value=_save(session), visible=True),
                replay_mine_btn: gr.update(visible=bool(session.steps)),
            }
            if whole_module:
                label = "Buggy code" if not session.steps else "Current code (your last submission)"
                out[code_view] = gr.update(value=obs.get("current_code") or obs.get("buggy_code") or "", label=label)
                out[file_dd] = gr.update(visible=False)
            else:
                paths = sorted(session.files)
                if file in session.files:
                    session.shown = file
                shown = session.shown if session.shown in session.files else (paths[0] if paths else None)
                label = "Open a file (view_file or open_file) to see it here"
                if shown:
                    label = shown + (" (edited since it was shown: view it again)" if shown in session.edited else "")
                out[code_view] = gr.update(value=session.files.get(shown, "") if shown else "", label=label)
                out[file_dd] = gr.update(choices=paths, value=shown, visible=True)
            if refresh_fix:
                out[fix_code] = obs.get("current_code") or obs.get("buggy_code") or ""
            other = [t for t in tools if t not in ("submit_fix", "query_context", "give_up", *view.SUBMIT_TOOLS)]
            debug = any(t.startswith("debug_") for t in available)
            out[fix_panel] = gr.update(visible="submit_fix" in tools)
            out[query_panel] = gr.update(visible="query_context" in tools)
            out[tool_panel] = gr.update(visible=bool(other))
            out[debug_panel] = gr.update(visible=debug)
            out[submit_btn] = gr.update(visible=any(t in tools for t in view.SUBMIT_TOOLS))
            out[give_up_btn] = gr.update(visible="give_up" in tools)
            out[diagnosis_tb] = gr.update(visible=whole_module and "give_up" in tools)
            if refresh_fix:
                # Reading a file is the usual first move; elsewhere the first tool of the interface.
                first_tool = next((t for t in (*view.FILE_VIEW_TOOLS, *other) if t in other), None)
                out[tool_dd] = gr.update(choices=other, value=first_tool)
                out[tool_args] = _template(session, first_tool) if first_tool else "{}"
            return out

        def failed(session: DemoSession | None, exc: BaseException) -> dict[Any, Any]:
            message = describe(exc)
            if session is not None and session.obs:
                return render(session, error=message)
            return {error_md: view.error_line(message)}

        def _template(session: DemoSession, name: str | None) -> str:
            tool = next((t for t in session.tools() if t["function"]["name"] == name), None)
            return view.tool_template(tool) if tool else "{}"

        def on_task_change(task_id: str) -> Any:
            try:
                profiles = catalogue.profiles(task_id)
            except Exception as exc:  # noqa: BLE001 (the server went away: keep what is there)
                describe(exc)
                profiles = ["default"]
            return gr.update(choices=profiles, value="default" if "default" in profiles else profiles[0])

        def start(task_id: str, profile: str, seed: Any, session: DemoSession | None) -> dict[Any, Any]:
            session = session or new_session()
            try:
                session.start(catalogue.get(task_id), profile or "default", _seed(seed))
            except Exception as exc:  # noqa: BLE001 (shown on the page)
                return {**failed(session, exc), play_state: session}
            return render(session, refresh_fix=True)

        def act(session: DemoSession | None, make: Callable[[], dict[str, Any]], file: str | None = None) -> dict[Any, Any]:
            try:
                if session is None:
                    raise DemoError("start an episode first")
                session.act(make())
            except Exception as exc:  # noqa: BLE001 (shown on the page)
                return failed(session, exc)
            return render(session, file=file)

        def submit_fix(code: str, hypothesis: str, session: DemoSession | None) -> dict[Any, Any]:
            return act(session, lambda: {"action_type": "submit_fix", "fixed_code": code or "", "hypothesis": hypothesis or ""})

        def query(kind: str, target: str, session: DemoSession | None) -> dict[Any, Any]:
            action = {"action_type": "query_context", "query_type": kind}
            if target and target.strip():
                action["query_target"] = target.strip()
            return act(session, lambda: action)

        def run_tool(name: str, args: str, session: DemoSession | None) -> dict[Any, Any]:
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
            return act(session, make, file=path if isinstance(path, str) else None)

        def debug(command: str, session: DemoSession | None) -> dict[Any, Any]:
            def make() -> dict[str, Any]:
                try:
                    return commands.parse(command or "")
                except commands.CommandError as exc:
                    raise DemoError(str(exc)) from None

            return act(session, make)

        def finish(kind: str) -> Callable[..., dict[Any, Any]]:
            def handler(diagnosis: str, session: DemoSession | None) -> dict[Any, Any]:
                names = [t["function"]["name"] for t in session.tools()] if session else []
                if kind == "submit":  # the minimal profile calls it finish
                    kind_now = next((t for t in view.SUBMIT_TOOLS if t in names), "submit")
                else:
                    kind_now = kind
                action: dict[str, Any] = {"action_type": kind_now}
                if kind == "give_up" and session and session.task and session.task.get("interaction") == "code" and diagnosis:
                    action["final_diagnosis"] = diagnosis
                return act(session, lambda: action)

            return handler

        def show_file(path: str, session: DemoSession | None) -> Any:
            if session is None or path not in session.files:
                return gr.update()
            session.shown = path
            label = path + (" (edited since it was shown: view it again)" if path in session.edited else "")
            return gr.update(value=session.files[path], label=label)

        def on_tool_change(name: str, session: DemoSession | None) -> str:
            return _template(session, name) if session else "{}"

        task_dd.change(on_task_change, task_dd, profile_dd)
        start_btn.click(start, [task_dd, profile_dd, seed_in, play_state], play_outputs)
        submit_fix_btn.click(submit_fix, [fix_code, hypothesis_tb, play_state], play_outputs)
        query_btn.click(query, [query_type_dd, query_target_tb, play_state], play_outputs)
        tool_btn.click(run_tool, [tool_dd, tool_args, play_state], play_outputs)
        debug_btn.click(debug, [debug_cmd, play_state], play_outputs)
        debug_cmd.submit(debug, [debug_cmd, play_state], play_outputs, api_name=False)
        submit_btn.click(finish("submit"), [diagnosis_tb, play_state], play_outputs, api_name="submit")
        give_up_btn.click(finish("give_up"), [diagnosis_tb, play_state], play_outputs, api_name="give_up")
        file_dd.input(show_file, [file_dd, play_state], code_view)
        tool_dd.input(on_tool_change, [tool_dd, play_state], tool_args)

        # ================================================================ Watch handlers
        watch_outputs = [watch_state, w_error, w_status, w_score, w_history, w_plot, w_breakdown, w_output, w_download]

        def watch_view(session: DemoSession, error: str | None = None) -> dict[Any, Any]:
            obs = session.obs
            return {
                watch_state: session,
                w_error: view.error_line(error),
                w_status: view.status_line(obs),
                w_score: view.score_line(obs),
                w_history: _history(session),
                w_plot: _plot(session.rewards),
                w_breakdown: view.breakdown_rows(obs.get("breakdown") or {}),
                w_output: view.output_text(obs),
                w_download: gr.update(value=_save(session), visible=True),
            }

        def watch(task_id: str, profile: str, agent_name: str, seed: Any, session: DemoSession | None) -> Iterator[dict[Any, Any]]:
            session = session or new_session()
            try:
                if agent_name not in WATCH_AGENTS:
                    raise DemoError(f"choose an agent: {', '.join(WATCH_AGENTS)}")
                task = catalogue.get(task_id)
                seed_value = _seed(seed)
                gated = ((task.get("profiles") or {}).get(profile or "default") or {}).get("edit_gate")
                if gated and agent_name == "heuristic":
                    raise DemoError(f"the heuristic never uses the debugger, so the {profile} interface's edit gate would keep it "
                                    "from editing; watch the oracle, or choose another interface")
                obs = session.start(task, profile or "default", seed_value, agent=agent_name)
                agent = AGENTS[agent_name]()
                tools = (task.get("profiles") or {}).get(session.profile, {}).get("tools")
                agent.begin({**task, "tools": tools} if tools else task, obs, random.Random(seed_value))
            except Exception as exc:  # noqa: BLE001 (shown on the page)
                yield {watch_state: session, w_error: view.error_line(describe(exc))}
                return
            yield watch_view(session)
            limit = int(task.get("max_steps", 50)) + 5  # an episode is cut off at max_steps; this only guards the loop
            while not session.obs.get("done") and len(session.steps) < limit:
                try:
                    session.act(agent.act(session.obs))
                except Exception as exc:  # noqa: BLE001 (shown on the page)
                    yield watch_view(session, describe(exc))
                    return
                yield watch_view(session)

        w_task.change(on_task_change, w_task, w_profile, api_name=False)
        w_btn.click(watch, [w_task, w_profile, w_agent, w_seed, watch_state], watch_outputs)

        # ================================================================ Replay handlers
        replay_outputs = [frames_state, r_error, r_summary, r_slider, r_step_md, r_diff, r_output, r_breakdown]

        def frame_view(frames: list[Frame], index: Any) -> dict[Any, Any]:
            i = min(max(int(index or 0), 0), len(frames))
            if i == 0:
                start = "Before the first step: move the slider or press Next." if frames else ""
                return {r_step_md: start, r_diff: "", r_output: "", r_breakdown: []}
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
            return {r_step_md: "\n\n".join(lines), r_diff: view.diff_html(f.diff), r_output: f.output, r_breakdown: view.breakdown_rows(f.breakdown)}

        def run_replay(text: str, source: str, progress: Any = None) -> dict[Any, Any]:
            env = None
            try:
                trajectory = load(text)
                env = replay_env()
                report = (lambda done, total: progress((done, total), desc="replaying", unit="steps")) if progress else None
                result = replay(trajectory, env, progress=report)
                frames = result.frames
            except Exception as exc:  # noqa: BLE001 (shown on the page)
                message = str(exc) if isinstance(exc, TrajectoryError) else describe(exc)
                return {frames_state: [], r_error: view.error_line(message), r_summary: "", r_slider: gr.update(maximum=1, value=0), **frame_view([], 0)}
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
                frames_state: frames,
                r_error: "",
                r_summary: summary,
                r_slider: gr.update(maximum=max(len(frames), 1), value=1 if frames else 0),
                **frame_view(frames, 1),
            }

        def load_file(path: str | None, progress: gr.Progress = gr.Progress()) -> dict[Any, Any]:  # noqa: B008 (Gradio's way)
            if not path:
                return {frames_state: [], r_error: "", r_summary: "", **frame_view([], 0)}
            try:
                text = Path(path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                return {r_error: view.error_line(f"cannot read the file: {type(exc).__name__}")}
            return run_replay(text, "Loaded", progress)

        def replay_mine(session: DemoSession | None, progress: gr.Progress = gr.Progress()) -> dict[Any, Any]:  # noqa: B008
            if session is None or not session.task:
                return {r_error: view.error_line("play an episode first")}
            return {**run_replay(session.trajectory().dumps(), "Your episode", progress), tabs: gr.update(selected="replay")}

        def move(frames: list[Frame], index: Any, delta: int) -> dict[Any, Any]:
            value = min(max(int(index or 0) + delta, 0), len(frames))
            return {r_slider: gr.update(value=value), **frame_view(frames, value)}

        r_file.change(load_file, r_file, replay_outputs)
        r_slider.change(frame_view, [frames_state, r_slider], [r_step_md, r_diff, r_output, r_breakdown], api_name="replay_step")
        r_prev.click(lambda frames, i: move(frames, i, -1), [frames_state, r_slider], [r_slider, r_step_md, r_diff, r_output, r_breakdown], api_name="replay_previous")
        r_next.click(lambda frames, i: move(frames, i, +1), [frames_state, r_slider], [r_slider, r_step_md, r_diff, r_output, r_breakdown], api_name="replay_next")
        replay_mine_btn.click(replay_mine, play_state, [*replay_outputs, tabs])

    # Sessions are independent episodes: let several events run at once (Gradio's default is one at a time),
    # whether the blocks are launched on their own or mounted on the server.
    demo.queue(default_concurrency_limit=8)
    return demo
