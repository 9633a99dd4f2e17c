"""The ``Server-Timing`` response header (W3C): each HTTP answer's phases, for ``bench/bench_server.py --phases``.

Only with ENV_SERVER_TIMING on (off by default): how long a submission's runs took is the bench's to read, not an
agent's. Each phase counts its own time (``env.timing``), so they add up to ``total``: ``step`` is the step's work in
no named phase (the hypothesis judged, rewards), ``http`` what no phase took (parsing, routing, the guard, the answer
serialised).
"""

from __future__ import annotations

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from env.timing import recording


class ServerTiming:
    """ASGI middleware: records the phases of each HTTP request and sends them in its response's headers."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        with recording() as phases:

            async def timed(message: Message) -> None:
                if message["type"] == "http.response.start":
                    total = time.perf_counter() - started
                    with phases.lock:
                        phases.seconds["http"] = total - sum(phases.seconds.values())  # every phase counts its own time
                        phases.seconds["total"] = total
                    message = {**message, "headers": [*message.get("headers", []), (b"server-timing", phases.header().encode())]}
                await send(message)

            await self.app(scope, receive, timed)
