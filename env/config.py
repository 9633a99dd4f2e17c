"""Server settings, read from environment variables once at start-up (documented in docs/deployment.md, "Configuration")."""

from __future__ import annotations

import ipaddress

from pydantic import BaseModel, field_validator

from env import settings
from env.settings import setting


class Settings(BaseModel):
    max_sessions: int = setting("ENV_MAX_SESSIONS", "concurrent sessions (/ws and /mcp connections, MCP sessions over POST /mcp)", gt=0)
    session_timeout_s: float = setting("ENV_SESSION_TIMEOUT_S", gt=0)
    first_reset_timeout_s: float = setting("ENV_FIRST_RESET_TIMEOUT_S", gt=0)
    single_user: bool = setting("ENV_SINGLE_USER")
    http_episodes: int = setting("ENV_HTTP_EPISODES", gt=0)
    sessions_per_client: int = setting(
        "ENV_SESSIONS_PER_CLIENT", "session slots one client holds at once (/ws, /mcp sockets, MCP sessions over POST /mcp); "
        "the same number bounds its unfinished HTTP episodes", gt=0,
    )
    trusted_proxies: str = setting(
        "ENV_TRUSTED_PROXIES", "IP addresses or networks of the balancers whose X-Forwarded-For names the client (python -m env.server)",
    )
    max_body_bytes: int = setting("ENV_MAX_BODY_BYTES", gt=0)
    host: str = setting("HOST")
    port: int = setting("PORT")
    access_log: bool = setting("ENV_ACCESS_LOG", "log every request (off: at hundreds of steps a second the log costs the event loop ~6%)")
    server_timing: bool = setting(
        "ENV_SERVER_TIMING", "a Server-Timing header of each HTTP answer's phases (the bench's view; off: nobody else's business)",
    )
    replica: str = setting(
        "ENV_REPLICA", "this replica's name behind a balancer; HTTP episode ids start with it (`r1.<uuid>`) so the balancer routes on it",
        pattern=r"^([a-z0-9][a-z0-9-]{0,31})?$",
    )
    drain_seconds: float = setting("ENV_DRAIN_SECONDS", "after SIGTERM, how long open sessions may go on before the replica stops", ge=0)
    store: str = setting("ENV_STORE", "redis://host:port/db records every episode, so that a replica can rebuild one whose replica is gone")

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
        return settings.load(cls)
