"""The serving process's garbage collector (env/server/collector.py): what was imported is frozen, the first
generation's passes are rare, and reference cycles are still collected. Each case runs in a fresh interpreter: the
collector's settings are the process's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from env.server.collector import GEN0_THRESHOLD

ROOT = Path(__file__).resolve().parents[1]
REPORT = "import gc, json\nprint(json.dumps({'threshold': gc.get_threshold(), 'frozen': gc.get_freeze_count()}))\n"


def run(code: str) -> dict:
    environment = {k: v for k, v in os.environ.items() if k != "ENABLE_WEB_INTERFACE"}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=environment, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_python_m_env_server_settles_the_collector_before_it_serves():
    out = run(
        "import env.server.main as main\n"
        "main.DrainingServer.run = lambda self, sockets=None: None\n"  # everything main() does but serving
        "main.main()\n" + REPORT
    )
    assert out["threshold"] == [GEN0_THRESHOLD, 10, 10] and out["frozen"] > 10_000


def test_uvicorn_s_app_settles_it_too():
    out = run("from env.server.main import app\n" + REPORT)
    assert out["threshold"] == [GEN0_THRESHOLD, 10, 10] and out["frozen"] > 10_000


def test_reference_cycles_are_still_collected_by_the_collector_itself():
    out = run(
        "import gc, json\n"
        "from env.server.collector import settle_collector\n"
        "settle_collector()\n"
        "class Node:\n"
        "    pass\n"
        "before = gc.get_stats()[0]['collections']\n"
        f"for _ in range({GEN0_THRESHOLD} * 2):\n"
        "    a, b = Node(), Node()\n"
        "    a.other, b.other = b, a\n"  # garbage only a pass of the collector frees
        "alive = sum(1 for o in gc.get_objects() if type(o) is Node)\n"
        "print(json.dumps({'passes': gc.get_stats()[0]['collections'] - before, 'alive': alive}))\n"
    )
    # 800,000 objects (each Node and its __dict__) made in cycles: a pass every GEN0_THRESHOLD of them, and never more
    # than that many left waiting for the next
    assert out["passes"] >= 3 and out["alive"] <= GEN0_THRESHOLD
