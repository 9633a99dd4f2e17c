"""The live debugger over the API: every command on a repository task and a classic task, exact frames,
variables and messages; breakpoints across edits and restarts; sessions ended by a finish, a raise,
a hang, a crash and a spent CPU budget."""

from __future__ import annotations

import pytest

from env.debugger.breakpoints import Breakpoint, shift_for_edit
from env.debugger.render import render_stop
from env.debugger.session import code_line
from env.families.classic.family import CLASSIC
from env.families.repo.family import REPO
from env.models import DebugAction
from env.project import load_repo_task
from env.runtime import Runtime
from env.sandbox.limits import Limits
from env.sandbox.runner import Sandbox
from tests import repo_fixture

OPS = """def total(items):
    result = 0
    for item in items:
        result += item
    return result


def mean(items):
    return total(items) / len(items)


def spin():
    while True:
        pass
"""

TESTS = """from calc.ops import mean, spin, total


def test_total():
    values = [1, 2, 3]
    assert total(values) == 6


def test_mean():
    assert mean([2, 4]) == 3


def test_mean_empty():
    assert mean([]) == 0
"""

SPIN_TEST = """from calc.ops import spin


def test_spin():
    spin()
"""

FILES = {"calc/__init__.py": "", "calc/ops.py": OPS, "tests/test_ops.py": TESTS, "tests/test_spin.py": SPIN_TEST}
GOLD = {**FILES, "calc/ops.py": OPS.replace("    return total(items) / len(items)", "    return total(items) / len(items) if items else 0")}
TOTAL = "tests/test_ops.py::test_total"
NOT_RUNNING = "no debugging session is running; start one with debug_start (a test id or a script path)"


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    folder = repo_fixture.write_task(
        tmp_path_factory.mktemp("calc"), FILES, GOLD, id="calc", FAIL_TO_PASS=["tests/test_ops.py::test_mean_empty"],
        PASS_TO_PASS=[TOTAL, "tests/test_ops.py::test_mean"], max_steps=60,
    )
    return load_repo_task(folder)


@pytest.fixture(scope="module")
def quick_runtime(isolation, catalog):
    """Short budgets, for the sessions that must end by a hang or a spent CPU budget."""
    rt = Runtime(catalog, Sandbox(Limits(wall_seconds=1.5, cpu_seconds=5), isolation), workers=4)
    yield rt
    rt.debug_sandbox.close()


def make(runtime, task, profile="pdb", **choices):
    return REPO.episode(runtime, task, seed=1, episode_id="dbg", interface=REPO.interface(profile, **choices))


@pytest.fixture()
def episode(runtime, task):
    ep = make(runtime, task)
    yield ep
    ep.close()


def act(ep, kind, **fields):
    return ep.step(DebugAction(action_type=kind, **fields))


def frame(file, line, function):
    return {"file": file, "line": line, "function": function}


def var(kind, text):
    return {"type": kind, "repr": text}


# -- every command on a repository task --------------------------------------------------------------


def test_start_stops_at_the_first_line_of_the_test(episode):
    obs = act(episode, "debug_start", test=TOTAL)
    assert obs.error is None
    data = obs.tool_result
    assert (data["event"], data["frame"]) == ("entry", frame("tests/test_ops.py", 5, "test_total"))
    assert data["stack"] == [frame("tests/test_ops.py", 5, "test_total")]
    assert data["locals"] == {"values": {}, "more": 0}
    assert obs.tool_output.splitlines()[:4] == [
        "> tests/test_ops.py(5)test_total()",
        "   3",
        "   4     def test_total():",
        "   5  ->     values = [1, 2, 3]",
    ]


def test_next_step_break_continue_where_inspect_eval_list_return(episode):
    act(episode, "debug_start", test="test_total")  # a unique bare name is enough
    obs = act(episode, "debug_next")
    assert obs.tool_result["frame"] == frame("tests/test_ops.py", 6, "test_total")
    assert obs.tool_result["locals"]["values"] == {"values": var("list", "[1, 2, 3]")}
    obs = act(episode, "debug_step")
    assert obs.tool_result["frame"] == frame("calc/ops.py", 2, "total")
    assert obs.tool_result["locals"]["values"] == {"items": var("list", "[1, 2, 3]")}

    obs = act(episode, "debug_break", path="calc/ops.py", line=4, condition="item == 2")
    assert obs.tool_output == "Breakpoint set at calc/ops.py:4 if item == 2"
    obs = act(episode, "debug_continue")
    assert (obs.tool_result["event"], obs.tool_result["frame"]) == ("breakpoint", frame("calc/ops.py", 4, "total"))
    assert obs.tool_result["locals"]["values"] == {"items": var("list", "[1, 2, 3]"), "result": var("int", "1"), "item": var("int", "2")}
    assert obs.tool_output.startswith("Breakpoint reached\n> calc/ops.py(4)total()")
    assert "   4 B->         result += item" in obs.tool_output

    obs = act(episode, "debug_where")
    assert obs.tool_result["stack"] == [frame("tests/test_ops.py", 6, "test_total"), frame("calc/ops.py", 4, "total")]
    assert obs.tool_output.splitlines()[:2] == ["  [1] tests/test_ops.py(6)test_total()", "> [0] calc/ops.py(4)total()"]

    obs = act(episode, "debug_inspect", frame=1)
    assert obs.tool_result["variables"]["values"] == {"values": var("list", "[1, 2, 3]")}
    assert obs.tool_output == "locals of test_total() at tests/test_ops.py:6:\n  values = [1, 2, 3]  (list)"
    obs = act(episode, "debug_inspect", scope="globals")
    assert set(obs.tool_result["variables"]["values"]) == {"total", "mean", "spin"}

    obs = act(episode, "debug_eval", expression="result + item * 10")
    assert obs.tool_result["value"] == var("int", "21")
    assert obs.tool_output == "21  (int)"
    obs = act(episode, "debug_eval", expression="items[7]")
    assert obs.error == "debug_eval: IndexError: list index out of range"

    obs = act(episode, "debug_list")
    assert obs.tool_result["current"] == 4 and obs.tool_result["breakpoints"] == [4]
    assert [n for n, _ in obs.tool_result["lines"]] == list(range(1, 10))

    act(episode, "debug_clear", path="calc/ops.py", line=4)
    obs = act(episode, "debug_return")
    assert (obs.tool_result["event"], obs.tool_result["frame"]) == ("return", frame("calc/ops.py", 5, "total"))
    assert obs.tool_result["return_value"] == var("int", "6")
    assert "return value: 6  (int)" in obs.tool_output
    obs = act(episode, "debug_next")  # the caller has no line left: it stops at its own return
    assert (obs.tool_result["event"], obs.tool_result["frame"]) == ("return", frame("tests/test_ops.py", 6, "test_total"))
    assert obs.tool_result["return_value"] == var("NoneType", "None")
    obs = act(episode, "debug_continue")
    assert obs.tool_result["ended"] is True
    assert obs.tool_result["reason"] == "the test tests/test_ops.py::test_total PASSED"
    assert obs.tool_output.startswith("The debugging session ended: the test tests/test_ops.py::test_total PASSED.")
    obs = act(episode, "debug_next")
    assert obs.error == f"debug_next: {NOT_RUNNING} (the last one ended: the test tests/test_ops.py::test_total PASSED)"


def test_until_leaves_a_loop_and_a_statement_changes_a_local(episode):
    act(episode, "debug_break", path="calc/ops.py", line=4)
    obs = act(episode, "debug_start", test=TOTAL, stop_at_entry=False)
    assert obs.tool_result["frame"] == frame("calc/ops.py", 4, "total")
    act(episode, "debug_clear")
    obs = act(episode, "debug_until", line=5)
    assert obs.tool_result["frame"] == frame("calc/ops.py", 5, "total")
    assert obs.tool_result["locals"]["values"]["result"] == var("int", "6")
    obs = act(episode, "debug_eval", expression="result = 100")
    assert obs.tool_output == "(statement executed)"
    obs = act(episode, "debug_continue")
    assert obs.tool_result["reason"] == "the test tests/test_ops.py::test_total FAILED: assert 100 == 6 (at tests/test_ops.py:6)"
    assert obs.tool_result["outcome"] == "failed"


def test_a_raising_test_ends_the_session_with_its_error(episode):
    obs = act(episode, "debug_start", test="tests/test_ops.py::test_mean_empty", stop_at_entry=False)
    assert obs.tool_result["reason"] == (
        "the test tests/test_ops.py::test_mean_empty FAILED: ZeroDivisionError: division by zero (at calc/ops.py:9)"
    )
    assert "ZeroDivisionError" in obs.tool_result["output"]


def test_restart_keeps_breakpoints_and_target(episode):
    act(episode, "debug_break", path="calc/ops.py", line=9)
    act(episode, "debug_start", test="tests/test_ops.py::test_mean", stop_at_entry=False)
    obs = act(episode, "debug_continue")
    assert obs.tool_result["ended"] is True
    obs = act(episode, "debug_restart")  # the same target, run the same way: straight to the breakpoint
    assert obs.tool_result["event"] == "breakpoint"
    assert obs.tool_result["frame"] == frame("calc/ops.py", 9, "mean")
    assert obs.tool_result["locals"]["values"] == {"items": var("list", "[2, 4]")}


def test_breakpoints_move_with_edits_and_the_session_ends(episode):
    act(episode, "debug_break", path="calc/ops.py", line=4)
    act(episode, "debug_break", path="calc/ops.py", line=9)
    act(episode, "debug_start", test=TOTAL)
    obs = act(episode, "edit", path="calc/ops.py", start_line=1, end_line=1, new_text='def total(items):\n    """Sum."""')
    assert obs.error is None
    assert obs.tool_output.endswith(
        "The debugging session ended because the code changed; debug_restart runs it again on the new code "
        "(breakpoints: calc/ops.py:5, calc/ops.py:10)."
    )
    obs = act(episode, "replace_text", path="calc/ops.py", old_text="        result += item\n", new_text="        result = result + item\n")
    assert obs.tool_output.endswith("Breakpoints inside the edited lines were removed: calc/ops.py:5.")
    obs = act(episode, "debug_restart")
    obs = act(episode, "debug_continue")
    assert obs.tool_result["ended"] is True  # test_total never reaches mean()
    assert obs.tool_result["breakpoints"] == [{"path": "calc/ops.py", "line": 10, "condition": None, "log_message": None}]


def test_debugging_a_script_the_agent_wrote(episode):
    act(episode, "debug_start", test=TOTAL)  # unlocks the edit gate
    act(episode, "create_file", path="repro.py", content="from calc.ops import mean\n\nvalue = mean([1, 2])\nprint('mean is', value)\n")
    obs = act(episode, "debug_start", script="repro.py")
    assert obs.tool_result["frame"] == frame("repro.py", 1, "<module>")
    act(episode, "debug_next")
    obs = act(episode, "debug_next")
    assert obs.tool_result["locals"]["values"]["value"] == var("float", "1.5")
    obs = act(episode, "debug_continue")
    assert obs.tool_result["reason"] == "the script finished (exit status 0)"
    assert obs.tool_result["output"] == "mean is 1.5\n"


def test_run_script_runs_code_with_the_project_importable(episode):
    obs = act(episode, "run_script", code="from calc.ops import total\nprint(total([4, 5]))\n")
    assert obs.error is None
    assert obs.tool_output == "9\n[the script finished (exit status 0)]"
    obs = act(episode, "run_script", code="raise ValueError('boom')\n")
    assert obs.tool_output == "[the script raised ValueError: boom (at _adbg_script.py:1)]"
    obs = act(episode, "run_script", code="import socket\nsocket.create_connection(('127.0.0.1', 80))\n")
    assert obs.tool_output.startswith("[the script raised PermissionError")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"test": "tests/nope.py::test_x"}, "debug_start: unknown test 'tests/nope.py::test_x'; the debuggable tests include: "),
        ({}, "debug_start: give exactly one of 'test' (a test id) or 'script' (a Python file in the repository)"),
        ({"script": "missing.py"}, "debug_start: no Python file 'missing.py' in the repository (create it first, then debug it)"),
        ({"script": "../etc/passwd"}, "'../etc/passwd' is outside the repository"),
    ],
)
def test_start_mistakes(episode, fields, message):
    obs = act(episode, "debug_start", **fields)
    assert obs.error.startswith(message)
    assert obs.step_number == 1


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"path": "calc/ops.py", "line": 6}, "debug_break: calc/ops.py:6 cannot hold a breakpoint: line 6 is blank"),
        ({"path": "calc/ops.py", "line": 99}, "debug_break: calc/ops.py:99 cannot hold a breakpoint: line 99 is past the end of the file (14 lines)"),
        ({"path": "calc/nope.py", "line": 1}, "debug_break: no file 'calc/nope.py' in the repository"),
        ({"path": "calc/ops.py", "line": 2, "condition": "item =="}, "debug_break: the condition is not a Python expression: invalid syntax"),
        ({"path": "calc/ops.py", "line": 2, "log_message": "at {item ==}"}, "debug_break: {item ==} in the log message is not a Python expression: invalid syntax"),
        ({"path": "calc/ops.py", "line": 0}, "debug_break: field 'line': Input should be greater than or equal to 1"),
    ],
)
def test_break_mistakes(episode, fields, message):
    assert act(episode, "debug_break", **fields).error == message


def test_commands_without_a_session(episode):
    for kind in ("debug_continue", "debug_step", "debug_next", "debug_return", "debug_until", "debug_where", "debug_inspect", "debug_list"):
        assert act(episode, kind).error == f"{kind}: {NOT_RUNNING}"
    assert act(episode, "debug_eval", expression="1").error == f"debug_eval: {NOT_RUNNING}"
    assert act(episode, "debug_restart").error == "debug_restart: no session was started yet; use debug_start"
    assert act(episode, "debug_clear", path="calc/ops.py", line=3).error == "debug_clear: no breakpoint at calc/ops.py:3; breakpoints: none"


# -- sessions that end badly ---------------------------------------------------------------------


def test_a_hang_ends_the_session(quick_runtime, task):
    ep = make(quick_runtime, task)
    try:
        obs = act(ep, "debug_start", test="tests/test_spin.py::test_spin", stop_at_entry=False)
        assert obs.tool_result["reason"] == "the program did not stop or finish within 1.5 s (it may hang); the session ended"
        assert act(ep, "debug_next").error.startswith(f"debug_next: {NOT_RUNNING} (the last one ended: the program did not stop")
        obs = act(ep, "debug_start", test=TOTAL)  # a new session works
        assert obs.tool_result["event"] == "entry"
    finally:
        ep.close()


def test_a_crash_and_a_raise_end_the_session(episode):
    act(episode, "debug_start", test=TOTAL)
    act(episode, "create_file", path="crash.py", content="import os\nos.abort()\n")
    act(episode, "create_file", path="fail.py", content="x = 1\nraise ValueError('boom')\n")
    obs = act(episode, "debug_start", script="crash.py", stop_at_entry=False)
    assert obs.tool_result["reason"] == "the program's process stopped (the code's process was killed by SIGABRT); the session ended"
    obs = act(episode, "debug_start", script="fail.py", stop_at_entry=False)
    assert obs.tool_result["reason"] == "the script raised ValueError: boom (at fail.py:2)"


def test_a_spent_cpu_budget_ends_the_session(isolation, catalog, task):
    rt = Runtime(catalog, Sandbox(Limits(wall_seconds=10, cpu_seconds=1), isolation), workers=2)
    ep = make(rt, task)
    try:
        obs = act(ep, "debug_start", test="tests/test_spin.py::test_spin", stop_at_entry=False)
        assert obs.tool_result["reason"] == "the program used up its CPU budget (1 s); the session ended"
    finally:
        ep.close()
        rt.debug_sandbox.close()


# -- the edit gate and relays ------------------------------------------------------------------------


GATE = "edit is locked: the edit gate opens once a debugger command succeeds in this relay (relay {n}); inspect the program first, e.g. debug_start on a failing test"


def test_the_edit_gate_locks_edits_until_a_debugger_command_succeeds(episode):
    obs = act(episode, "edit", path="calc/ops.py", start_line=2, end_line=2, new_text="    result = 0")
    assert obs.error == GATE.format(n=1)
    assert obs.step_number == 1 and obs.info["interface"] == {"profile": "pdb", "edit_gate": True, "unlocked": False, "relay": 1}
    assert act(episode, "debug_where").error  # a failed debugger command does not open it
    assert act(episode, "edit", path="calc/ops.py", start_line=2, end_line=2, new_text="    result = 0").error == GATE.format(n=1)
    act(episode, "debug_break", path="calc/ops.py", line=2)
    assert act(episode, "edit", path="calc/ops.py", start_line=2, end_line=2, new_text="    result = 0").error is None
    obs = act(episode, "new_relay")
    assert obs.tool_output == "A new relay has started."
    assert act(episode, "replace_text", path="calc/ops.py", old_text="result = 0", new_text="result = 0 ").error == GATE.format(n=2).replace("edit is", "replace_text is")


def test_the_gate_is_off_for_pdb_shell_and_can_be_switched(runtime, task):
    for profile, choices, locked in (("pdb_shell", {}, False), ("pdb", {"edit_gate": False}, False), ("bash", {"edit_gate": True}, True)):
        ep = make(runtime, task, profile, **choices)
        obs = act(ep, "create_file", path="notes.py", content="x = 1\n")
        assert (obs.error is not None) == locked
        ep.close()


# -- the classic tasks --------------------------------------------------------------------------------


def test_debugging_the_classic_easy_task(runtime, catalog):
    ep = CLASSIC.episode(runtime, catalog.get("easy"), seed=1, episode_id="c", interface=CLASSIC.interface("pdb"))
    try:
        obs = ep.step(DebugAction(action_type="submit_fix", fixed_code=catalog.get("easy").gold_source, hypothesis="loop bound"))
        assert obs.error == GATE.format(n=1).replace("edit is", "submit_fix is")
        obs = ep.step(DebugAction(action_type="debug_start", test="test_finds_last_element"))
        assert obs.tool_result["frame"] == frame("test_binary_search.py", 13, "test_finds_last_element")
        obs = ep.step(DebugAction(action_type="debug_step"))
        assert obs.tool_result["frame"] == frame("binary_search.py", 3, "binary_search")
        assert obs.tool_result["locals"]["values"] == {"arr": var("list", "[1, 3, 5, 7, 9]"), "target": var("int", "9")}
        ep.step(DebugAction(action_type="debug_break", path="binary_search.py", line=12))
        obs = ep.step(DebugAction(action_type="debug_continue"))
        assert obs.tool_result["frame"] == frame("binary_search.py", 12, "binary_search")
        assert obs.tool_result["locals"]["values"]["left"] == var("int", "4")
        assert obs.tool_result["locals"]["values"]["right"] == var("int", "4")
        obs = ep.step(DebugAction(action_type="debug_continue"))
        assert obs.tool_result["reason"] == (
            "the test test_binary_search.py::test_finds_last_element FAILED: assert -1 == 4 (at test_binary_search.py:13)"
        )
        obs = ep.step(DebugAction(action_type="view_file", path="binary_search.py", start_line=4, end_line=4))
        assert obs.tool_output == "4 |     while left < right:\n[lines 4-4 of 12]"
        obs = ep.step(DebugAction(action_type="submit_fix", fixed_code=catalog.get("easy").gold_source, hypothesis="the loop must run while left <= right"))
        assert obs.done and obs.tests_passed == obs.tests_total
    finally:
        ep.close()


def test_the_classic_workbench_follows_submissions(runtime, catalog):
    task = catalog.get("easy")
    ep = CLASSIC.episode(runtime, task, seed=1, episode_id="c2", interface=CLASSIC.interface("pdb", edit_gate=False))
    try:
        ep.step(DebugAction(action_type="view_file", path="binary_search.py"))
        half = task.gold_source.replace("return -1", "return -2", 1)
        ep.step(DebugAction(action_type="submit_fix", fixed_code=half, hypothesis="the loop stops early: left <= right"))
        obs = ep.step(DebugAction(action_type="view_file", path="binary_search.py"))
        assert "return -2" in obs.tool_output
        obs = ep.step(DebugAction(action_type="debug_start", test="test_missing_value_returns_minus_one", stop_at_entry=False))
        assert obs.tool_result["reason"] == (
            "the test test_binary_search.py::test_missing_value_returns_minus_one FAILED: assert -2 == -1 (at test_binary_search.py:17)"
        )
    finally:
        ep.close()


def test_the_default_classic_interface_is_unchanged(runtime, catalog):
    ep = CLASSIC.episode(runtime, catalog.get("easy"), seed=1, episode_id="c3")
    obs = ep.step(DebugAction(action_type="debug_start", test="x"))
    assert obs.error == "unknown action_type 'debug_start'; expected one of: submit_fix, query_context, give_up"
    assert "interface" not in obs.info


# -- pure parts ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "end", "count", "expected", "dropped"),
    [
        (1, 1, 2, [3, 4, 10], []),  # one line became two: everything below moves down
        (3, 4, 1, [2, 8], [3]),  # two lines became one; the breakpoint inside is dropped
        (10, 9, 3, [2, 3, 9], []),  # an insertion below every breakpoint moves none
        (3, 2, 1, [2, 4, 10], []),  # an insertion before line 3 moves line 3 and below
        (2, 9, 0, [], [2, 3, 9]),  # the whole range deleted
    ],
)
def test_shift_for_edit(start, end, count, expected, dropped):
    bps = [Breakpoint(path="a.py", line=n) for n in (2, 3, 9)] + [Breakpoint(path="b.py", line=3)]
    kept, gone = shift_for_edit(bps, "a.py", start, end, count)
    assert [b.line for b in kept if b.path == "a.py"] == expected
    assert [b.line for b in gone] == dropped
    assert [b for b in kept if b.path == "b.py"] == [Breakpoint(path="b.py", line=3)]


def test_code_line():
    text = "x = 1\n\n# note\ny = 2\n"
    assert [code_line(text, n) for n in (1, 2, 3, 4, 5)] == [
        None, "line 2 is blank", "line 3 is a comment", None, "line 5 is past the end of the file (4 lines)",
    ]


def test_render_stop():
    state = {
        "event": "breakpoint", "note": "", "frame": frame("a.py", 2, "f"), "stack": [frame("a.py", 2, "f")],
        "locals": {"values": {"x": var("int", "1")}, "more": 3}, "source": [[1, "def f(x):"], [2, "    return x"]],
    }
    assert render_stop(state, "hi\n", [Breakpoint(path="a.py", line=2)]) == (
        "Breakpoint reached\n> a.py(2)f()\n   1     def f(x):\n   2 B->     return x\nlocals:\n  x = 1  (int)\n  ... 3 more not shown\n"
        "--- program output ---\nhi"
    )


# -- limits and hostile replies -------------------------------------------------------------------


def test_the_number_of_debugging_sessions_is_capped(isolation, catalog, task):
    rt = Runtime(catalog, Sandbox(Limits(), isolation), workers=2, debug_sessions=1)
    first, second = make(rt, task), make(rt, task)
    try:
        assert act(first, "debug_start", test=TOTAL).tool_result["event"] == "entry"
        assert act(second, "debug_start", test=TOTAL).error == (
            "the server is running its maximum of 1 debugging sessions; try again later (a session ends with its episode, or when it finishes)"
        )
        act(first, "debug_continue")  # the program finishes: its slot is free again
        assert act(second, "debug_start", test=TOTAL).tool_result["event"] == "entry"
        assert act(first, "debug_start", test=TOTAL).error.startswith("the server is running its maximum of 1")
        second.close()
        assert act(first, "debug_start", test=TOTAL).tool_result["event"] == "entry"
    finally:
        first.close()
        second.close()
        rt.debug_sandbox.close()


FORGE = """import gc, json
tracer = next(o for o in gc.get_objects() if type(o).__name__ == "Tracer")
send = next(o for o in gc.get_objects() if getattr(o, "__qualname__", None) == "send" and "framing" in str(getattr(o, "__module__", "")))
send(json.dumps({"id": tracer.pending, "ok": {"stopped": True, "event": "entry", "frame": "nowhere", "stack": 7}}))
"""


def test_a_forged_reply_ends_the_session_and_nothing_else(episode):
    act(episode, "debug_start", test=TOTAL)
    act(episode, "create_file", path="forge.py", content=FORGE)
    obs = act(episode, "debug_start", script="forge.py", stop_at_entry=False)
    assert obs.tool_result["reason"] == "the debugger's process sent a malformed reply (expected StopState); the session ended"
    assert act(episode, "debug_start", test=TOTAL).tool_result["event"] == "entry"  # the next session is fine


def test_every_command_on_the_classic_medium_task(runtime, catalog):
    task = catalog.get("medium")
    ep = CLASSIC.episode(runtime, task, seed=1, episode_id="c4", interface=CLASSIC.interface("pdb_shell"))
    step = lambda kind, **f: ep.step(DebugAction(action_type=kind, **f))  # noqa: E731
    try:
        obs = step("debug_start", test="test_authenticate_alice_with_correct_password")
        assert obs.tool_result["frame"] == frame("test_auth.py", 12, "test_authenticate_alice_with_correct_password")
        obs = step("debug_step")
        assert obs.tool_result["frame"]["file"] == "auth.py" and obs.tool_result["frame"]["function"] == "authenticate_user"
        assert obs.tool_result["locals"]["values"]["username"] == var("str", "'alice'")
        obs = step("debug_where")
        assert [f["function"] for f in obs.tool_result["stack"]] == ["test_authenticate_alice_with_correct_password", "authenticate_user"]
        obs = step("debug_inspect", frame=1, scope="globals")
        assert "USERS" in obs.tool_result["variables"]["values"]
        obs = step("debug_eval", expression="username.upper()")
        assert obs.tool_result["value"] == var("str", "'ALICE'")
        obs = step("debug_list")
        assert obs.tool_result["file"] == "auth.py" and obs.tool_result["current"] == obs.tool_result["lines"][5][0]
        obs = step("debug_next")
        assert obs.tool_result["frame"]["function"] == "authenticate_user"
        obs = step("debug_until")
        assert obs.tool_result["frame"]["function"] == "authenticate_user"
        obs = step("debug_return")
        assert obs.tool_result["event"] == "return" and obs.tool_result["frame"]["function"] == "authenticate_user"
        obs = step("debug_continue")
        assert obs.tool_result["ended"] is True
        assert step("debug_restart").tool_result["event"] == "entry"
        obs = step("run_bash", command="ls && python -m pytest -q test_auth.py 2>&1 | tail -1")
        assert obs.tool_output.splitlines()[:4] == ["auth.py", "conftest.py", "env", "test_auth.py"]
        assert " failed, " in obs.tool_output and obs.tool_output.rstrip().endswith("]")
        assert step("debug_clear").tool_output == "Cleared 0 breakpoint(s); remaining: none"
    finally:
        ep.close()


def test_a_logpoint_writes_its_message_to_the_output_and_goes_on(episode):
    message = "item={item} result={result} {{braces}} {missing}"
    obs = act(episode, "debug_break", path="calc/ops.py", line=4, log_message=message)
    assert obs.tool_output == f"Breakpoint set at calc/ops.py:4 log {message!r}"
    act(episode, "debug_break", path="calc/ops.py", line=5, condition="result > 5", log_message="total {result}")
    obs = act(episode, "debug_start", test="test_total", stop_at_entry=False)
    assert obs.tool_result["ended"] is True and obs.tool_result["outcome"] == "passed"  # no stop on the way
    unknown = "<NameError: name 'missing' is not defined>"
    assert [line for line in obs.tool_result["output"].splitlines() if line.startswith("[logpoint")] == [
        f"[logpoint calc/ops.py:4] item=1 result=0 {{braces}} {unknown}",
        f"[logpoint calc/ops.py:4] item=2 result=1 {{braces}} {unknown}",
        f"[logpoint calc/ops.py:4] item=3 result=3 {{braces}} {unknown}",
        "[logpoint calc/ops.py:5] total 6",  # its condition held once
    ]
    assert obs.tool_result["breakpoints"][1] == {"path": "calc/ops.py", "line": 5, "condition": "result > 5", "log_message": "total {result}"}
