"""Permission strings.

A permission is ``resource:action`` (``"docs:read"``). Grants may use ``*`` as
the action (``"docs:*"``) or as the whole permission (``"*"``, superuser).
"""

from __future__ import annotations


def normalise(permission: str) -> str:
    text = permission.strip().lower()
    if text == "*":
        return text
    resource, sep, action = text.partition(":")
    if not sep or not resource or not action:
        raise ValueError(f"permission must look like 'resource:action', got {permission!r}")
    return f"{resource}:{action}"


def grants(granted: str, requested: str) -> bool:
    """Does holding ``granted`` allow ``requested``?"""
    granted, requested = normalise(granted), normalise(requested)
    if granted == "*" or granted == requested:
        return True
    g_resource, _, g_action = granted.partition(":")
    r_resource, _, _ = requested.partition(":")
    return g_action == "*" and g_resource == r_resource


def any_grants(granted: frozenset[str] | set[str], requested: str) -> bool:
    return any(grants(g, requested) for g in granted)
