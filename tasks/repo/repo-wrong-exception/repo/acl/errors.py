"""Exception hierarchy: everything the library raises on purpose is an AclError."""


class AclError(Exception):
    """Base class for access-control errors."""


class UserNotFound(AclError):
    def __init__(self, username: str):
        super().__init__(f"no such user: {username!r}")
        self.username = username


class RoleNotFound(AclError):
    def __init__(self, role: str):
        super().__init__(f"no such role: {role!r}")
        self.role = role


class DuplicateUser(AclError):
    def __init__(self, username: str):
        super().__init__(f"user already exists: {username!r}")
        self.username = username


class RoleCycle(AclError):
    def __init__(self, chain: list[str]):
        super().__init__("role inheritance cycle: " + " -> ".join(chain))
        self.chain = chain


class PermissionDenied(AclError):
    def __init__(self, username: str, permission: str):
        super().__init__(f"{username!r} may not {permission!r}")
        self.username = username
        self.permission = permission
