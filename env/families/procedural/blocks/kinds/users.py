"""The ``users`` kind: customer accounts, login and lockout.

``build`` writes the module a service with this kind holds and the tests every such service carries;
the tests that reveal a particular defect live with the defect, in ``bugs``."""

from __future__ import annotations

from env.families.procedural.blocks.world import Module, World, block, q, render, t


def build(w: World, present: frozenset[str]) -> Module:
    acc = w.accounts
    rows = [(x.email, x.name, x.password, x.tier) for x in acc]
    new_password = "n" * w.password_min
    source = render(
        '''
        """Customer accounts of $pkg: registration, login with a lockout, tiers.

            register("new@example.org", "New", "a long password")
            login("NEW@example.org", "a long password")     # True: e-mail addresses ignore case
            tier_of("new@example.org")                      # "standard"
        """

        from __future__ import annotations

        import hashlib
        import logging

        from $pkg import audit, settings

        log = logging.getLogger(__name__)

        # (email, name, password, tier) of the accounts every environment starts with
        ACCOUNTS = $rows

        _users: dict[str, dict[str, str]] = {}
        _failures: dict[str, int] = {}


        class UserError(Exception):
            """A registration or login that cannot go through."""


        class AccountLocked(UserError):
            """Too many failed logins in a row."""


        def normalise(email: str) -> str:
            return email.strip().lower()


        def _digest(password: str, salt: str) -> str:
            return hashlib.sha256(f"{salt}:{password}".encode()).hexdigest()


        def _store(email: str, name: str, password: str, tier: str) -> str:
            key = normalise(email)
            salt = hashlib.sha256(key.encode()).hexdigest()[:12]
            _users[key] = {"name": name, "salt": salt, "hash": _digest(password, salt), "tier": tier}
            return key


        def register(email: str, name: str, password: str, tier: str = "standard") -> str:
            key = normalise(email)
            if key in _users:
                log.warning("registration refused: %s already exists", key)
                raise UserError(f"{key} is already registered")
            if len(password) < settings.get("password_min_length"):
                log.warning("registration refused for %s: password too short", key)
                raise UserError("password too short")
            _store(key, name, password, tier)
            audit.record("user.registered", key)
            log.info("registered %s (%s)", key, tier)
            return key


        def login(email: str, password: str) -> bool:
            key = normalise(email)
            limit = settings.get("max_login_failures")
            if _failures.get(key, 0) >= limit:
                log.warning("login refused for %s: locked after %d failures", key, limit)
                raise AccountLocked(key)
            user = _users.get(key)
            if user is None or user["hash"] != _digest(password, user["salt"]):
                _failures[key] = _failures.get(key, 0) + 1
                log.warning("failed login for %s (%d of %d)", key, _failures[key], limit)
                audit.record("user.login_failed", key)
                return False
            _failures.pop(key, None)
            audit.record("user.login", key)
            return True


        def unlock(email: str) -> None:
            key = normalise(email)
            _failures.pop(key, None)
            log.info("account %s unlocked", key)


        def tier_of(email: str) -> str:
            return _users[normalise(email)]["tier"]


        def profile(email: str) -> dict[str, str]:
            key = normalise(email)
            user = _users[key]
            return {"email": key, "name": user["name"], "tier": user["tier"]}


        def reset() -> None:
            _users.clear()
            _failures.clear()
            for email, name, password, tier in ACCOUNTS:
                _store(email, name, password, tier)


        reset()
        ''',
        pkg=w.pkg, rows=block(rows, ")"),
    )
    new = f"new.customer@{acc[0].email.split('@')[1]}"
    tests = [
        t("test_register_and_log_in", f"""
            assert users.register({q(new.title())}, "New Customer", {q(new_password)}, "silver") == {q(new)}
            assert users.login({q(new.upper())}, {q(new_password)}) is True
            assert users.profile({q(new)}) == {{"email": {q(new)}, "name": "New Customer", "tier": "silver"}}
        """, ("users",)),
        t("test_short_passwords_and_duplicates_are_refused", f"""
            with pytest.raises(users.UserError):
                users.register({q(new)}, "New Customer", {q("n" * (w.password_min - 1))})
            with pytest.raises(users.UserError):
                users.register({q(acc[1].email)}, {q(acc[1].name)}, {q(new_password)})
        """, ("users",)),
        t("test_wrong_password_fails_and_is_audited", f"""
            assert users.login({q(acc[1].email)}, "wrong password") is False
            assert audit.last("user.login_failed")["actor"] == {q(acc[1].email)}
        """, ("users", "audit")),
        t("test_unlock_after_failures", f"""
            for _ in range({w.max_failures}):
                users.login({q(acc[2].email)}, "wrong password")
            users.unlock({q(acc[2].email)})
            assert users.login({q(acc[2].email)}, {q(acc[2].password)}) is True
        """, ("users",)),
        t("test_tiers_of_the_seeded_accounts", f"""
            assert users.tier_of({q(acc[0].email)}) == {q(acc[0].tier)}
            assert users.tier_of({q(acc[1].email)}) == {q(acc[1].tier)}
        """, ("users",)),
    ]
    return Module(source, tests)
