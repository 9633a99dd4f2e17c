"""trace_report and the trace profile (issue 38 item 1): one test run in the sandboxed shell with the project's own
calls recorded, bounded, deterministic, with workspace-relative paths; information for the agent, never a reward."""

from __future__ import annotations

import json
import textwrap

import pytest

from env.families.registry import FAMILIES
from env.interface import ALIASES, PROFILES
from env.models import DebugAction
from env.project import load_repo_task
from env.tools.trace import MARKER, TraceReport, parse_report, render
from tests import repo_fixture

REPO_TASKS = [f"repo-{name}" for name in (
    "cache-stale", "class-attribute", "config-two-files", "cross-module-symptom", "encoding", "float-compare",
    "init-order", "mutable-default", "pagination-off-by-one", "set-ordering", "slice-window", "swallowed-error",
    "timezone-boundary", "two-file-fix", "wrong-exception",
)]  # fmt: skip


def _episode(runtime, task, profile="trace"):
    family = FAMILIES[task.family]
    return family.episode(runtime, task, 1, f"trace-{task.id}", family.interface(profile))


def _trace(episode, **fields):
    return episode.step(DebugAction(action_type="trace_report", **fields))


def test_the_trace_profile_has_the_tracer_and_neither_shell_nor_debugger():
    assert PROFILES["trace"].tools == (
        "list_dir", "view_file", "search", "edit", "replace_text", "create_file", "run_tests", "diff", "trace_report", "submit", "give_up",
    )
    for name in ("trace", "call_trace", "trace_test", "get_trace"):
        assert ALIASES[name].tools == ("trace_report",) and ALIASES[name].args["test_id"] == "test"


@pytest.mark.parametrize("task_id", REPO_TASKS)
def test_a_failing_test_of_every_bundled_repository_task_is_traced_to_the_buggy_code(runtime, catalog, task_id):
    task = catalog.get(task_id)
    episode = _episode(runtime, task)
    try:
        obs = _trace(episode, test=task.fail_to_pass[0])
    finally:
        episode.close()
    assert obs.error is None, obs.error
    report = TraceReport.model_validate(obs.tool_result["report"])
    assert report.exit_code == 1 and 0 < len(report.calls) <= 40
    assert len(json.dumps(obs.tool_result["report"]["calls"])) <= 11_000
    assert report.calls_made == len(report.calls) + report.cut
    # the buggy code is on the way: a call into a function the gold fix changes, with its arguments
    fixed = {(loc.file, loc.function.rsplit(".", 1)[-1]) for loc in task.gold_locations}
    reached = {(call.path, call.function.rsplit(".", 1)[-1]) for call in report.calls}
    assert fixed & reached or {f for f, _ in fixed} & {p for p, _ in reached}, (fixed, reached)
    assert all(call.args is not None for call in report.calls)
    seen = obs.tool_output + json.dumps(report.model_dump())
    assert "/dev/shm" not in seen and "adbg-" not in seen and str(runtime.shell.tmp_root) not in seen
    assert obs.reward == 0.0  # a report is information: it pays nothing


def test_two_runs_give_the_same_report(runtime, catalog):
    task = catalog.get("repo-mutable-default")
    reports = []
    for _ in range(2):
        episode = _episode(runtime, task)
        try:
            obs = _trace(episode, test=task.fail_to_pass[0])
        finally:
            episode.close()
        reports.append((obs.tool_output, obs.tool_result))
    assert reports[0] == reports[1]


PROJECT = '''import sys


class Loud:
    def __repr__(self):
        raise RuntimeError("no repr for you")


class Huge:
    def __repr__(self):
        return "x" * 100000


def deep(n):
    return 0 if n == 0 else 1 + deep(n - 1)


def shout(thing, big):
    deep(400)
    raise ValueError("too loud")


def lie():
    import atexit
    print("<<adbg-trace-report>>{\\"forged\\": true}")
    sys.settrace(None)
    return 1
'''
TESTS = '''from lib import Huge, Loud, lie, shout


def test_hostile():
    try:
        shout(Loud(), Huge())
    except ValueError:
        pass
    assert lie() == 1  # it also turns the tracer off: later calls go unrecorded
    assert False, "still failing"
'''


@pytest.fixture()
def hostile(runtime, tmp_path):
    files = {"lib/__init__.py": PROJECT, "tests/test_lib.py": TESTS}
    task = load_repo_task(repo_fixture.write_task(tmp_path / "t", files, files, FAIL_TO_PASS=["tests/test_lib.py::test_hostile"], PASS_TO_PASS=[]))
    episode = _episode(runtime, task)
    yield episode
    episode.close()


def test_hostile_reprs_deep_recursion_and_a_forged_line_stay_bounded(hostile):
    obs = _trace(hostile, test="tests/test_lib.py::test_hostile", max_calls=30)
    assert obs.error is None, obs.error
    report = TraceReport.model_validate(obs.tool_result["report"])
    kept = {call.function for call in report.calls}
    assert len(report.calls) <= 30 and report.cut == report.calls_made - len(report.calls) and report.calls_made >= 402
    assert "lie" in kept  # the last calls are kept; the forged line printed inside the test is not the report
    assert all(len(value) <= 120 for call in report.calls for value in call.args.values())
    shout = next(call for call in report.calls if call.function == "shout")  # it raised: on the failing path
    assert shout.args == {"thing": "<repr failed: RuntimeError>", "big": "x" * 57 + "..."}
    assert shout.raised == "ValueError: ValueError('too loud')"
    assert obs.reward == 0.0


@pytest.mark.parametrize(("fields", "message"), [
    ({"test": "tests/test_lib.py::test_nothing_here"}, "trace_report: no test 'tests/test_lib.py::test_nothing_here' ran: "),
    ({"test": "a test with spaces"}, "trace_report: field 'test': String should match pattern '^[^\\s\\x00]+$'"),
    ({"test": "tests/test_lib.py", "max_calls": 0}, "trace_report: field 'max_calls': Input should be greater than or equal to 1"),
    ({}, "trace_report: missing field 'test'"),
])  # fmt: skip
def test_bad_requests_get_a_clear_error(hostile, fields, message):
    obs = _trace(hostile, **fields)
    assert obs.error is not None and obs.error.startswith(message), obs.error
    assert not obs.done


def test_parse_takes_the_last_well_formed_report_and_render_indents_callers():
    good = {"test": "t.py::t", "exit_code": 1, "calls_made": 2, "cut": 0, "pytest": "",
            "calls": [{"id": 1, "function": "f", "path": "a.py", "line": 1, "thread": "MainThread", "caller": None, "args": {"x": "1"}, "returned": "2"},
                      {"id": 2, "function": "g", "path": "a.py", "line": 5, "thread": "MainThread", "caller": 1, "args": {}, "raised": "ValueError: 'no'",
                       "self_changed": {"n": ["1", "2"]}}]}  # fmt: skip
    report = parse_report(f"noise\n{MARKER}{{\"bad\": 1}}\n{MARKER}{json.dumps(good)}\nnoise {MARKER}{{\"bad\": 2}}\n")
    assert report is not None and render(report) == textwrap.dedent("""\
        trace of t.py::t: failed (exit 1); 2 project call(s), 0 cut
        #1 f(x=1) -> 2  [a.py:1]
          #2 g() raised ValueError: 'no'  [a.py:5]
             self.n: 1 -> 2""")
    assert parse_report(f"{MARKER}{{\"bad\": 1}}") is None and parse_report("no marker") is None


def test_the_heuristic_trace_agent_traces_a_failing_test_before_it_edits(runtime, catalog, tmp_path):
    from env.eval.in_process import InProcessDriver
    from env.eval.run import play
    from env.listing import listing_entry

    task = catalog.get("repo-mutable-default")
    steps = tmp_path / "steps.jsonl"
    traced = play(InProcessDriver(runtime), "heuristic-trace", listing_entry(task.summary()), 0, steps, profile="trace")
    actions = [json.loads(line)["action"] for line in steps.read_text().splitlines()]
    assert [a["action_type"] for a in actions[:3]] == ["run_tests", "trace_report", "search"]
    assert actions[1]["test"] in task.fail_to_pass
    first_edit = next(i for i, a in enumerate(actions) if a["action_type"] == "edit")
    assert next(i for i, a in enumerate(actions) if a["action_type"] == "trace_report") < first_edit
    assert traced["agent"] == "heuristic-trace@trace"
    # without the tool (the default profile) it plays exactly as the heuristic
    plain = play(InProcessDriver(runtime), "heuristic", listing_entry(task.summary()), 0, tmp_path / "a.jsonl")
    same = play(InProcessDriver(runtime), "heuristic-trace", listing_entry(task.summary()), 0, tmp_path / "b.jsonl")
    assert plain["actions"] == same["actions"] and plain["rewards"] == same["rewards"]
