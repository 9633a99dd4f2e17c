"""trace_report and the trace profile (issue 38 item 1): one test run in the sandboxed shell with the project's own
calls recorded, bounded, deterministic, with workspace-relative paths; information for the agent, never a reward."""

from __future__ import annotations

import json
import re
import textwrap

import pytest

from env.families.registry import FAMILIES
from env.interface import ALIASES, PROFILES
from env.models import DebugAction
from env.project import load_repo_task
from env.tools.reports import TraceReport
from env.tools.trace import parse_record, render
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
    ({"test": "tests/test_lib.py::test_nothing_here"}, "trace_report: no test 'tests/test_lib.py::test_nothing_here' ran: the task's tests hold no such test"),
    ({"test": "a test with spaces"}, "trace_report: field 'test': String should match pattern '^[^\\s\\x00]+$'"),
    ({"test": "tests/test_lib.py", "max_calls": 0}, "trace_report: field 'max_calls': Input should be greater than or equal to 1"),
    ({}, "trace_report: give the test to trace (test=tests/test_x.py::test_name), or race=true for the race check's failing interleaving"),
])  # fmt: skip
def test_bad_requests_get_a_clear_error(hostile, fields, message):
    obs = _trace(hostile, **fields)
    assert obs.error is not None and obs.error.startswith(message), obs.error
    assert not obs.done


def test_a_record_is_checked_for_shape_and_place_and_render_indents_callers():
    good = {"calls_made": 2, "cut": 0,
            "calls": [{"id": 1, "function": "f", "path": "a.py", "line": 1, "thread": "MainThread", "caller": None, "args": {"x": "1"}, "returned": "2"},
                      {"id": 2, "function": "g", "path": "a.py", "line": 5, "thread": "MainThread", "caller": 1, "args": {}, "raised": "ValueError: 'no'",
                       "self_changed": {"n": ["1", "2"]}}]}  # fmt: skip
    record = parse_record(json.dumps(good).encode(), {"a.py"})
    assert not isinstance(record, str)
    report = TraceReport(test="t.py::t", exit_code=1, calls=record.calls, calls_made=2, cut=0, pytest="")
    assert render(report) == textwrap.dedent("""\
        trace of t.py::t: failed (exit 1); 2 project call(s), 0 cut
        #1 f(x=1) -> 2  [a.py:1]
          #2 g() raised ValueError: 'no'  [a.py:5]
             self.n: 1 -> 2""")
    assert parse_record(None, {"a.py"}) == parse_record(b"", {"a.py"}) == "it sent no call record"
    assert parse_record(b'{"bad": 1}', {"a.py"}) == parse_record(b"\xff", {"a.py"}) == "its call record is not valid"
    long_value = {**good, "calls": [{**good["calls"][0], "returned": "x" * 201}]}
    assert parse_record(json.dumps(long_value).encode(), {"a.py"}) == "its call record is not valid"  # bounded values only
    assert parse_record(json.dumps(good).encode(), {"b.py"}) == "its call record names 1 path(s) that are not project files of the workspace"


def test_the_heuristic_trace_agent_traces_a_failing_test_before_it_edits(runtime, catalog, tmp_path):
    from env.eval.run import play
    from env.listing import listing_entry
    from env.server.in_process import InProcessDriver

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


# -- the hard task's race as a report (issue 38 item 4) -----------------------------------------------------------------


def _hard(runtime, catalog, code=None, seed=1):
    task = catalog.get("hard")
    episode = FAMILIES[task.family].episode(runtime, task, seed, f"race-{seed}", FAMILIES[task.family].interface("trace"))
    if code is not None:  # the module as the agent left it in the workbench
        (episode.bench.workspace.root / task.filename).write_text(code, encoding="utf-8")
    return task, episode


def test_the_hard_tasks_failing_interleaving_is_a_trace_report_with_threads_and_the_conflict(runtime, catalog):
    task, episode = _hard(runtime, catalog)
    try:
        obs = _trace(episode, race=True)
        again = _trace(episode, test="stress::ConnectionCounter")  # the verdict's own name for the check: the same
    finally:
        episode.close()
    assert obs.error is None, obs.error
    assert (obs.tool_output, obs.tool_result) == (again.tool_output, again.tool_result)  # deterministic
    report = TraceReport.model_validate(obs.tool_result["report"])
    assert report.test == "stress::ConnectionCounter" and report.exit_code == 1 and report.race is not None
    race = report.race
    assert race.problem == "updates were lost under concurrency (the final count is wrong)"
    assert "replay ran differently" not in race.problem
    # each thread's call, what it returned and what it did to the object: both increments return the same count
    assert {call.thread for call in report.calls} == {"thread A", "thread B"}
    assert all(call.function == "ConnectionCounter.increment" and call.path == "connection_counter.py" and call.line == 12 for call in report.calls)
    assert len({call.returned for call in report.calls}) == 1 and all(call.self_changed["count"] for call in report.calls)
    # the conflicting accesses, in the buggy code's own lines
    reads = [s for s in race.steps if s.event == "reads .count"]
    writes = [s for s in race.steps if s.event == "writes .count"]
    assert {s.thread for s in reads} == {s.thread for s in writes} == {"thread A", "thread B"}
    assert {(s.line, s.code) for s in reads} == {(14, "current = self.count")}
    assert {(s.line, s.code, tuple(s.locks)) for s in writes} == {(17, "self.count = new_val", ("self._lock",))}
    assert any(s.event == "paused; thread B runs" and s.line == 16 for s in race.steps)
    assert race.conflicts == [
        "thread A read .count at line 14 (current = self.count); thread B wrote .count at line 17 (self.count = new_val); then "
        "thread A wrote .count at line 17 (self.count = new_val) from the value it had read: thread B's write is lost"
    ]
    assert "conflict: thread A read .count at line 14" in obs.tool_output and "thread B: line 17 in increment: writes .count" in obs.tool_output
    assert obs.reward == 0.0 and not obs.done  # information: it pays nothing
    seen = obs.tool_output + json.dumps(obs.tool_result)
    assert "/dev/shm" not in seen and "adbg-" not in seen


def test_a_fixed_counter_reports_no_conflict(runtime, catalog):
    task, episode = _hard(runtime, catalog, code=catalog.get("hard").gold_source)
    try:
        obs = _trace(episode, race=True, max_calls=3)
    finally:
        episode.close()
    assert obs.error is None, obs.error
    report = TraceReport.model_validate(obs.tool_result["report"])
    assert report.exit_code == 0 and report.race is not None and report.race.problem == "" and report.race.conflicts == []
    assert len(report.calls) == 3 and report.cut == report.calls_made - 3 > 0
    assert "no interleaving the check ran went wrong; its last one:" in obs.tool_output
    assert report.pytest.endswith("no update was lost")


def test_a_decrement_that_checks_then_acts_on_a_stale_count_is_the_conflict(runtime, catalog):
    """A variant of the bug: the increment is fixed, the decrement still reads under one acquisition and writes under
    another; the report names the decrement's lines."""
    gold = catalog.get("hard").gold_source
    broken = gold.replace(
        '''        with self._lock:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count''',
        '''        with self._lock:
            current = self.count
        if current == 0:
            raise ValueError("no active connections")
        with self._lock:
            self.count = current - 1
        return current - 1''',
    )
    assert broken != gold
    task, episode = _hard(runtime, catalog, code=broken)
    try:
        obs = _trace(episode, race=True)
    finally:
        episode.close()
    report = TraceReport.model_validate(obs.tool_result["report"])
    assert report.exit_code == 1 and report.race is not None and report.race.conflicts, obs.tool_output
    assert all("self.count = current - 1" in text for text in report.race.conflicts)
    assert any(call.function == "ConnectionCounter.decrement" for call in report.calls)


def test_the_race_report_stays_bounded_when_the_threads_never_finish(runtime, catalog):
    spin = catalog.get("hard").buggy_source.replace("        new_val = current + 1\n", "        new_val = current + 1\n        while new_val:\n            self.peak = self.peak\n", 1)
    task, episode = _hard(runtime, catalog, code=spin)
    try:
        obs = _trace(episode, race=True)
    finally:
        episode.close()
    assert obs.error is None, obs.error
    report = TraceReport.model_validate(obs.tool_result["report"])
    assert report.exit_code == 1 and report.race is not None
    assert report.race.problem == "its threads did not finish within 20000 scheduling points"
    assert len(report.race.steps) == 160 and report.race.steps_cut > 0 and len(obs.tool_output) < 40_000


@pytest.mark.parametrize(("task_id", "fields", "message"), [
    ("easy", {"race": True}, "trace_report: this task has no race check; race=true (or test=stress::...) reports the concurrency check's "
                             "failing interleaving on a task that has one (hard). Give a test to trace instead"),
    ("hard", {"max_calls": 5}, "trace_report: give the test to trace (test=tests/test_x.py::test_name), or race=true for "
                               "the race check's failing interleaving"),
])  # fmt: skip
def test_race_requests_that_cannot_be_served_get_a_clear_error(runtime, catalog, task_id, fields, message):
    task = catalog.get(task_id)
    episode = FAMILIES[task.family].episode(runtime, task, 1, f"race-bad-{task_id}", FAMILIES[task.family].interface("trace"))
    try:
        obs = _trace(episode, **fields)
    finally:
        episode.close()
    assert obs.error == message and not obs.done


def test_a_module_the_policy_refuses_is_not_traced(runtime, catalog):
    sneaky = "import sys\n" + catalog.get("hard").buggy_source
    task, episode = _hard(runtime, catalog, code=sneaky)
    try:
        obs = _trace(episode, race=True)
    finally:
        episode.close()
    assert obs.error is not None and obs.error.startswith("trace_report: the race check cannot run this module: "), obs.error
    assert "sys" in obs.error


# -- procedural tasks: the trace arm keeps the partial view ---------------------------------------------------------------


def test_a_procedural_task_serves_a_trace_profile_that_keeps_the_partial_view(runtime, catalog):
    task = catalog.get("proc-medium-test-0")
    family = FAMILIES[task.family]
    default = family.interface("default").tools
    assert family.interface("trace").tools == (*default[:-2], "trace_report", *default[-2:])
    episode = _episode(runtime, task)
    try:
        obs = _trace(episode, test=task.fail_to_pass[0])
    finally:
        episode.close()
    assert obs.error is None, obs.error
    report = TraceReport.model_validate(obs.tool_result["report"])
    assert report.exit_code == 1 and report.calls and obs.reward == 0.0
    assert any(call.raised for call in report.calls)  # the failing call, with its arguments
    assert obs.visible_files == {}  # a report shows what ran, never a file's text: nothing is opened by it
    with pytest.raises(ValueError, match="procedural tasks have two interfaces"):
        family.interface("bash")


# -- the partial view holds in every observation of a trace (issue 47, finding 2) ----------------------------------------


def _unopened_leaks(obs, task, opened=()):
    """Lines (12+ characters) of files not opened that appear anywhere in the observation but its opened files, and in
    no opened file."""
    text = json.dumps(obs.model_dump(exclude={"visible_files"}))
    assert set(obs.visible_files) == set(opened)
    seen = {line.strip() for path in opened for line in task.files[path].splitlines()}
    found = []
    for path, content in task.files.items():
        if path in opened:
            continue
        for line in {line.strip() for line in content.splitlines()} - seen:
            if len(line) >= 12 and (line in text or json.dumps(line)[1:-1] in text):
                found.append((path, line))
    return found


def _frames(text):
    return [line for line in text.splitlines() if re.match(r"^[^\s:]+\.py:\d+ in \S+$", line)]


@pytest.fixture()
def proc(runtime, catalog):
    task = catalog.get("proc-medium-test-0")
    episode = _episode(runtime, task)
    yield task, episode
    episode.close()


def test_with_no_file_opened_a_trace_shows_frames_and_no_line_of_any_file(proc):
    task, episode = proc
    obs = _trace(episode, test=task.fail_to_pass[0])
    assert obs.error is None, obs.error
    report = obs.tool_result["report"]
    assert _unopened_leaks(obs, task) == []
    frames = _frames(report["pytest"])
    assert frames and all(frame.split(":")[0] in task.files for frame in frames)  # each frame: a file of the task and a line
    lines = report["pytest"].splitlines()
    assert lines[0] == f"{task.fail_to_pass[0]} FAILED"
    assert lines[-1] == "(the lines of files you have not opened are not shown: open_file shows them)"
    assert [line for line in lines if line.startswith("    ")] == []  # no source line under any frame


def test_a_trace_shows_the_source_line_of_opened_files_only(proc):
    task, episode = proc
    first = _trace(episode, test=task.fail_to_pass[0]).tool_result["report"]["pytest"]
    deepest = _frames(first)[-1]
    path, number = deepest.split(" in ")[0].split(":")
    assert episode.step(DebugAction(action_type="open_file", path=path)).error is None
    obs = _trace(episode, test=task.fail_to_pass[0])
    lines = obs.tool_result["report"]["pytest"].splitlines()
    at = lines.index(deepest)
    assert lines[at + 1] == "    " + task.files[path].splitlines()[int(number) - 1].strip()  # read from the file the run used
    shown = [lines[i - 1] for i, line in enumerate(lines) if line.startswith("    ")]
    assert shown == [deepest]  # the other frames' files are still unopened
    assert _unopened_leaks(obs, task, opened={path}) == []


UNOPENED_IN_A_MESSAGE = {
    # the opened file's code raises with another file's text: whole, one line, or in a repr
    "whole_file": "raise ValueError(open({other!r}).read())",
    "one_line": "raise ValueError([l for l in open({other!r}).read().splitlines() if len(l.strip()) > 20][0])",
    "repr_of_lines": "raise ValueError(repr(open({other!r}).read().splitlines()[:8]))",
    "returned_value": "return open({other!r}).read().splitlines()[-1]",
}


@pytest.mark.parametrize("how", list(UNOPENED_IN_A_MESSAGE))
def test_an_unopened_files_text_in_what_the_code_raises_or_returns_is_in_no_observation(proc, how):
    """Code the agent wrote reads an unopened file and raises (or returns) its text: run_tests' first error line, the
    trace's failure, its calls and the tool's data carry none of its lines."""
    task, episode = proc
    path = task.fault_file
    other = next(p for p in sorted(task.files) if p.endswith(".py") and p != path and "/" in p and not p.startswith("tests/") and len(task.files[p]) > 400)
    assert episode.step(DebugAction(action_type="open_file", path=path)).error is None
    text = task.files[path].splitlines()
    body = next(i for i, line in enumerate(text) if line.startswith("def ") or line.startswith("    def "))
    indent = len(text[body + 1]) - len(text[body + 1].lstrip())
    code = " " * indent + UNOPENED_IN_A_MESSAGE[how].format(other=other)
    edited = episode.step(DebugAction(action_type="edit_file", path=path, start_line=body + 2, end_line=body + 1, new_text=code + "\n"))
    assert edited.error is None, edited.error
    for action in (DebugAction(action_type="run_tests"), DebugAction(action_type="trace_report", test=task.fail_to_pass[0])):
        obs = episode.step(action)
        assert _unopened_leaks(obs, task, opened={path}) == [], (action.action_type, obs.error)


EXCERPT = """tests/test_tax.py:22: in test_rate
    assert tax.rate_for("CZ", "grooming") == 600
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
../adbg-host-path-5dbe0c1e26ec0b2c/adbg_host/importer.py:81: in hooked
    return real(*args)
E   KeyError: 'reduced_vat_bp'
E   in the project's code (sandbox):
E     File "/dev/shm/adbg-1-2-x/adbg-run-akvyxx3d/shop/tax.py", line 2, in rate_for
E       return settings.get("reduced_vat_bp")[code]
E              ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
E     File "/usr/lib/python3.11/json/__init__.py", line 346, in loads
E       return _default_decoder.decode(s)
E     File "/dev/shm/adbg-1-2-x/adbg-run-akvyxx3d/shop/settings.py", line 3, in get
E       return _current[key]
E              ~~~~~~~~^^^^^
E   KeyError: 'reduced_vat_bp'
E   assert 1 == 2
E    +  where 1 = len([3])"""


class _View:
    """What failure_lines asks of a tool context: which files it shows, and their lines."""

    def __init__(self, opened):
        self.opened = opened
        self.files = {"shop/tax.py": "import settings\nreturn real_line_two()\n", "shop/settings.py": "a\nb\nc = 3  # three\n",
                      "tests/test_tax.py": "\n" * 21 + "    assert tax.rate_for('CZ') == 600\n"}  # fmt: skip

    def shows(self, path):
        return path in self.opened or path not in self.files

    def source_line(self, path, number, test_file=False):
        lines = self.files.get(path, "").split("\n")
        return lines[number - 1] if 0 < number <= len(lines) else ""


def test_a_failure_is_rebuilt_as_frames_with_source_lines_read_here_for_shown_files_only():
    from env.tools.traced_outcome import failure_lines

    common = ["KeyError: 'reduced_vat_bp'", "in the project's code (sandbox):"]
    assert failure_lines(_View({"shop/tax.py"}), EXCERPT) == [
        "tests/test_tax.py:22 in test_rate", *common,
        "shop/tax.py:2 in rate_for", "    return real_line_two()",  # the file's line as read here, not the excerpt's
        "json/__init__.py:346 in loads",  # a library's frame: its path from the package, no line of it
        "shop/settings.py:3 in get",
        "KeyError: 'reduced_vat_bp'", "assert 1 == 2", "+  where 1 = len([3])",
        "(the lines of files you have not opened are not shown: open_file shows them)",
    ]  # fmt: skip
    everything = failure_lines(_View(set(_View(set()).files)), EXCERPT)
    assert everything[:2] == ["tests/test_tax.py:22 in test_rate", "    assert tax.rate_for('CZ') == 600"]
    assert "    c = 3  # three" in everything and not everything[-1].startswith("(the lines")
    assert not any("adbg" in line or "/dev/shm" in line or "settings.get(" in line for line in everything)


def test_the_partial_views_gate_hides_unopened_lines_as_written_in_a_repr_or_in_json():
    from env.families.procedural.unopened import PLACEHOLDER, UnopenedLines

    task_files = {"a.py": "def total(items):\n    return sum(i.price for i in items)\nx = 1\n", "b.py": "shared = 'in both files'\nraise KeyError(\"it's gone\")\n",
                  "c.py": "shared = 'in both files'\n"}  # fmt: skip
    gate = UnopenedLines.of(task_files, opened={"c.py"}, workspace={**task_files, "mine.py": "def total(items):\n"})
    hidden = "    return sum(i.price for i in items)"
    quoted = 'raise KeyError("it\'s gone")'
    assert gate.hidden == ("return sum(i.price for i in items)", quoted)  # not the opened or own lines, nor short ones
    assert gate.scrub(json.dumps([quoted])) == json.dumps([PLACEHOLDER]) and gate.scrub(repr(quoted + "!")) == f"'{PLACEHOLDER}!'"
    assert gate.scrub(f"E   ValueError: {hidden}") == f"E   ValueError:     {PLACEHOLDER}"
    assert gate.scrub(repr(["x", hidden + "\n"])) == f"['x', '    {PLACEHOLDER}\\n']"
    assert gate.scrub(json.dumps({"v": "'" + hidden + '"'})) == json.dumps({"v": "'    " + PLACEHOLDER + '"'})
    assert gate.scrub_data({"report": {"calls": [{"returned": hidden}]}, "n": 1}) == {"report": {"calls": [{"returned": "    " + PLACEHOLDER}]}, "n": 1}
    assert gate.scrub("shared = 'in both files' and def total(items):") == "shared = 'in both files' and def total(items):"
    assert UnopenedLines.of(task_files, opened=set(task_files), workspace=task_files).scrub(hidden) == hidden


@pytest.mark.parametrize("how", ["exits", "crashes"])
def test_a_traced_run_that_sends_no_record_is_an_error_without_its_output_on_a_partial_view(proc, how):
    """The agent's own conftest.py (created: no file opened) prints unopened files, then ends the traced run (the error
    names what went wrong and carries none of the output; a repository task shows its tail) or raises one's text (the
    tracer still sends its record: a report, whose outcome the trusted run gives)."""
    task, episode = proc
    sources = [p for p in sorted(task.files) if p.endswith(".py") and not p.startswith("tests/")]
    end = "import os\nos._exit(1)\n" if how == "exits" else "raise RuntimeError(open(" + repr(sources[0]) + ").read())\n"
    conftest = f"import sys\nfor path in {sources!r}:\n    print(open(path).read())\nsys.stdout.flush()\n" + end
    assert episode.step(DebugAction(action_type="create_file", path="conftest.py", content=conftest)).error is None
    obs = _trace(episode, test=task.fail_to_pass[0])
    if how == "exits":
        assert obs.error == "trace_report: the traced run failed (exit status 1): it sent no call record"
    else:
        assert obs.error is None and obs.tool_result["report"]["exit_code"] == 1 and obs.tool_result["report"]["calls"] == []
    assert _unopened_leaks(obs, task) == []


def test_an_unopened_line_in_a_collection_error_or_an_echoed_error_is_scrubbed_everywhere(proc):
    """The agent's code stops the import of an opened module with an unopened file's line: the trace's failure (a
    collection error, exit code 2) shows it nowhere. An error that echoes the agent's own text repeats in
    ``info.error``: the gate covers both."""
    from env.families.procedural.unopened import PLACEHOLDER

    task, episode = proc
    path = task.fault_file
    other = next(p for p in sorted(task.files) if p.endswith(".py") and p != path and not p.startswith("tests/") and len(task.files[p]) > 400)
    lines = task.files[other].splitlines()
    line = next(line for line in lines if len(line.strip()) > 20 and line.strip() not in task.files[path])
    assert episode.step(DebugAction(action_type="open_file", path=path)).error is None
    raising = f"raise SystemExit(open({other!r}).read().splitlines()[{lines.index(line)}])\n"
    assert episode.step(DebugAction(action_type="edit_file", path=path, start_line=1, end_line=0, new_text=raising)).error is None
    obs = _trace(episode, test=task.fail_to_pass[0])
    assert obs.error is None and obs.tool_result["report"]["exit_code"] == 2, obs.error
    assert obs.tool_result["report"]["pytest"].startswith("ERROR collecting ")
    assert _unopened_leaks(obs, task, opened={path}) == []
    echoed = episode.step(DebugAction(action_type="run_tests", test_ids=[line.strip()]))
    assert echoed.error is not None and echoed.error.startswith(f"run_tests: unknown test id '{PLACEHOLDER}'"), echoed.error
    assert echoed.info["error"] == echoed.error and _unopened_leaks(echoed, task, opened={path}) == []


def test_a_classic_tasks_traced_test_takes_its_outcome_from_the_judge(runtime, catalog):
    task = catalog.get("easy")
    episode = FAMILIES[task.family].episode(runtime, task, 1, "trace-classic", FAMILIES[task.family].interface("trace"))
    try:
        obs = _trace(episode, test="test_binary_search.py::test_finds_last_element")
        unknown = _trace(episode, test="test_binary_search.py::test_nothing")
    finally:
        episode.close()
    assert obs.error is None, obs.error
    report = obs.tool_result["report"]
    assert report["exit_code"] == 1 and report["pytest"] == (
        "test_binary_search.py::test_finds_last_element FAILED\n"
        "assert sol.binary_search([1, 3, 5, 7, 9], 9) == 4\nbinary_search([1, 3, 5, 7, 9], 9) returned -1"
    )
    assert [call["function"] for call in report["calls"]] == ["binary_search"] and report["calls"][0]["returned"] == "-1"
    assert unknown.error == "trace_report: no test 'test_binary_search.py::test_nothing' ran: the task's tests hold no such test"
