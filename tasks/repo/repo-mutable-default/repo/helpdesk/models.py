"""The ticket record."""

from dataclasses import dataclass, field
from datetime import datetime

PRIORITIES = ("urgent", "high", "normal", "low")


@dataclass
class Ticket:
    id: int
    subject: str
    requester: str
    priority: str
    created: datetime
    status: str = "new"
    assignee: str | None = None
    watchers: list[str] = field(default_factory=list)
    resolved_at: datetime | None = None

    def __post_init__(self) -> None:
        if self.priority not in PRIORITIES:
            raise ValueError(f"unknown priority {self.priority!r}")

    @property
    def is_open(self) -> bool:
        return self.status not in ("resolved", "closed")

    def label(self) -> str:
        return f"#{self.id} {self.subject}"
