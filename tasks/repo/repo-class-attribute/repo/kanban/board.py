"""The board: columns, cards and the operations that move cards around."""

from __future__ import annotations

from kanban.activity import Activity, ActivityLog
from kanban.cards import Card
from kanban.column import Column
from kanban.errors import CardNotFound, ColumnNotFound, NothingToUndo

DEFAULT_COLUMNS = ("todo", "doing", "review", "done")

UNDOABLE = ("add", "move")


class Board(ActivityLog):
    """A kanban board. Card ids are ``<KEY>-<n>``, numbered per board."""

    _next_number = 1

    def __init__(
        self,
        key: str,
        columns: tuple[str, ...] = DEFAULT_COLUMNS,
        wip_limits: dict[str, int] | None = None,
    ) -> None:
        super().__init__()
        if not key.isalnum():
            raise ValueError(f"board key must be alphanumeric, got {key!r}")
        self.key = key.upper()
        limits = wip_limits or {}
        unknown = set(limits) - set(columns)
        if unknown:
            raise ColumnNotFound(sorted(unknown)[0])
        self._columns = {name: Column(name, limits.get(name)) for name in columns}
        self._cards: dict[str, Card] = {}

    # -- lookup -------------------------------------------------------------

    @property
    def columns(self) -> list[str]:
        return list(self._columns)

    def column(self, name: str) -> Column:
        try:
            return self._columns[name]
        except KeyError:
            raise ColumnNotFound(name) from None

    def card(self, card_id: str) -> Card:
        try:
            return self._cards[card_id.upper()]
        except KeyError:
            raise CardNotFound(card_id) from None

    def cards_in(self, column: str) -> list[Card]:
        return [self._cards[cid] for cid in self.column(column).card_ids]

    def find(self, tag: str) -> list[Card]:
        return sorted((c for c in self._cards.values() if c.has_tag(tag)), key=lambda c: c.id)

    # -- changes ------------------------------------------------------------

    def add_card(self, title: str, points: int = 1, tags: tuple[str, ...] = (), column: str | None = None) -> Card:
        target = self.column(column or self.columns[0])
        card = Card(f"{self.key}-{self._next_number}", title, points, frozenset(tags), target.name)
        target.insert(card.id)
        self._next_number += 1
        self._cards[card.id] = card
        self._record("add", card.id, column=target.name)
        return card

    def move(self, card_id: str, to_column: str, position: int | None = None) -> Card:
        card = self.card(card_id)
        target = self.column(to_column)
        if target.name == card.column:
            return card
        source = self.column(card.column)
        target.insert(card.id, position)
        old_position = source.take(card.id)
        self._record("move", card.id, src=source.name, dst=target.name, pos=old_position)
        card.column = target.name
        return card

    def undo(self) -> Activity:
        """Revert the most recent ``add`` or ``move`` on this board."""
        entry = self._take_last(UNDOABLE)
        if entry is None:
            raise NothingToUndo()
        card = self.card(entry.card_id)
        if entry.action == "add":
            self.column(card.column).take(card.id)
            del self._cards[card.id]
        else:
            src = entry.detail("src") or self.columns[0]
            self.column(card.column).take(card.id)
            self.column(src).insert(card.id, int(entry.detail("pos") or 0), force=True)
            card.column = src
        return entry

    def snapshot(self) -> dict[str, list[str]]:
        """Column name -> card ids, in display order."""
        return {name: list(col.card_ids) for name, col in self._columns.items()}

