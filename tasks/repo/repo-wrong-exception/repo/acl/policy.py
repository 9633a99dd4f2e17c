"""Answering permission questions about users."""

from __future__ import annotations

from acl.errors import PermissionDenied, UserNotFound
from acl.perms import any_grants, normalise
from acl.roles import RoleRegistry
from acl.users import User, UserStore


class Policy:
    def __init__(self, users: UserStore, roles: RoleRegistry) -> None:
        self.users = users
        self.roles = roles

    def grant(self, username: str, role: str) -> User:
        """Give ``role`` to a user (the role must exist)."""
        name = self.roles.get(role).name
        user = self.users.get(username)
        return self.users.update(username, roles=user.roles | {name})

    def revoke(self, username: str, role: str) -> User:
        user = self.users.get(username)
        return self.users.update(username, roles=user.roles - {role.strip().lower()})

    def permissions_for(self, username: str) -> list[str]:
        """Every permission the user holds through its roles, sorted."""
        user = self.users.get(username)
        if not user.active:
            return []
        held: set[str] = set()
        for role in user.roles:
            held |= self.roles.effective_permissions(role)
        return sorted(held)

    def is_allowed(self, username: str, permission: str) -> bool:
        """True if the user exists, is active and holds ``permission``.

        Unknown users are simply not allowed anything.
        """
        permission = normalise(permission)
        try:
            held = self.permissions_for(username)
        except UserNotFound:
            return False
        return any_grants(set(held), permission)

    def require(self, username: str, permission: str) -> None:
        """Raise PermissionDenied unless ``is_allowed``."""
        if not self.is_allowed(username, permission):
            raise PermissionDenied(username, permission)

    def who_can(self, permission: str) -> list[str]:
        """Usernames of active users allowed ``permission``, sorted."""
        return [u.username for u in self.users.all() if self.is_allowed(u.username, permission)]
