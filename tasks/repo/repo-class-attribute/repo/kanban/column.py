"""Columns hold card ids in display order and enforce WIP limits."""

from __future__ import annotations

from kanban.errors import WipLimitExceeded


class Column:
    def __init__(self, name: str, wip_limit: int | None = None) -> None:
        if wip_limit is not None and wip_limit < 1:
            raise ValueError(f"WIP limit must be at least 1, got {wip_limit}")
        self.name = name
        self.wip_limit = wip_limit
        self.card_ids: list[str] = []

    @property
    def is_full(self) -> bool:
        return self.wip_limit is not None and len(self.card_ids) >= self.wip_limit

    def insert(self, card_id: str, position: int | None = None, *, force: bool = False) -> None:
        """Put ``card_id`` at ``position`` (default: bottom). ``force`` ignores the WIP limit."""
        if self.is_full and not force:
            raise WipLimitExceeded(self.name, self.wip_limit or 0)
        if position is None:
            self.card_ids.append(card_id)
        else:
            self.card_ids.insert(position, card_id)

    def take(self, card_id: str) -> int:
        """Remove ``card_id`` and return the position it had."""
        position = self.card_ids.index(card_id)
        del self.card_ids[position]
        return position

    def __len__(self) -> int:
        return len(self.card_ids)

    def __repr__(self) -> str:
        limit = f"/{self.wip_limit}" if self.wip_limit else ""
        return f"Column({self.name!r}, {len(self.card_ids)}{limit})"
