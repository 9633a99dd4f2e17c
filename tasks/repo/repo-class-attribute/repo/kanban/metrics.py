"""Flow metrics computed from a board's cards and activity history."""

from __future__ import annotations

from collections import Counter

from kanban.board import Board


def points_by_column(board: Board) -> dict[str, int]:
    """Total story points currently sitting in each column."""
    return {name: sum(c.points for c in board.cards_in(name)) for name in board.columns}


def throughput(board: Board, done_column: str | None = None) -> int:
    """How many times a card was moved into the last (or given) column."""
    done = done_column or board.columns[-1]
    return sum(1 for e in board.activity("move") if e.detail("dst") == done)


def flow_counts(board: Board) -> dict[str, int]:
    """Number of arrivals per column (additions and moves), every column listed."""
    arrivals: Counter[str] = Counter()
    for entry in board.activity():
        column = entry.detail("column") if entry.action == "add" else entry.detail("dst")
        if column:
            arrivals[column] += 1
    return {name: arrivals.get(name, 0) for name in board.columns}


def bottleneck(board: Board) -> str | None:
    """The non-final column holding the most points, or None when the board is empty."""
    loads = points_by_column(board)
    candidates = [(points, name) for name, points in list(loads.items())[:-1] if points > 0]
    if not candidates:
        return None
    return max(candidates, key=lambda item: (item[0], -board.columns.index(item[1])))[1]
