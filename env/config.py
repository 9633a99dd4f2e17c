"""Server settings, read from environment variables once at start-up (documented in docs/deployment.md, "Configuration")."""

from __future__ import annotations

import ipaddress

from pydantic import BaseModel, Field, field_validator

from env import settings
from env.settings import default


class Settings(BaseModel):
    max_sessions: int = Field(default("ENV_MAX_SESSIONS"), gt=0, description="ENV_MAX_SESSIONS: concurrent sessions (/ws and /mcp connections, MCP sessions over POST /mcp)")
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
    sessions_per_client: int = Field(
        default("ENV_SESSIONS_PER_CLIENT"), gt=0,
        description="ENV_SESSIONS_PER_CLIENT: session slots one client holds at once (/ws, /mcp sockets, MCP sessions over POST /mcp); "
        "the same number bounds its unfinished HTTP episodes",
    )
    trusted_proxies: str = Field(
        default("ENV_TRUSTED_PROXIES"),
        description="ENV_TRUSTED_PROXIES: IP addresses or networks of the balancers whose X-Forwarded-For names the client (python -m env.server)",
    )
    max_body_bytes: int = Field(default("ENV_MAX_BODY_BYTES"), gt=0, description="ENV_MAX_BODY_BYTES: largest request body or WebSocket message")
    host: str = Field(default("HOST"), description="HOST")
    port: int = Field(default("PORT"), description="PORT")
    access_log: bool = Field(default("ENV_ACCESS_LOG"), description="ENV_ACCESS_LOG: log every request (off: at hundreds of steps a second the log costs the event loop ~6%)")
    server_timing: bool = Field(
        default("ENV_SERVER_TIMING"), description="ENV_SERVER_TIMING: a Server-Timing header of each HTTP answer's phases (the bench's view; off: nobody else's business)",
    )
    replica: str = Field(
        default("ENV_REPLICA"), pattern=r"^([a-z0-9][a-z0-9-]{0,31})?$",
        description="ENV_REPLICA: this replica's name behind a balancer; HTTP episode ids start with it (`r1.<uuid>`) so the balancer routes on it",
    )
    drain_seconds: float = Field(default("ENV_DRAIN_SECONDS"), ge=0, description="ENV_DRAIN_SECONDS: after SIGTERM, how long open sessions may go on before the replica stops")
    store: str = Field(
        default("ENV_STORE"), description="ENV_STORE: redis://host:port/db records every episode, so that a replica can rebuild one whose replica is gone",
    )

    @field_validator("trusted_proxies")
    @classmethod
    def _addresses_only(cls, value: str) -> str:
        """Each entry an IP address or network: a name would be taken as a literal nobody's address matches, and '*'
        makes uvicorn take X-Forwarded-For's leftmost entry, which the client writes (a new identity per request)."""
        for entry in (e.strip() for e in value.split(",")):
            if not entry:
                continue
            try:
                ipaddress.ip_network(entry, strict=False)
            except ValueError:
                raise ValueError(f"ENV_TRUSTED_PROXIES: {entry!r} is not an IP address or network (such as 10.0.0.0/8); name each balancer's address, never '*'") from None
        return ",".join(e.strip() for e in value.split(",") if e.strip())

    @classmethod
    def from_env(cls) -> Settings:
        names = {
            "max_sessions": "ENV_MAX_SESSIONS",
            "session_timeout_s": "ENV_SESSION_TIMEOUT_S",
            "first_reset_timeout_s": "ENV_FIRST_RESET_TIMEOUT_S",
            "single_user": "ENV_SINGLE_USER",
            "http_episodes": "ENV_HTTP_EPISODES",
            "sessions_per_client": "ENV_SESSIONS_PER_CLIENT",
            "trusted_proxies": "ENV_TRUSTED_PROXIES",
            "max_body_bytes": "ENV_MAX_BODY_BYTES",
            "host": "HOST",
            "port": "PORT",
            "access_log": "ENV_ACCESS_LOG",
            "server_timing": "ENV_SERVER_TIMING",
            "replica": "ENV_REPLICA",
            "drain_seconds": "ENV_DRAIN_SECONDS",
            "store": "ENV_STORE",
        }
        return cls(**settings.raws(names))
