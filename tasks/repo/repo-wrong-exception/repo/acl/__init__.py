"""acl: users, roles and permission checks."""

from acl.errors import AclError, DuplicateUser, PermissionDenied, RoleNotFound, UserNotFound
from acl.policy import Policy
from acl.roles import Role, RoleRegistry
from acl.users import User, UserStore

__all__ = [
    "AclError",
    "DuplicateUser",
    "PermissionDenied",
    "Policy",
    "Role",
    "RoleNotFound",
    "RoleRegistry",
    "User",
    "UserNotFound",
    "UserStore",
]
