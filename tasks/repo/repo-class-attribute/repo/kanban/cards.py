"""Cards: the unit of work on a board."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Card:
    id: str
    title: str
    points: int = 1
    tags: frozenset[str] = field(default_factory=frozenset)
    column: str = "todo"

    def __post_init__(self) -> None:
        if not self.title.strip():
            raise ValueError("a card needs a title")
        if self.points < 0:
            raise ValueError(f"story points cannot be negative: {self.points}")
        self.tags = frozenset(t.strip().lower() for t in self.tags if t.strip())

    def has_tag(self, tag: str) -> bool:
        return tag.strip().lower() in self.tags


def parse_tags(text: str) -> frozenset[str]:
    """``"ui, Backend ,,ui"`` -> ``frozenset({"ui", "backend"})``."""
    return frozenset(part.strip().lower() for part in text.split(",") if part.strip())
