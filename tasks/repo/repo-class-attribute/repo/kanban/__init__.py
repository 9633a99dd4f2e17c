"""kanban: boards, columns, cards, activity history and flow metrics."""

from kanban.activity import Activity
from kanban.board import DEFAULT_COLUMNS, Board
from kanban.cards import Card
from kanban.errors import CardNotFound, ColumnNotFound, KanbanError, NothingToUndo, WipLimitExceeded

__all__ = [
    "Activity",
    "Board",
    "Card",
    "CardNotFound",
    "ColumnNotFound",
    "DEFAULT_COLUMNS",
    "KanbanError",
    "NothingToUndo",
    "WipLimitExceeded",
]
