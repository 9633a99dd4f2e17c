"""Start the demo: its command line and its port. What it plays on is given (``app.py`` composes it: in this process,
or against a server; ``env.server.main`` mounts it at /web), so the demo imports neither the server nor the harness.

    python app.py [--url URL] [--host H] [--port P]     # PORT / GRADIO_SERVER_PORT, ENV_URL also work
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import gradio as gr

from env import settings

DEFAULT_PORT = 7860


def port_from_env() -> int:
    for name in ("PORT", "GRADIO_SERVER_PORT"):
        value = settings.raw(name)
        if value:
            return int(value)
    return DEFAULT_PORT


def main(argv: list[str] | None, local: Callable[[], gr.Blocks], remote: Callable[[str], gr.Blocks]) -> None:
    """Parse the demo's command line and launch ``remote(url)`` for a server's URL, else ``local()``."""
    parser = argparse.ArgumentParser(description="The AgentDebuggerEnv demo (Gradio)")
    parser.add_argument("--url", default=settings.raw("ENV_URL"), help="a running server (default: the environment runs in this process)")
    parser.add_argument("--host", default=settings.text("GRADIO_SERVER_NAME"))
    parser.add_argument("--port", type=int, default=None, help=f"default: $PORT, $GRADIO_SERVER_PORT or {DEFAULT_PORT}")
    args = parser.parse_args(argv)
    demo = remote(args.url) if args.url else local()
    demo.launch(server_name=args.host, server_port=args.port or port_from_env(), show_error=False, footer_links=["api"], max_file_size="5mb")
