"""Server settings, read from environment variables once at start-up (documented in docs/deployment.md, "Configuration")."""

from __future__ import annotations

from pydantic import BaseModel, Field

from env import settings
from env.settings import default


class Settings(BaseModel):
    max_sessions: int = Field(default("ENV_MAX_SESSIONS"), gt=0, description="ENV_MAX_SESSIONS: concurrent WebSocket sessions")
    session_timeout_s: float = Field(
        default("ENV_SESSION_TIMEOUT_S"), gt=0, description="ENV_SESSION_TIMEOUT_S: time without a message after which a WebSocket session or an HTTP episode is closed",
    )
    first_reset_timeout_s: float = Field(
        default("ENV_FIRST_RESET_TIMEOUT_S"), gt=0, description="ENV_FIRST_RESET_TIMEOUT_S: the same limit for a WebSocket connection that has not sent its first reset",
    )
    single_user: bool = Field(
        default("ENV_SINGLE_USER"), description="ENV_SINGLE_USER: a /step or /state naming no episode gets the latest HTTP episode (one client per server only)",
    )
    http_episodes: int = Field(default("ENV_HTTP_EPISODES"), gt=0, description="ENV_HTTP_EPISODES: HTTP episodes kept at once")
    max_body_bytes: int = Field(default("ENV_MAX_BODY_BYTES"), gt=0, description="ENV_MAX_BODY_BYTES: largest request body or WebSocket message")
    host: str = Field(default("HOST"), description="HOST")
    port: int = Field(default("PORT"), description="PORT")
    access_log: bool = Field(default("ENV_ACCESS_LOG"), description="ENV_ACCESS_LOG: log every request (off: at hundreds of steps a second the log costs the event loop ~6%)")
    replica: str = Field(
        default("ENV_REPLICA"), pattern=r"^([a-z0-9][a-z0-9-]{0,31})?$",
        description="ENV_REPLICA: this replica's name behind a balancer; HTTP episode ids start with it (`r1.<uuid>`) so the balancer routes on it",
    )
    drain_seconds: float = Field(default("ENV_DRAIN_SECONDS"), ge=0, description="ENV_DRAIN_SECONDS: after SIGTERM, how long open sessions may go on before the replica stops")

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
        return cls(**settings.raws(names))
