"""User records and the in-memory user store."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from acl.errors import DuplicateUser, UserNotFound


@dataclass(frozen=True)
class User:
    username: str
    display_name: str = ""
    roles: frozenset[str] = field(default_factory=frozenset)
    active: bool = True


def _key(username: str) -> str:
    key = username.strip().lower()
    if not key:
        raise ValueError("username must not be empty")
    return key


class UserStore:
    """Users indexed by case-insensitive username.

    Lookups of a username that is not in the store raise ``UserNotFound``.
    """

    def __init__(self) -> None:
        self._users: dict[str, User] = {}

    def add(self, username: str, display_name: str = "", roles: tuple[str, ...] = ()) -> User:
        key = _key(username)
        if key in self._users:
            raise DuplicateUser(username)
        user = User(key, display_name or key, frozenset(r.lower() for r in roles))
        self._users[key] = user
        return user

    def get(self, username: str) -> User:
        return self._users[_key(username)]

    def exists(self, username: str) -> bool:
        return _key(username) in self._users

    def remove(self, username: str) -> User:
        user = self._users.pop(_key(username), None)
        if user is None:
            raise UserNotFound(username)
        return user

    def update(self, username: str, **changes: object) -> User:
        """Replace fields of a user (``display_name``, ``roles``, ``active``)."""
        unknown = set(changes) - {"display_name", "roles", "active"}
        if unknown:
            raise TypeError(f"cannot update {sorted(unknown)}")
        user = replace(self.get(username), **changes)
        self._users[user.username] = user
        return user

    def deactivate(self, username: str) -> User:
        return self.update(username, active=False)

    def all(self, include_inactive: bool = False) -> list[User]:
        users = (u for u in self._users.values() if include_inactive or u.active)
        return sorted(users, key=lambda u: u.username)

    def __len__(self) -> int:
        return len(self._users)
