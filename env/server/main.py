"""The server as it is started: the app with the demo mounted at /web, and its entry point.

    uvicorn env.server.main:app --port 8000     # as openenv.yaml says
    python -m env.server                         # the same, with the settings' host and port, and draining on SIGTERM

This module wires the pieces (``build_app`` takes its web UI as an argument); nothing imports it.

SIGTERM (what Kubernetes, Compose and a balancer's orchestration send) drains: /health answers 503 so the balancer
sends new sessions elsewhere, resets are refused with a message, open episodes go on with a notice of the deadline
(ENV_DRAIN_SECONDS), and the server stops when none is left unfinished or at the deadline. A second SIGTERM, or
SIGINT, stops it at once.
"""

from __future__ import annotations

import functools
import logging
import signal
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING

import uvicorn
from fastapi import FastAPI

from env.config import Settings
from env.runtime import Runtime
from env.server.app import build_app, unfinished
from env.server.collector import settle_collector
from env.server.signals import exit_cleanly_on_sigterm

if TYPE_CHECKING:
    import gradio as gr

log = logging.getLogger("env.server")


def web_ui(runtime: Runtime) -> Callable[..., gr.Blocks]:
    """The demo OpenEnv mounts at /web (its ``gradio_builder``, when ENABLE_WEB_INTERFACE=true): episodes in this
    process on the server's runtime. Gradio and the demo are imported only when it builds the web UI."""

    def build(*_library_args: object) -> gr.Blocks:
        from env.demo.ui import build_demo
        from env.server.environment import DebugEnvironment
        from env.server.in_process import InProcessDriver

        return build_demo(lambda: InProcessDriver(runtime), replay_env=lambda: DebugEnvironment(runtime))

    return build


@functools.cache
def _default_app() -> FastAPI:
    # `uvicorn env.server.main:app` must clean up on SIGTERM as `python -m env.server` does.
    exit_cleanly_on_sigterm()
    app = build_app(web_ui=web_ui)
    settle_collector()
    return app


def __getattr__(name: str) -> FastAPI:
    # `uvicorn env.server.main:app` builds the app on first access, not on import.
    if name == "app":
        return _default_app()
    raise AttributeError(name)


class DrainingServer(uvicorn.Server):
    """Uvicorn's server, whose first SIGTERM drains the app's replica before shutting down."""

    def __init__(self, config: uvicorn.Config, app: FastAPI):
        super().__init__(config)
        self.replica, self.store = app.state.replica, app.state.store

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if sig == signal.SIGTERM and not self.replica.draining and self.replica.drain_seconds > 0:
            self.replica.drain()
            log.info("SIGTERM: draining for up to %.0f s (%d unfinished episodes)", self.replica.drain_seconds, unfinished(self.replica, self.store))
            threading.Thread(target=self._stop_when_drained, name="adbg-drain", daemon=True).start()
            return
        super().handle_exit(sig, frame)

    def _stop_when_drained(self) -> None:
        while self.replica.seconds_left() > 0 and unfinished(self.replica, self.store) > 0:
            time.sleep(0.2)
        log.info("drained (%d unfinished episodes left): stopping", unfinished(self.replica, self.store))
        self.should_exit = True


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = Settings.from_env()
    app = build_app(settings=settings, web_ui=web_ui)
    settle_collector()  # what is imported stays out of the collector's passes, which stall every step while they run
    exit_cleanly_on_sigterm()
    DrainingServer(server_config(app, settings), app).run()


def server_config(app: FastAPI, settings: Settings) -> uvicorn.Config:
    """Uvicorn's configuration of the server. X-Forwarded-For names the client (whose share of the sessions a request
    takes: env.server.clients) only on connections from ENV_TRUSTED_PROXIES; uvicorn's own default would trust it
    from any local process."""
    trusted = settings.trusted_proxies
    return uvicorn.Config(
        app, host=settings.host, port=settings.port, ws_max_size=settings.max_body_bytes, access_log=settings.access_log,
        proxy_headers=bool(trusted), forwarded_allow_ips=trusted or None,
    )
