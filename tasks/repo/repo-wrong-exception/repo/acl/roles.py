"""Roles: named bundles of permissions that may inherit from other roles."""

from __future__ import annotations

from dataclasses import dataclass

from acl.errors import RoleCycle, RoleNotFound
from acl.perms import normalise


@dataclass(frozen=True)
class Role:
    name: str
    permissions: frozenset[str]
    inherits: tuple[str, ...] = ()


class RoleRegistry:
    def __init__(self) -> None:
        self._roles: dict[str, Role] = {}

    def define(self, name: str, permissions: tuple[str, ...] = (), inherits: tuple[str, ...] = ()) -> Role:
        """Create or redefine a role. Parents must already exist."""
        name = name.strip().lower()
        parents = tuple(p.strip().lower() for p in inherits)
        for parent in parents:
            self.get(parent)
        role = Role(name, frozenset(normalise(p) for p in permissions), parents)
        previous = self._roles.get(name)
        self._roles[name] = role
        try:
            self.effective_permissions(name)
        except RoleCycle:
            if previous is None:
                del self._roles[name]
            else:
                self._roles[name] = previous
            raise
        return role

    def get(self, name: str) -> Role:
        try:
            return self._roles[name.strip().lower()]
        except KeyError:
            raise RoleNotFound(name) from None

    def names(self) -> list[str]:
        return sorted(self._roles)

    def effective_permissions(self, name: str) -> frozenset[str]:
        """The role's own permissions plus everything it inherits."""
        result: set[str] = set()
        self._collect(name.strip().lower(), [], result)
        return frozenset(result)

    def _collect(self, name: str, chain: list[str], out: set[str]) -> None:
        if name in chain:
            raise RoleCycle(chain + [name])
        role = self.get(name)
        out.update(role.permissions)
        for parent in role.inherits:
            self._collect(parent, chain + [name], out)
