"""What importing the server costs: OpenEnv's Gradio web interface loads only when a web UI is built."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from fastapi.testclient import TestClient

from env.config import Settings
from env.openenv_imports import DeferredMCPEnvironment, HoldWebInterface
from env.server.app import build_app
from env.server.main import web_ui

ROOT = Path(__file__).resolve().parents[1]


def run(code: str, **env: str) -> dict[str, object]:
    """``code`` in a fresh interpreter at the checkout's root; it prints one JSON object, returned here."""
    environment = {k: v for k, v in os.environ.items() if k != "ENABLE_WEB_INTERFACE"} | env
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=environment, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


LOADED = "sorted({m.split('.')[0] for m in sys.modules} & {'gradio', 'openai', 'env', 'fastmcp', 'mcp'})"


def test_serving_without_a_web_ui_never_imports_gradio():
    out = run(
        "import json, sys\n"
        "from env.server.main import app\n"  # builds the default app, as `uvicorn env.server.main:app` does
        "import openenv.core.env_server as server\n"
        f"print(json.dumps({{'loaded': {LOADED}, 'manager': server.WebInterfaceManager is None, 'routes': len(app.routes)}}))"
    )
    assert out["loaded"] == ["env"] and out["manager"] is True and out["routes"] > 10


def test_the_web_ui_still_loads_the_real_web_interface_when_it_is_on():
    out = run(
        "import json, sys\n"
        "from fastapi.testclient import TestClient\n"
        "from env.server.main import app\n"
        "page = TestClient(app).get('/web/')\n"
        "import openenv.core.env_server.web_interface as web\n"
        f"print(json.dumps({{'loaded': {LOADED}, 'status': page.status_code, 'manager': web.WebInterfaceManager.__name__}}))",
        ENABLE_WEB_INTERFACE="true",
    )
    assert out == {"loaded": ["env", "fastmcp", "gradio", "mcp"], "status": 200, "manager": "WebInterfaceManager"}  # its UI names MCPEnvironment


def test_an_explicit_import_of_the_web_interface_is_never_refused():
    # only the package's own eager import is held; anyone who asks for the module by name gets it
    out = run(
        "import json, sys, env\n"
        "from openenv.core.env_server.web_interface import create_web_interface_app\n"
        f"print(json.dumps({{'loaded': {LOADED}, 'callable': callable(create_web_interface_app)}}))"
    )
    assert out == {"loaded": ["env", "fastmcp", "gradio", "mcp"], "callable": True}


def test_when_openenv_was_imported_first_nothing_is_held():
    out = run(
        "import json, sys\n"
        "import openenv.core.env_server as server\n"
        "import env\n"
        "from env.openenv_imports import HoldWebInterface\n"
        "held = [f for f in sys.meta_path if isinstance(f, HoldWebInterface)]\n"
        "print(json.dumps({'held': len(held), 'manager': server.WebInterfaceManager.__name__}))"
    )
    assert out == {"held": 0, "manager": "WebInterfaceManager"}


def test_the_finder_refuses_only_during_the_package_s_own_initialisation(monkeypatch):
    finder = HoldWebInterface()
    assert finder.find_spec("openenv.core.env_server.mcp_types", None) is None
    package = type(sys)("openenv.core.env_server")
    monkeypatch.setitem(sys.modules, "openenv.core.env_server", package)
    try:
        finder.find_spec("openenv.core.env_server.web_interface", None)
        raise AssertionError("the eager import was not held")
    except ModuleNotFoundError as refused:
        assert refused.name == "openenv.core.env_server.web_interface"
        assert str(refused) == "openenv.core.env_server.web_interface loads when a web UI is built, not on import"
    package.WebInterfaceManager = None  # the package's __init__ has run past its web-interface import
    assert finder.find_spec("openenv.core.env_server.web_interface", None) is None


def test_main_s_web_ui_builds_the_demo_on_demand(runtime, monkeypatch):
    monkeypatch.setenv("ENABLE_WEB_INTERFACE", "true")
    with TestClient(build_app(runtime=runtime, settings=Settings(), web_ui=web_ui)) as client:
        config = client.get("/web/config").json()
        assert "task" in {c.get("props", {}).get("elem_id") for c in config["components"]}


def test_the_baseline_and_the_harness_import_neither_openenv_nor_openai_nor_gradio():
    # they load when used: OpenEnv's client when a WsDriver connects, the SDK when the agent first asks the model
    out = run(
        "import json, sys\n"
        "import inference, env.eval.__main__, env.agents\n"
        "print(json.dumps({'loaded': sorted({m.split('.')[0] for m in sys.modules} & {'openenv', 'openai', 'gradio'}),"
        " 'agents': sorted(env.agents.AGENTS)}))"
    )
    assert out == {"loaded": [], "agents": ["heuristic", "heuristic-trace", "llm", "oracle", "random"]}


def test_serving_defers_fastmcp_until_an_mcp_environment_is_asked_for():
    # OpenEnv's http_server needs mcp_environment only for environments with their own FastMCP server; ours has none
    out = run(
        "import json, sys\n"
        "from fastapi.testclient import TestClient\n"
        "from env.server.main import app\n"
        "import openenv.core.env_server as server\n"
        "def rpc(client, method, params):\n"
        "    return client.post('/mcp', json={'jsonrpc': '2.0', 'id': 1, 'method': method, 'params': params}).json()\n"
        "with TestClient(app) as client:\n"
        "    session = rpc(client, 'openenv/session/create', {'task_id': 'easy', 'seed': 3})['result']['session_id']\n"
        "    tools = rpc(client, 'tools/list', {'session_id': session})\n"
        f"before = {LOADED}\n"
        "stand_in = type(sys.modules['openenv.core.env_server.mcp_environment']).__name__\n"
        "from openenv.core.env_server.mcp_environment import MCPEnvironment, get_server_tools\n"
        "from fastmcp import FastMCP\n"
        "mcp = FastMCP('probe')\n"
        "mcp.tool(lambda x: x, name='echo')\n"
        "print(json.dumps({'before': before, 'stand_in': stand_in, 'package_binding': server.MCPEnvironment is None,"
        " 'real': MCPEnvironment.__module__, 'tools': sorted(server.http_server.get_server_tools(mcp)),"
        " 'listed': 'submit_fix' in {t['name'] for t in tools['result']['tools']}, 'after': " + LOADED + "}))"
    )
    assert out == {
        "before": ["env"], "stand_in": "DeferredMCPEnvironment", "package_binding": True,
        "real": "openenv.core.env_server.mcp_environment", "tools": ["echo"], "listed": True,
        "after": ["env", "fastmcp", "mcp"],
    }


def test_the_stand_in_refuses_names_only_while_the_package_initialises(monkeypatch):
    stand_in = DeferredMCPEnvironment()
    package = type(sys)("openenv.core.env_server")
    monkeypatch.setitem(sys.modules, "openenv.core.env_server", package)
    try:
        _ = stand_in.MCPEnvironment
        raise AssertionError("MCPEnvironment was loaded during the package's initialisation")
    except ModuleNotFoundError as refused:
        assert str(refused) == "openenv.core.env_server.mcp_environment.MCPEnvironment loads when it is used, not on import"
    try:
        _ = stand_in.__path__
        raise AssertionError("an import probe loaded the module")
    except AttributeError:
        pass
