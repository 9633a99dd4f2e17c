"""In-memory ticket store with an outbox of notifications."""

from datetime import datetime

from helpdesk.errors import TicketNotFound
from helpdesk.models import Ticket
from helpdesk.notify import Notification, build_notification
from helpdesk.workflow import transition


class TicketStore:
    def __init__(self) -> None:
        self._tickets: dict[int, Ticket] = {}
        self._next_id = 1
        self.outbox: list[Notification] = []

    def open(self, subject: str, requester: str, priority: str = "normal", *, created: datetime) -> Ticket:
        """Create a ticket and queue the confirmation to the requester."""
        ticket = Ticket(self._next_id, subject, requester, priority, created)
        self._tickets[ticket.id] = ticket
        self._next_id += 1
        self.outbox.append(build_notification(ticket, "created"))
        return ticket

    def get(self, ticket_id: int) -> Ticket:
        try:
            return self._tickets[ticket_id]
        except KeyError:
            raise TicketNotFound(ticket_id) from None

    def __len__(self) -> int:
        return len(self._tickets)

    def assign(self, ticket_id: int, agent: str) -> Ticket:
        ticket = self.get(ticket_id)
        transition(ticket, "assigned")
        ticket.assignee = agent
        self.outbox.append(build_notification(ticket, "assigned"))
        return ticket

    def watch(self, ticket_id: int, address: str) -> None:
        ticket = self.get(ticket_id)
        if address not in ticket.watchers:
            ticket.watchers.append(address)

    def comment(self, ticket_id: int, text: str) -> None:
        self.outbox.append(build_notification(self.get(ticket_id), "comment", text))

    def resolve(self, ticket_id: int, at: datetime) -> Ticket:
        ticket = self.get(ticket_id)
        transition(ticket, "resolved")
        ticket.resolved_at = at
        self.outbox.append(build_notification(ticket, "resolved"))
        return ticket

    def search(self, status: str | None = None, assignee: str | None = None, priority: str | None = None) -> list[Ticket]:
        """Tickets matching every given criterion, oldest first."""
        found = []
        for ticket in self._tickets.values():
            if status is not None and ticket.status != status:
                continue
            if assignee is not None and ticket.assignee != assignee:
                continue
            if priority is not None and ticket.priority != priority:
                continue
            found.append(ticket)
        return found

    def drain_outbox(self) -> list[Notification]:
        """Hand the queued notifications to the mailer and empty the outbox."""
        queued, self.outbox = self.outbox, []
        return queued
