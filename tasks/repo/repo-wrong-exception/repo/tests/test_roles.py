import pytest

from acl import RoleNotFound, RoleRegistry
from acl.errors import RoleCycle
from acl.perms import grants, normalise


def test_normalise_and_wildcards():
    assert normalise(" Docs:READ ") == "docs:read"
    assert grants("docs:*", "docs:delete")
    assert not grants("docs:*", "wiki:read")
    assert grants("*", "billing:refund")
    with pytest.raises(ValueError):
        normalise("docs")


def test_inheritance():
    roles = RoleRegistry()
    roles.define("reader", ("docs:read",))
    roles.define("editor", ("docs:write",), inherits=("Reader",))
    assert roles.effective_permissions("editor") == frozenset({"docs:read", "docs:write"})
    assert roles.names() == ["editor", "reader"]


def test_unknown_parent_and_role():
    roles = RoleRegistry()
    with pytest.raises(RoleNotFound):
        roles.define("editor", ("docs:write",), inherits=("ghost",))
    with pytest.raises(RoleNotFound):
        roles.get("ghost")


def test_cycle_is_rejected_and_rolled_back():
    roles = RoleRegistry()
    roles.define("a", ("x:1",))
    roles.define("b", ("x:2",), inherits=("a",))
    with pytest.raises(RoleCycle):
        roles.define("a", ("x:3",), inherits=("b",))
    assert roles.effective_permissions("b") == frozenset({"x:1", "x:2"})
