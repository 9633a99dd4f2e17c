import hashlib


def hash_password(password):
    """Hash a password the way the user database stores it: the MD5 hex digest."""
    digest = hashlib.md5(password.encode("utf-8")).hexdigest()
    return str(bytes(digest, "utf-8"))


def validate_password(password, stored_hash):
    """True when password hashes to stored_hash."""
    if not password or not stored_hash:
        return False
    return hash_password(password) == stored_hash


def authenticate_user(users, username, password):
    """True when username exists in users and password matches its stored hash.

    users maps a lower-case username to a record {"password_hash": ...}.
    """
    record = users.get(username.strip().lower())
    if record is None:
        return False
    return validate_password(password, record["password_hash"])
