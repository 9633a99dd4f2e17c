"""Activity history.

``ActivityLog`` is a mixin: any object that changes state can record what it
did, list its history, and take back its most recent undoable entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable


@dataclass(frozen=True)
class Activity:
    seq: int
    action: str
    card_id: str
    details: tuple[tuple[str, str], ...] = ()

    def detail(self, name: str, default: str | None = None) -> str | None:
        return dict(self.details).get(name, default)

    def describe(self) -> str:
        extra = ", ".join(f"{k}={v}" for k, v in self.details)
        return f"#{self.seq} {self.action} {self.card_id}" + (f" ({extra})" if extra else "")


class ActivityLog:
    """Append-only history of what happened to an object."""

    _entries: list[Activity] = []

    def _record(self, action: str, card_id: str, **details: object) -> Activity:
        entry = Activity(
            seq=len(self._entries) + 1,
            action=action,
            card_id=card_id,
            details=tuple(sorted((k, str(v)) for k, v in details.items())),
        )
        self._entries.append(entry)
        return entry

    def _take_last(self, actions: Iterable[str]) -> Activity | None:
        """Remove and return the newest entry whose action is in ``actions``."""
        wanted = set(actions)
        for index in range(len(self._entries) - 1, -1, -1):
            if self._entries[index].action in wanted:
                return self._entries.pop(index)
        return None

    def activity(self, action: str | None = None, card_id: str | None = None) -> list[Activity]:
        """History entries, oldest first, optionally filtered."""
        return [
            e
            for e in self._entries
            if (action is None or e.action == action) and (card_id is None or e.card_id == card_id)
        ]
