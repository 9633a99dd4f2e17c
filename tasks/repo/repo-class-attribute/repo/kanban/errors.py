"""Exceptions raised by kanban."""


class KanbanError(Exception):
    """Base class for kanban errors."""


class CardNotFound(KanbanError, LookupError):
    def __init__(self, card_id: str):
        super().__init__(f"no card {card_id!r} on this board")
        self.card_id = card_id


class ColumnNotFound(KanbanError, LookupError):
    def __init__(self, column: str):
        super().__init__(f"no column named {column!r}")
        self.column = column


class WipLimitExceeded(KanbanError):
    def __init__(self, column: str, limit: int):
        super().__init__(f"column {column!r} is at its WIP limit of {limit}")
        self.column = column
        self.limit = limit


class NothingToUndo(KanbanError):
    def __init__(self) -> None:
        super().__init__("there is nothing to undo")
