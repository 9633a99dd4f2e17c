"""The examples of README.md and docs/ run as written against a live server."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from env.config import Settings
from env.runtime import Runtime
from env.secret import ServerSecret
from env.server.app import build_app
from tests.conftest import LiveServer

ROOT = Path(__file__).resolve().parents[1]


def run_example(name: str, url: str) -> str:
    done = subprocess.run([sys.executable, str(ROOT / "examples" / name), url], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_http_example(live_server):
    out = run_example("http_episode.py", live_server.url)
    assert "6/8 tests pass on the buggy code" in out
    assert out.rstrip().endswith("reward 0.564286, done True, tests 8/8, grade 0.96")


def test_websocket_example(live_server):
    out = run_example("ws_episode.py", live_server.url)
    assert out.splitlines() == ["6/8 tests pass on the buggy code", "reward 0.564286, done True, tests 8/8, grade 0.96"]


def test_curl_flow_from_the_readme(live_server):
    readme = (ROOT / "README.md").read_text()
    block = readme.split("<!-- curl-example -->")[1].split("```bash")[1].split("```")[0]
    script = block.replace("http://localhost:8000", live_server.url)
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    shown = readme.split("It prints (the `episode_id` differs):")[1].split("```")[1].strip().splitlines()
    lines = done.stdout.splitlines()
    episode = json.loads(lines[0])["episode_id"]
    assert [line.replace(episode, "6f1c…") for line in lines] == shown  # what the README says it prints


def test_the_readme_names_the_secret_its_numbers_come_out_under_and_they_do(runtime):
    """A fresh server draws its own secret, and an episode's held-out cases (so its reward) follow it: the README says
    which ENV_SECRET prints exactly its numbers, and a server started with it prints them."""
    readme = (ROOT / "README.md").read_text()
    [secret] = re.findall(r"`ENV_SECRET=(\S+) make serve` prints exactly this", readme)
    assert f"`ENV_SECRET={secret}`" in (ROOT / "docs" / "api.md").read_text()
    served = Runtime(runtime.catalog, runtime.sandbox, workers=4, secret=ServerSecret(secret))
    block = readme.split("<!-- curl-example -->")[1].split("```bash")[1].split("```")[0]
    with LiveServer(build_app(runtime=served, settings=Settings())) as server:
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", block.replace("http://localhost:8000", server.url)],
                              capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    shown = readme.split("It prints (the `episode_id` differs):")[1].split("```")[1].strip().splitlines()
    lines = done.stdout.splitlines()
    assert [line.replace(json.loads(lines[0])["episode_id"], "6f1c…") for line in lines] == shown


def test_the_docker_healthcheck_follows_port(live_server):
    """The image's HEALTHCHECK, run as Docker runs it (sh -c), asks the port the server listens on (PORT)."""
    line = (ROOT / "Dockerfile").read_text().split("HEALTHCHECK", 1)[1].split("CMD ", 1)[1].split("\nCMD", 1)[0].strip()
    command = line.replace("python -c", f"{sys.executable} -c", 1)
    port = live_server.url.rsplit(":", 1)[1]
    ok = subprocess.run(["sh", "-c", command], env={"PORT": port}, capture_output=True, timeout=30, check=False)
    assert ok.returncode == 0, ok.stderr
    closed = subprocess.run(["sh", "-c", command], env={"PORT": "1"}, capture_output=True, timeout=30, check=False)
    assert closed.returncode != 0 and b"Connection refused" in closed.stderr


def test_curl_without_a_cookie_jar_from_the_docs(live_server):
    """docs/api.md's curl block sends the episode_id itself (no jar: a request naming no episode reaches none), with
    the `show` of the README's curl episode."""
    readme = (ROOT / "README.md").read_text()
    first = readme.split("<!-- curl-example -->")[1].split("```bash")[1].split("```")[0]
    show = first.split("jar=$(mktemp)")[0]  # the `show` function
    api = (ROOT / "docs" / "api.md").read_text()
    block = api.split("Without the jar, the same steps read")[1].split("```bash")[1].split("```")[0]
    script = (show + block).replace("http://localhost:8000", live_server.url)
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    stepped, state = done.stdout.splitlines()
    episode = json.loads(stepped)["episode_id"]
    assert json.loads(stepped) == {"reward": 0.0, "done": True, "episode_id": episode, "tests_passed": 6, "tests_total": 8, "grader_score": 0.0}
    assert (json.loads(state)["episode_id"], json.loads(state)["step_count"]) == (episode, 1)


def test_mcp_example(live_server):
    out = run_example("mcp_episode.py", live_server.url)
    assert out.splitlines() == ["tools: submit_fix, query_context, give_up", "reward 0.564286, done True, tests 8/8, grade 0.96"]


def test_json_rpc_curl_flow_from_the_docs(live_server):
    readme = (ROOT / "docs" / "api.md").read_text()
    block = readme.split("<!-- mcp-curl-example -->")[1].split("```bash")[1].split("```")[0]
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", block.replace("http://localhost:8000", live_server.url)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    shown = readme.split("<!-- mcp-curl-example -->")[1].split("It prints (the `session_id` differs):")[1].split("```")[1].strip().splitlines()
    lines = done.stdout.splitlines()
    session = json.loads(lines[0])["session_id"]
    assert [line.replace(session, "0b7e…") for line in lines] == shown  # what docs/api.md says it prints


def python_blocks(text: str) -> list[str]:
    return [block.split("```", 1)[0] for block in text.split("```python\n")[1:]]


RUNNER = (
    # top-level `await` runs as it does in `python -m asyncio` (the async examples in docs/ say so)
    "import ast, asyncio, sys, types\n"
    "code = compile(sys.stdin.read(), '<readme>', 'exec', flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)\n"
    "result = types.FunctionType(code, {'__name__': '__main__'})()\n"
    "if asyncio.iscoroutine(result):\n"
    "    asyncio.run(result)\n"
)


def test_every_python_block_of_the_readme_and_docs_runs_as_pasted_from_any_folder(live_server, tmp_path):
    """Each ```python block of README.md and docs/*.md runs unchanged but for the server's URL, from a folder outside the checkout, and prints
    what the comments of its print lines say it prints. (This checkout's code: the venv's install may be another's.)"""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    blocks = [block for page in pages for block in python_blocks(page.read_text())]
    assert len(blocks) >= 2
    for block in blocks:
        script = block.replace("http://localhost:8000", live_server.url)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(ROOT)}
        done = subprocess.run([sys.executable, "-c", RUNNER], input=script, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, f"{block}\n{done.stderr}"
        expected = [line.split("#")[-1].strip() for line in block.splitlines() if line.strip().startswith("print(") and "#" in line]
        assert done.stdout.split("\n")[-1 - len(expected):-1] == expected, block


def test_the_project_is_installed_into_the_venv_so_env_imports_from_any_folder(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    code = "import env.client, pathlib; print(sorted(p.name for p in pathlib.Path(env.client.__file__).parent.glob('*.py'))[:3])"
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, f"{done.stderr} (make serve and make test install the project: pip install --no-deps -e .)"
    assert done.stdout.strip() == "['__init__.py', 'client.py', 'config.py']"


def test_the_image_holds_what_the_validator_and_the_baseline_need(tmp_path):
    """The files the Dockerfile copies, laid out as in its WORKDIR, run the validator and import inference.py on
    their own (no Docker engine here: the image's Python packages are requirements.txt, which .venv holds)."""
    copies = [line.split()[1:] for line in (ROOT / "Dockerfile").read_text().splitlines() if line.startswith("COPY ")]
    for *sources, target in copies:
        for source in sources:
            destination = tmp_path / target / (source if target == "./" else "")
            if (ROOT / source).is_dir():
                shutil.copytree(ROOT / source, destination, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy(ROOT / source, destination)
    assert {"validator.py", "inference.py", "env", "tasks", "openenv.yaml"} <= {p.name for p in tmp_path.iterdir()}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    for argv in (["validator.py", "--help"], ["-c", "import inference, env; print(env.__file__)"]):
        done = subprocess.run([sys.executable, *argv], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tmp_path / "env" / "__init__.py")  # the image's code, not the checkout's
