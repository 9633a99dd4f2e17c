"""Windowing over sequences.

All functions accept any sequence and return lists of tuples so results can be
stored or compared without worrying about lazy iterators.
"""

from __future__ import annotations

from typing import Sequence, TypeVar

T = TypeVar("T")


def _check_size(size: int) -> None:
    if size < 1:
        raise ValueError(f"window size must be at least 1, got {size}")


def sliding(items: Sequence[T], size: int, step: int = 1) -> list[tuple[T, ...]]:
    """Overlapping windows of ``size`` items, starting every ``step`` items.

    Only full windows are returned::

        sliding([1, 2, 3, 4], 2) == [(1, 2), (2, 3), (3, 4)]
    """
    _check_size(size)
    if step < 1:
        raise ValueError(f"step must be at least 1, got {step}")
    return [tuple(items[start : start + size]) for start in range(0, len(items) - size, step)]


def tumbling(items: Sequence[T], size: int, keep_partial: bool = False) -> list[tuple[T, ...]]:
    """Consecutive non-overlapping windows; a short trailing window is kept on request."""
    _check_size(size)
    chunks = [tuple(items[start : start + size]) for start in range(0, len(items), size)]
    if chunks and len(chunks[-1]) < size and not keep_partial:
        chunks.pop()
    return chunks


def last_n(items: Sequence[T], n: int) -> list[T]:
    """The ``n`` most recent items (all of them when there are fewer than ``n``)."""
    if n < 0:
        raise ValueError(f"n must not be negative, got {n}")
    if n == 0:
        return []
    return list(items[-n:])
