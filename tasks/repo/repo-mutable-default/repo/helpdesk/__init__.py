"""helpdesk: tickets, workflow, SLA deadlines and notifications."""

from helpdesk.errors import HelpdeskError, TicketNotFound, WorkflowError
from helpdesk.models import Ticket
from helpdesk.notify import Notification, build_notification
from helpdesk.store import TicketStore

__all__ = [
    "HelpdeskError",
    "Notification",
    "Ticket",
    "TicketNotFound",
    "TicketStore",
    "WorkflowError",
    "build_notification",
]
