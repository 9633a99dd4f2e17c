import pytest

from acl import PermissionDenied, RoleNotFound, UserNotFound


def test_permissions_for(policy):
    assert policy.permissions_for("alice") == ["docs:read", "docs:write", "wiki:*", "wiki:read"]
    assert policy.permissions_for("bob") == ["docs:read", "wiki:read"]


@pytest.mark.parametrize(
    "user, permission, allowed",
    [
        ("alice", "wiki:delete", True),
        ("alice", "docs:delete", False),
        ("bob", "docs:read", True),
        ("bob", "docs:write", False),
        ("carol", "billing:refund", True),
    ],
)
def test_is_allowed(policy, user, permission, allowed):
    assert policy.is_allowed(user, permission) is allowed


def test_unknown_user_is_not_allowed(policy):
    assert policy.is_allowed("mallory", "docs:read") is False
    assert policy.who_can("docs:write") == ["alice", "carol"]


def test_require_unknown_user_is_denied(policy):
    with pytest.raises(PermissionDenied) as excinfo:
        policy.require("mallory", "docs:read")
    assert excinfo.value.username == "mallory"


def test_require_denies_and_allows(policy):
    policy.require("bob", "wiki:read")
    with pytest.raises(PermissionDenied):
        policy.require("bob", "wiki:edit")


def test_inactive_user_loses_access(policy):
    policy.users.deactivate("alice")
    assert policy.is_allowed("alice", "docs:read") is False
    assert policy.who_can("docs:write") == ["carol"]


def test_grant_and_revoke(policy):
    policy.grant("bob", "Editor")
    assert policy.is_allowed("bob", "docs:write")
    policy.revoke("bob", "editor")
    assert not policy.is_allowed("bob", "docs:write")
    with pytest.raises(RoleNotFound):
        policy.grant("bob", "owner")


def test_grant_to_unknown_user(policy):
    with pytest.raises(UserNotFound):
        policy.grant("mallory", "reader")
