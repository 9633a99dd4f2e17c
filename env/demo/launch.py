"""Build and start the demo: in-process by default, or against a server; also what the server mounts at /web.

    python app.py [--url URL] [--host H] [--port P]     # PORT / GRADIO_SERVER_PORT, ENV_URL also work
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable

import gradio as gr

from env import settings
from env.demo.ui import build_demo
from env.eval.drivers import HttpDriver
from env.eval.in_process import InProcessDriver
from env.families.catalog import TaskCatalog
from env.runtime import Runtime
from env.server.environment import DebugEnvironment
from env.server.signals import exit_cleanly_on_sigterm

DEFAULT_PORT = 7860


def local_demo(runtime: Runtime) -> gr.Blocks:
    """Episodes run in this process (each in its own environment, on the shared sandbox runtime)."""
    return build_demo(lambda: InProcessDriver(runtime), replay_env=lambda: DebugEnvironment(runtime))


def remote_demo(url: str) -> gr.Blocks:
    """Episodes run on the server at ``url`` over plain HTTP; replays run here (the tasks are the same files)."""
    runtime = functools.cache(lambda: Runtime.from_env(TaskCatalog.from_env()))  # only a replay needs a local sandbox
    return build_demo(lambda: HttpDriver(url), replay_env=lambda: DebugEnvironment(runtime()))


def server_builder(runtime: Runtime) -> Callable[..., gr.Blocks]:
    """The ``gradio_builder`` that OpenEnv's ``create_app`` mounts at /web when ENABLE_WEB_INTERFACE=true."""

    def build(*_library_args: object) -> gr.Blocks:
        return local_demo(runtime)

    return build


def port_from_env() -> int:
    for name in ("PORT", "GRADIO_SERVER_PORT"):
        value = settings.raw(name)
        if value:
            return int(value)
    return DEFAULT_PORT


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="The AgentDebuggerEnv demo (Gradio)")
    parser.add_argument("--url", default=settings.raw("ENV_URL"), help="a running server (default: the environment runs in this process)")
    parser.add_argument("--host", default=settings.text("GRADIO_SERVER_NAME"))
    parser.add_argument("--port", type=int, default=None, help=f"default: $PORT, $GRADIO_SERVER_PORT or {DEFAULT_PORT}")
    args = parser.parse_args(argv)
    exit_cleanly_on_sigterm()
    demo = remote_demo(args.url) if args.url else local_demo(Runtime.from_env(TaskCatalog.from_env()))
    demo.launch(server_name=args.host, server_port=args.port or port_from_env(), show_error=False, footer_links=["api"], max_file_size="5mb")
