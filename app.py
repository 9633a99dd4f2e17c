"""The Gradio demo of AgentDebuggerEnv (the Hugging Face Space's ``app_file``), composed here: the demo
(``env.demo``) on the environment in this process, or on a server over HTTP.

    python app.py                               # http://localhost:7860, the environment in this process
    python app.py --url http://localhost:8000   # against a running server
"""

from __future__ import annotations

import functools
import sys

import gradio as gr

from env.demo.launch import main
from env.demo.ui import build_demo
from env.eval.drivers import HttpDriver
from env.families.catalog import TaskCatalog
from env.runtime import Runtime
from env.server.environment import DebugEnvironment
from env.server.in_process import InProcessDriver
from env.server.signals import exit_cleanly_on_sigterm


def local_demo(runtime: Runtime) -> gr.Blocks:
    """Episodes run in this process (each in its own environment, on the shared sandbox runtime)."""
    return build_demo(lambda: InProcessDriver(runtime), replay_env=lambda: DebugEnvironment(runtime))


def remote_demo(url: str) -> gr.Blocks:
    """Episodes run on the server at ``url`` over plain HTTP; replays run here (the tasks are the same files)."""
    runtime = functools.cache(lambda: Runtime.from_env(TaskCatalog.from_env()))  # only a replay needs a local sandbox
    return build_demo(lambda: HttpDriver(url), replay_env=lambda: DebugEnvironment(runtime()))


if __name__ == "__main__":
    exit_cleanly_on_sigterm()
    main(sys.argv[1:], lambda: local_demo(Runtime.from_env(TaskCatalog.from_env())), remote_demo)
