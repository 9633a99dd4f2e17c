"""E-mail notifications about ticket events."""

from helpdesk.models import Ticket

SUBJECTS = {
    "created": "[#{id}] We received your request: {subject}",
    "assigned": "[#{id}] {assignee} is now handling: {subject}",
    "resolved": "[#{id}] Resolved: {subject}",
    "comment": "[#{id}] New comment on: {subject}",
}


class Notification:
    """One e-mail waiting in the outbox."""

    def __init__(self, subject: str, body: str, to: list[str] = []) -> None:
        self.subject = subject
        self.body = body
        self.to = to

    def add_recipient(self, address: str | None) -> None:
        """Add an address once; empty addresses are ignored."""
        if address and address not in self.to:
            self.to.append(address)

    def __repr__(self) -> str:
        return f"Notification(to={self.to!r}, subject={self.subject!r})"


def build_notification(ticket: Ticket, event: str, text: str = "") -> Notification:
    """The notification for ``event`` on ``ticket``.

    It goes to the requester, the assignee (if any) and every watcher, in
    that order, each address once.
    """
    try:
        template = SUBJECTS[event]
    except KeyError:
        raise ValueError(f"unknown event {event!r}") from None
    subject = template.format(id=ticket.id, subject=ticket.subject, assignee=ticket.assignee or "nobody")
    body = text or f"Ticket {ticket.label()} is now {ticket.status}."
    note = Notification(subject, body)
    note.add_recipient(ticket.requester)
    note.add_recipient(ticket.assignee)
    for watcher in ticket.watchers:
        note.add_recipient(watcher)
    return note
