"""validator.py: passes against a healthy server, fails (exit 1, failures listed) against a broken one."""

from env.config import Settings
from env.runtime import Runtime
from env.sandbox.isolation import probe_isolation
from env.sandbox.limits import Limits
from env.sandbox.runner import Sandbox
from env.server.app import build_app
from tests.conftest import LiveServer
from validator import main


def test_the_validator_passes_against_the_server(live_server, capsys):
    assert main(["--url", live_server.url]) == 0
    out = capsys.readouterr().out
    assert "FAIL" not in out and out.rstrip().endswith("all checks passed")
    assert "PASS  hard: the oracle scores >= 0.9" in out and "PASS  16 concurrent episodes stay isolated" in out
    for task_id in ("easy", "medium", "repo-slice-window", "proc-easy-test-0"):  # the overfits the held-out tests catch
        assert f"PASS  {task_id}: the recorded overfit (it fits only the visible tests) is not resolved" in out


def test_the_validator_fails_when_code_cannot_run(registry, capsys):
    refusing = Sandbox(Limits(), probe_isolation(disabled={"netns", "landlock", "seccomp", "uid"}, allow_unsafe=False))
    with LiveServer(build_app(runtime=Runtime(registry, refusing, workers=4), settings=Settings())) as server:
        assert main(["--url", server.url]) == 1
    out = capsys.readouterr().out
    assert "FAIL  easy: the oracle scores >= 0.9  (score None)" in out
    assert "FAIL  the sandbox holds every guarantee a run needs  (refusing to run code: this host cannot guarantee no_network" in out
    assert "check(s) failed:" in out and "  - easy: the oracle scores >= 0.9: score None" in out
