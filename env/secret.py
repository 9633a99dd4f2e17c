"""The server's secret: whatever decides a verdict is derived from it and the episode's seed.

    secret = ServerSecret.from_env()           # ENV_SECRET, or a fresh one for this process
    rng = secret.rng("classic", "hard", 7, "verdict")  # the same secret and seed give the same scenarios
    secret.fingerprint                          # recorded in runs and trajectories; reveals nothing

The seed is the caller's and is shown in ``/state``; a verdict that depended on it alone could be
replayed by the submission (the first build's forged race verdict). Mixing in a secret the agent
never sees keeps episodes reproducible for whoever holds the secret and opaque to everyone else.
Several replicas, a resumed evaluation and a replayed trajectory agree only when they share
``ENV_SECRET``: the fingerprint is how they find out.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import random
import secrets as _secrets
from pathlib import Path

from env import settings

log = logging.getLogger("agentdebugger")

SECRET_FILE = "secret"
MIN_SECRET_CHARS = 16  # a short secret could be guessed from a handful of observed verdicts


class SecretError(ValueError):
    pass


class ServerSecret:
    def __init__(self, value: str, generated: bool = False):
        if len(value) < MIN_SECRET_CHARS:
            raise SecretError(f"ENV_SECRET is {len(value)} characters long; it needs at least {MIN_SECRET_CHARS}")
        self._key = value.encode("utf-8")
        self.generated = generated
        self.fingerprint = hashlib.sha256(b"agentdebugger-fingerprint\0" + self._key).hexdigest()[:16]

    @classmethod
    def configured(cls) -> ServerSecret | None:
        """ENV_SECRET's secret, or None when it is unset."""
        value = settings.raw("ENV_SECRET")
        return cls(value) if value else None

    @classmethod
    def from_env(cls) -> ServerSecret:
        configured = cls.configured()
        if configured is not None:
            return configured
        log.info("ENV_SECRET is not set: this process uses a secret of its own (replicas and resumed runs will not agree)")
        return cls(_secrets.token_hex(32), generated=True)

    @classmethod
    def for_directory(cls, folder: Path) -> ServerSecret:
        """ENV_SECRET, or the secret kept in ``folder/secret`` (made on first use, readable by its owner only):
        an in-process evaluation resumed later, or another agent's run into the same folder, then plays the same
        episodes without anyone having to set ENV_SECRET."""
        configured = cls.configured()
        if configured is not None:
            return configured
        path = folder / SECRET_FILE
        folder.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return cls(path.read_text(encoding="utf-8").strip())
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(_secrets.token_hex(32))
        return cls(path.read_text(encoding="utf-8").strip())

    def shared_value(self) -> str:
        """The secret itself, for the processes that must derive the same verdicts (an evaluation's Ray workers)."""
        return self._key.decode("utf-8")

    def derive(self, *parts: object) -> bytes:
        message = "\0".join(str(p) for p in parts).encode("utf-8")
        return hmac.new(self._key, message, hashlib.sha256).digest()

    def rng(self, *parts: object) -> random.Random:
        """A random stream only the secret's holder can predict, fixed by ``parts`` (task, seed, purpose)."""
        return random.Random(int.from_bytes(self.derive(*parts), "big"))

    def __repr__(self) -> str:  # never the secret itself, in a log or a traceback
        return f"ServerSecret(fingerprint={self.fingerprint!r}, generated={self.generated})"
