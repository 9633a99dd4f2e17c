"""The server as it is started: the app with the demo mounted at /web, and its entry point.

    uvicorn env.server.main:app --port 8000     # as openenv.yaml says
    python -m env.server                         # the same, with the settings' host and port

This module wires the pieces (``build_app`` takes its web UI as an argument); nothing imports it.
"""

from __future__ import annotations

import functools
import gc
import logging

from fastapi import FastAPI

from env.config import Settings
from env.demo.launch import server_builder
from env.server.app import build_app
from env.server.signals import exit_cleanly_on_sigterm


@functools.cache
def _default_app() -> FastAPI:
    # `uvicorn env.server.main:app` must clean up on SIGTERM as `python -m env.server` does.
    exit_cleanly_on_sigterm()
    return build_app(web_ui=server_builder)


def __getattr__(name: str) -> FastAPI:
    # `uvicorn env.server.main:app` builds the app on first access, not on import.
    if name == "app":
        return _default_app()
    raise AttributeError(name)


def main() -> None:
    import uvicorn

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = Settings.from_env()
    app = build_app(settings=settings, web_ui=server_builder)
    # Everything imported so far (FastAPI, OpenEnv, Gradio...) lives as long as the server: keep it
    # out of the collector's full passes, which otherwise stall the event loop under load.
    gc.collect()
    gc.freeze()
    exit_cleanly_on_sigterm()
    uvicorn.run(app, host=settings.host, port=settings.port, ws_max_size=settings.max_body_bytes, access_log=settings.access_log)
