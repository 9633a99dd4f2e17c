"""Service-level deadlines by ticket priority."""

from datetime import datetime, timedelta

from helpdesk.models import Ticket

#: priority -> (first response within, resolution within)
SLA_TARGETS: dict[str, tuple[timedelta, timedelta]] = {
    "urgent": (timedelta(hours=1), timedelta(hours=4)),
    "high": (timedelta(hours=4), timedelta(hours=24)),
    "normal": (timedelta(hours=8), timedelta(hours=72)),
    "low": (timedelta(hours=24), timedelta(hours=120)),
}


def response_due(ticket: Ticket) -> datetime:
    return ticket.created + SLA_TARGETS[ticket.priority][0]


def resolution_due(ticket: Ticket) -> datetime:
    return ticket.created + SLA_TARGETS[ticket.priority][1]


def is_breached(ticket: Ticket, now: datetime) -> bool:
    """Whether the resolution deadline was missed, as seen at ``now``."""
    due = resolution_due(ticket)
    if ticket.resolved_at is not None:
        return ticket.resolved_at > due
    return now > due


def time_left(ticket: Ticket, now: datetime) -> timedelta:
    """Time until the resolution deadline (negative once breached)."""
    return resolution_due(ticket) - now
