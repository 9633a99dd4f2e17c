"""validator.py: passes against a healthy server, fails (exit 1, failures listed) against a broken one; its last line
counts the checks and gives the time."""

import re

from env.config import Settings
from env.runtime import Runtime
from env.sandbox.isolation import probe_isolation
from env.sandbox.limits import Limits
from env.sandbox.runner import Sandbox
from env.server.app import build_app
from env.validation.presubmission import Checklist, summary
from tests.conftest import LiveServer
from validator import main

LAST_LINE = re.compile(r"(\d+) passed, (\d+) failed in \d+\.\d s")


# Every family, and the tasks whose checks are asserted below (every task's validity is the business of
# test_bundled_tasks.py and test_reward_integrity.py; this file tests the validator).
SUBSET = "easy,medium,hard,repo-slice-window,repo-init-order,proc-easy-test-0,proc-hard-test-0,race-missed-signal-job-queue-8"


def test_the_validator_passes_against_the_server(live_server, capsys):
    assert main(["--url", live_server.url, "--tasks", SUBSET]) == 0
    out = capsys.readouterr().out
    *_, verdict, last = out.rstrip().splitlines()
    assert "FAIL" not in out and verdict == "all checks passed"
    counted = LAST_LINE.fullmatch(last)
    assert counted and int(counted[1]) == out.count("PASS  ") and counted[2] == "0", last
    assert "PASS  race-missed-signal-job-queue-8: every degenerate policy scores exactly 0.0 and earns no reward" in out
    assert "PASS  hard: the oracle scores >= 0.9" in out and "PASS  16 concurrent episodes stay isolated" in out
    for task_id in ("easy", "medium", "repo-slice-window", "proc-easy-test-0"):  # the overfits the held-out tests catch
        assert f"PASS  {task_id}: the recorded overfit (it fits only the visible tests) is not resolved" in out
    played = {line.split(":")[0].removeprefix("PASS  ") for line in out.splitlines() if ": the oracle scores >= 0.9" in line}
    assert played == set(SUBSET.split(","))  # only the tasks asked for are played; the endpoints are checked whole
    assert "PASS  openenv.yaml lists the server's tasks" in out


def test_a_task_the_server_does_not_serve_is_refused_by_name(live_server, capsys):
    assert main(["--url", live_server.url, "--tasks", "easy,no-such-task"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("validator.py: --tasks names tasks the server does not serve: no-such-task (it serves easy, ")


def test_the_validator_fails_when_code_cannot_run(catalog, capsys):
    refusing = Sandbox(Limits(), probe_isolation(disabled={"netns", "landlock", "seccomp", "uid"}, allow_unsafe=False))
    with LiveServer(build_app(runtime=Runtime(catalog, refusing, workers=4), settings=Settings())) as server:
        assert main(["--url", server.url, "--tasks", "easy,hard,repo-slice-window"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  easy: the oracle scores >= 0.9  (score None)" in out
    assert "FAIL  the sandbox holds every guarantee a run needs  (refusing to run code: this host cannot guarantee no_network" in out
    assert "check(s) failed:" in out and "  - easy: the oracle scores >= 0.9: score None" in out
    counted = LAST_LINE.fullmatch(out.rstrip().splitlines()[-1])
    assert counted and (int(counted[1]), int(counted[2])) == (out.count("PASS  "), out.count("FAIL  ")), out[-300:]


def test_the_last_line_counts_and_times():
    """The line both modes end with (the modes themselves run above and in test_validator_v2.py)."""
    assert summary(94, 0, 41.27) == "94 passed, 0 failed in 41.3 s"
    assert summary(20, 1, 61, skipped=5) == "20 passed, 1 failed, 5 skipped in 61.0 s"
    assert summary(3, 0, 0.04, skipped=0, errors=2) == "3 passed, 0 failed, 2 errored in 0.0 s"
    check = Checklist(echo=False)
    for ok in (True, False, True):
        check("a check", ok, "why")
    assert (check.passed, len(check.failures)) == (2, 1)
