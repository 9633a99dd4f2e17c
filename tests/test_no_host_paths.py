"""No observation shows a host path: the run directories and workspaces under the server's scratch root are random,
so every path under them is shown relative to its run's own directory (issue 38: deterministic observations)."""

from __future__ import annotations

import pytest

from env.models import DebugAction
from env.scratch import relative_paths
from env.server.environment import DebugEnvironment

ROOTS = ("/dev/shm/adbg-7-99-abcdefgh",)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ('File "/dev/shm/adbg-7-99-abcdefgh/adbg-run-x1/binary_search.py", line 3', 'File "binary_search.py", line 3'),
        ("/dev/shm/adbg-7-99-abcdefgh/adbg-ws-q2\n", ".\n"),
        ("['/dev/shm/adbg-7-99-abcdefgh/adbg-ws-q2/src', '/usr/lib/python3.11']", "['src', '/usr/lib/python3.11']"),
        ("/dev/shm/adbg-7-99-other/adbg-run-x1/a.py", "/dev/shm/adbg-7-99-other/adbg-run-x1/a.py"),  # another process's
        ("no path here", "no path here"),
    ],
)
def test_paths_under_the_scratch_root_are_relative_to_their_run(text, shown):
    assert relative_paths(text, ROOTS) == shown


def test_no_tool_s_observation_shows_a_host_path(runtime):
    roots = runtime.scratch_roots
    seen = []
    env = DebugEnvironment(runtime)
    seen.append(env.reset(task_id="easy", seed=1))
    seen.append(env.step(DebugAction(action_type="submit_fix", fixed_code="def binary_search(arr, target):\n    return 1 / 0\n", hypothesis="x")))
    env.close()
    env = DebugEnvironment(runtime)
    seen.append(env.reset(task_id="repo-slice-window", seed=1, profile="pdb_shell"))
    shell = env.step(DebugAction(action_type="run_bash", command="pwd; python -c 'import os; print(os.getcwd())'"))
    script = env.step(DebugAction(action_type="run_script", code="import os\nprint(os.getcwd())\nraise KeyError('k')\n"))
    seen += [shell, script, env.step(DebugAction(action_type="run_tests")), env.step(DebugAction(action_type="submit"))]
    env.close()
    assert shell.tool_output.splitlines()[:2] == [".", "."]
    assert script.tool_output.splitlines()[0] == "."
    assert "ZeroDivisionError" in seen[1].model_dump_json()  # the classic traceback is still there, its file relative
    for obs in seen:
        text = obs.model_dump_json()
        assert not [root for root in roots if root in text], text[:2000]
