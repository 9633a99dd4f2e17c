"""Held-out cases for the authentication module: drawn per episode from the server's secret, never shown.

    cases(random.Random(1))   # [(case id, fn(sol)), ...]

Other users, passwords and digests than the visible tests': a user database written the way the legacy
system wrote it (the MD5 hex digest of each password, computed here), then logins with the right password
(as stored, in other letter case, with spaces around the name), wrong passwords, unknown users, empty
passwords, and the hash and validation functions on their own.
"""

import hashlib
import random
import string

_NAME = string.ascii_lowercase
_PASSWORD = string.ascii_letters + string.digits + " !#$%&*+-.:=?@_"


def _word(rng, alphabet, low, high):
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(low, high)))


def _md5(password):
    return hashlib.md5(password.encode("utf-8")).hexdigest()


def _other(rng, password):
    """The password with one character changed (never equal to it)."""
    i = rng.randrange(len(password))
    return password[:i] + rng.choice([c for c in _PASSWORD if c != password[i]]) + password[i + 1 :]


def cases(rng: random.Random):
    names = []
    while len(names) < 4:
        name = _word(rng, _NAME, 3, 10)
        if name not in names and name not in ("alice", "bob", "carol", "mallory"):
            names.append(name)
    passwords = [_word(rng, _PASSWORD, 1, 24) for _ in names]
    users = {n: {"password_hash": _md5(p)} for n, p in zip(names, passwords, strict=True)}
    (a, pa), (b, pb), (c, pc), (d, pd) = zip(names, passwords, strict=True)
    unknown = _word(rng, _NAME, 3, 10) + "x"
    probe = _word(rng, _PASSWORD, 1, 24)
    wrong_d = _other(rng, pd)

    def login(name, password, expected):
        return lambda sol: _assert(sol.authenticate_user(users, name, password) is expected)

    checks = [
        ("login", login(a, pa, True)),
        ("login-other", login(b, pb, True)),
        ("login-upper", login(c.upper(), pc, True)),
        ("login-spaces", login(" " * rng.randint(1, 3) + d + " " * rng.randint(1, 3), pd, True)),
        ("wrong-password", login(a, _other(rng, pa), False)),
        ("wrong-user", login(b, pa if pa != pb else _other(rng, pa), False)),
        ("unknown-user", login(unknown, pa, False)),
        ("empty-password", login(c, "", False)),
        ("validate", lambda sol: _assert(sol.validate_password(pd, users[d]["password_hash"]) is True)),
        ("validate-wrong", lambda sol: _assert(sol.validate_password(wrong_d, users[d]["password_hash"]) is False)),
        ("hash", lambda sol: _assert(sol.hash_password(probe) == _md5(probe))),
    ]
    return [(f"held-out::{name}", fn) for name, fn in checks]


def _assert(ok):
    assert ok, "the specification's answer"
