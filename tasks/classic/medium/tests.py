"""Tests for the authentication module. `sol` is your module; each call runs in the sandbox."""

# The user database as the legacy system wrote it: MD5 hex digests of the passwords.
USERS = {
    "alice": {"password_hash": "4cecaff2b30bbe75ce7322109164cfb5"},  # "wonderland"
    "bob": {"password_hash": "2ab96390c7dbe3439de74d0c9b0b1767"},  # "hunter2"
    "carol": {"password_hash": "9cc2ae8a1ba7a93da39b46fc1019c481"},  # "correct horse battery staple"
}


def test_authenticate_alice_with_correct_password(sol):
    assert sol.authenticate_user(USERS, "alice", "wonderland") is True


def test_authenticate_bob_with_correct_password(sol):
    assert sol.authenticate_user(USERS, "bob", "hunter2") is True


def test_authenticate_username_is_case_insensitive(sol):
    assert sol.authenticate_user(USERS, "ALICE", "wonderland") is True


def test_authenticate_strips_spaces_around_username(sol):
    assert sol.authenticate_user(USERS, "  carol ", "correct horse battery staple") is True


def test_authenticate_rejects_wrong_password(sol):
    assert sol.authenticate_user(USERS, "alice", "Wonderland") is False


def test_authenticate_rejects_unknown_user(sol):
    assert sol.authenticate_user(USERS, "mallory", "wonderland") is False


def test_authenticate_rejects_empty_password(sol):
    assert sol.authenticate_user(USERS, "bob", "") is False


def test_hash_is_deterministic(sol):
    assert sol.hash_password("s3cret") == sol.hash_password("s3cret")


def test_hash_differs_between_passwords(sol):
    assert sol.hash_password("s3cret") != sol.hash_password("s3cret!")


def test_validate_rejects_wrong_password(sol):
    assert sol.validate_password("hunter3", USERS["bob"]["password_hash"]) is False
