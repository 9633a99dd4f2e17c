import pytest

from acl import AclError, DuplicateUser, UserNotFound, UserStore


@pytest.fixture
def store():
    s = UserStore()
    s.add("Alice", "Alice Liddell")
    s.add("bob")
    return s


def test_lookup_is_case_insensitive(store):
    user = store.get(" ALICE ")
    assert user.username == "alice"
    assert user.display_name == "Alice Liddell"
    assert store.get("bob").display_name == "bob"
    assert store.exists("Bob")


def test_duplicate_user_rejected(store):
    with pytest.raises(DuplicateUser):
        store.add("alice")


def test_remove_unknown_raises_user_not_found(store):
    with pytest.raises(UserNotFound) as excinfo:
        store.remove("mallory")
    assert excinfo.value.username == "mallory"
    assert len(store) == 2


def test_get_unknown_raises_user_not_found(store):
    with pytest.raises(UserNotFound) as excinfo:
        store.get("mallory")
    assert excinfo.value.username == "mallory"


def test_deactivate_unknown_is_an_acl_error(store):
    with pytest.raises(AclError):
        store.deactivate("mallory")


def test_deactivate_hides_user_from_listing(store):
    store.deactivate("bob")
    assert [u.username for u in store.all()] == ["alice"]
    assert [u.username for u in store.all(include_inactive=True)] == ["alice", "bob"]
    assert store.get("bob").active is False
