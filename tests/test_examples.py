"""The README's examples run as written against a live server."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_example(name: str, url: str) -> str:
    done = subprocess.run([sys.executable, str(ROOT / "examples" / name), url], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_http_example(live_server):
    out = run_example("http_episode.py", live_server.url)
    assert "6/8 tests pass on the buggy code" in out
    assert out.rstrip().endswith("reward 0.5375, done True, tests 8/8, grade 0.96")


def test_websocket_example(live_server):
    out = run_example("ws_episode.py", live_server.url)
    assert out.splitlines() == ["6/8 tests pass on the buggy code", "reward 0.5375, done True, tests 8/8, grade 0.96"]


def test_curl_flow_from_the_readme(live_server):
    readme = (ROOT / "README.md").read_text()
    block = readme.split("<!-- curl-example -->")[1].split("```bash")[1].split("```")[0]
    script = block.replace("http://localhost:8000", live_server.url)
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert '"grader_score":0.96' in done.stdout.replace(" ", "")
