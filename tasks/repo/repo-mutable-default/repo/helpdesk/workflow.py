"""Allowed status changes of a ticket.

    new -> assigned -> pending <-> assigned -> resolved -> closed
                              resolved -> assigned (reopened)
"""

from helpdesk.errors import WorkflowError
from helpdesk.models import Ticket

TRANSITIONS: dict[str, frozenset[str]] = {
    "new": frozenset({"assigned", "closed"}),
    "assigned": frozenset({"pending", "resolved"}),
    "pending": frozenset({"assigned", "resolved"}),
    "resolved": frozenset({"assigned", "closed"}),
    "closed": frozenset(),
}


def can_transition(current: str, target: str) -> bool:
    return target in TRANSITIONS.get(current, frozenset())


def transition(ticket: Ticket, target: str) -> None:
    """Move ``ticket`` to status ``target`` or raise :class:`WorkflowError`."""
    if not can_transition(ticket.status, target):
        raise WorkflowError(f"ticket #{ticket.id} cannot go from {ticket.status!r} to {target!r}")
    ticket.status = target
