"""What the environment needs to know about the plain-HTTP request it serves (unset over WebSocket).

The ASGI guard sets :data:`HTTP_REQUEST` for every HTTP request: its query parameters, the episode
its ``adbg_episode`` cookie names, and its client. ``/reset`` records the episode it started in ``started``, and the
guard answers with a cookie naming it, so a client that keeps cookies (``requests.Session``,
``httpx.Client``) finds its own episode without sending ``episode_id``. The environment's async
methods run in the request's own task (and the sync ``/state`` handler in a copy of its context),
so they see the value.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field

EPISODE_COOKIE = "adbg_episode"


@dataclass
class HttpRequest:
    query: dict[str, str] = field(default_factory=dict)
    cookie_episode: str | None = None
    client: str = "unknown"  # who sent it (env.server.clients): whose share of HTTP episodes a /reset takes
    started: str | None = None  # set by /reset: the response carries a cookie naming it


HTTP_REQUEST: ContextVar[HttpRequest | None] = ContextVar("adbg_http_request", default=None)
