"""The ``audit`` kind: the audit trail.

``build`` writes the module a service with this kind holds and the tests every such service carries;
the tests that reveal a particular defect live with the defect, in ``bugs``."""

from __future__ import annotations

from env.families.procedural.blocks.world import Module, World, q, render, t


def build(w: World, present: frozenset[str]) -> Module:
    a, b = w.accounts[0].email, w.accounts[1].email
    source = render(
        '''
        """The audit trail of $pkg: who did what, in order.

            record("order.placed", "ada@example.org", {"order": "PH-00001"})
            entries(action="order.placed")     # copies of the matching entries, oldest first
            entries(area="order")              # everything about orders
            last("order.placed")               # the newest one, or None
        """

        from __future__ import annotations

        import logging
        from typing import Any

        log = logging.getLogger(__name__)

        _ENTRIES: list[dict[str, Any]] = []


        def record(action: str, actor: str, details: dict[str, Any] | None = None, tags: list[str] | None = None) -> dict[str, Any]:
            """Append one entry (``details`` plus seq, action, actor and tags) and return it.

            Every entry is tagged with the area of its action ("order" for "order.placed").
            """
            tags = [] if tags is None else tags
            tags.append(action.split(".")[0])
            entry = dict(details or {})
            entry.update(seq=len(_ENTRIES) + 1, action=action, actor=actor, tags=tags)
            _ENTRIES.append(entry)
            log.info("audit #%d: %s by %s", entry["seq"], action, actor)
            return entry


        def entries(action: str | None = None, actor: str | None = None, area: str | None = None) -> list[dict[str, Any]]:
            """Copies of the entries matching ``action``, ``actor`` and ``area`` (None matches any), oldest first."""
            return [
                dict(entry)
                for entry in _ENTRIES
                if (action is None or entry["action"] == action)
                and (actor is None or entry["actor"] == actor)
                and (area is None or area in entry["tags"])
            ]


        def last(action: str) -> dict[str, Any] | None:
            found = entries(action)
            return found[-1] if found else None


        def reset() -> None:
            _ENTRIES.clear()
            log.info("audit trail cleared")
        ''',
        pkg=w.pkg,
    )
    tests = [
        t("test_record_returns_the_entry", f"""
            entry = audit.record("user.login", {q(a)}, {{"ip": "10.0.0.7"}})
            assert (entry["seq"], entry["action"], entry["actor"], entry["ip"]) == (1, "user.login", {q(a)}, "10.0.0.7")
        """, ("audit",)),
        t("test_entries_filter_by_action_and_actor", f"""
            audit.record("login", {q(a)})
            audit.record("login", {q(b)})
            audit.record("logout", {q(a)})
            assert [entry["seq"] for entry in audit.entries(action="login")] == [1, 2]
            assert [entry["action"] for entry in audit.entries(actor={q(a)})] == ["login", "logout"]
            assert audit.last("logout")["actor"] == {q(a)}
            assert audit.last("refund") is None
        """, ("audit",)),
    ]
    return Module(source, tests)
