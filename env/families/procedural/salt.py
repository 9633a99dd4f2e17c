"""The procedural family's salt: which task an id names, for everyone (public) or only for the salt's holders.

    salt = ProceduralSalt.from_env()          # ENV_PROCEDURAL_SALT, or public when it is unset
    random.Random(salt.seed_text(key))        # every random choice of a task is drawn from this text
    salt.record                               # "public", or "fingerprint:<16 hex>": what a run records, never the salt

Public (the default): ``seed_text(key)`` is ``key``, so an id is the same task on every machine and anyone can
rebuild it, gold and held-out tests included, with the public generator: results on it are comparable and so is
the contamination (a published task is solvable offline). Salted: the text is the key and an HMAC of it under the
salt, so the world, the bug type, the defect's site and the held-out inputs all derive from the salt and the id;
without the salt, the public code yields another task. The salt is kept as the server secret is
(``env.secret``): read from the environment by the server's own process, never written into a task's files or
an observation, never in the environment a sandboxed run gets (runs start with an environment the server builds),
and only its fingerprint leaves the process. A salt shorter than ``MIN_SALT_CHARS`` is refused: anyone can
generate candidates offline and compare them with the service code an episode shows, so a short one could be
found by search.
"""

from __future__ import annotations

import hashlib
import hmac

from env import settings

VARIABLE = "ENV_PROCEDURAL_SALT"
MIN_SALT_CHARS = 16
PUBLIC = "public"


class SaltError(ValueError):
    pass


class ProceduralSalt:
    """A salt (or none): how a task's key becomes the text its random choices are drawn from."""

    __slots__ = ("_key", "record")

    def __init__(self, value: str | None) -> None:
        if value is not None and len(value) < MIN_SALT_CHARS:
            raise SaltError(f"{VARIABLE} is {len(value)} characters long; it needs at least {MIN_SALT_CHARS}")
        self._key = value.encode("utf-8") if value is not None else None
        if self._key is None:
            self.record = PUBLIC
        else:
            self.record = "fingerprint:" + hashlib.sha256(b"agentdebugger-procedural-salt\0" + self._key).hexdigest()[:16]

    @classmethod
    def from_env(cls) -> ProceduralSalt:
        """The setting's salt (an unset or empty variable: public ids)."""
        return cls(settings.raw(VARIABLE))

    @classmethod
    def public(cls) -> ProceduralSalt:
        return cls(None)

    @property
    def salted(self) -> bool:
        return self._key is not None

    def seed_text(self, key: str) -> str:
        """``key`` itself when public; else ``key`` with its HMAC under the salt (which the text never holds)."""
        if self._key is None:
            return key
        return f"{key}|salted={hmac.new(self._key, key.encode('utf-8'), hashlib.sha256).hexdigest()}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ProceduralSalt) and other.record == self.record

    def __hash__(self) -> int:
        return hash(self.record)

    def __repr__(self) -> str:  # never the salt itself, in a log or a traceback
        return f"ProceduralSalt({self.record!r})"
