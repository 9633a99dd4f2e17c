"""Marks the requests that arrive over plain HTTP, so the environment knows to use the store.

The ASGI guard sets :data:`HTTP_QUERY` for every HTTP request (to its query parameters); it is
unset on WebSocket connections. The environment's async methods run in the request's own task,
so they see the value.
"""

from __future__ import annotations

from contextvars import ContextVar

HTTP_QUERY: ContextVar[dict[str, str] | None] = ContextVar("adbg_http_query", default=None)
