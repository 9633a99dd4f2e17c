"""Server settings, read from environment variables once at start-up (documented in docs/deployment.md, "Configuration")."""

from __future__ import annotations

import os

from pydantic import BaseModel, Field


class Settings(BaseModel):
    max_sessions: int = Field(256, gt=0, description="ENV_MAX_SESSIONS: concurrent WebSocket sessions")
    session_timeout_s: float = Field(
        600.0, gt=0, description="ENV_SESSION_TIMEOUT_S: time without a message after which a WebSocket session or an HTTP episode is closed",
    )
    first_reset_timeout_s: float = Field(
        60.0, gt=0, description="ENV_FIRST_RESET_TIMEOUT_S: the same limit for a WebSocket connection that has not sent its first reset",
    )
    single_user: bool = Field(
        False, description="ENV_SINGLE_USER: a /step or /state naming no episode gets the latest HTTP episode (one client per server only)",
    )
    http_episodes: int = Field(1024, gt=0, description="ENV_HTTP_EPISODES: HTTP episodes kept at once")
    max_body_bytes: int = Field(1024 * 1024, gt=0, description="ENV_MAX_BODY_BYTES: largest request body or WebSocket message")
    host: str = Field("0.0.0.0", description="HOST")
    port: int = Field(8000, description="PORT")
    access_log: bool = Field(False, description="ENV_ACCESS_LOG: log every request (off: at hundreds of steps a second the log costs the event loop ~6%)")
    replica: str = Field(
        "", pattern=r"^([a-z0-9][a-z0-9-]{0,31})?$",
        description="ENV_REPLICA: this replica's name behind a balancer; HTTP episode ids start with it (`r1.<uuid>`) so the balancer routes on it",
    )
    drain_seconds: float = Field(30.0, ge=0, description="ENV_DRAIN_SECONDS: after SIGTERM, how long open sessions may go on before the replica stops")

    @classmethod
    def from_env(cls) -> Settings:
        names = {
            "max_sessions": "ENV_MAX_SESSIONS",
            "session_timeout_s": "ENV_SESSION_TIMEOUT_S",
            "first_reset_timeout_s": "ENV_FIRST_RESET_TIMEOUT_S",
            "single_user": "ENV_SINGLE_USER",
            "http_episodes": "ENV_HTTP_EPISODES",
            "max_body_bytes": "ENV_MAX_BODY_BYTES",
            "host": "HOST",
            "port": "PORT",
            "access_log": "ENV_ACCESS_LOG",
            "replica": "ENV_REPLICA",
            "drain_seconds": "ENV_DRAIN_SECONDS",
        }
        return cls(**{field: os.environ[var] for field, var in names.items() if os.environ.get(var)})
