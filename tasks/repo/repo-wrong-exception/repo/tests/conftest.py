import pytest

from acl import Policy, RoleRegistry, UserStore


@pytest.fixture
def policy():
    roles = RoleRegistry()
    roles.define("reader", ("docs:read", "wiki:read"))
    roles.define("editor", ("docs:write", "wiki:*"), inherits=("reader",))
    roles.define("admin", ("*",))
    users = UserStore()
    users.add("Alice", "Alice Liddell", roles=("editor",))
    users.add("bob", roles=("reader",))
    users.add("carol", roles=("admin",))
    return Policy(users, roles)
